"""Termination listens to billing: a payment posted (at the counter, online, by API or from an imported file)
may pay a case in full, which closes it and cancels its pending orders."""

from .services.cases import cases_close_paid


def on_payment_posted(sender, *, account_ids, **kwargs) -> None:
    cases_close_paid(account_ids=account_ids)
