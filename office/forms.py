"""The back office's forms: each calls one service and shows its refusals under their fields."""

from django import forms

from accounts.models import Account
from accounts.selectors import account_find
from billing.fees import fees_in_force
from billing.services.charges import charge_figures_parse
from core.admin import DATE_WIDGET, LINE_WIDGET, TEXT_WIDGET, DayField, ServiceForm
from core.clock import today
from core.errors import ApplicationError
from core.money import fmt_dollars

from .models import DayClose
from .services import (
    day_close,
    day_reopen_decide,
    day_reopen_request,
    invoice_create,
    refund_decide,
    refund_request,
    transfer_make,
)


def _account(typed: str, *, field: str) -> Account:
    account = account_find(typed or "")
    if account is None:
        raise ApplicationError(f"no account '{typed}' (type its number, with or without the dash)", field=field)
    return account


class RefundForm(ServiceForm):
    submit = "Ask a supervisor to approve"
    aliases = {"requested_on": "requested_on"}
    account_no = forms.CharField(label="Account number", max_length=20)
    amount = forms.DecimalField(label="Refund amount", max_digits=12, decimal_places=2,
                                help_text="At most the account's credit.")
    # Not required here: the service names a missing reason with every other problem at once.
    reason = forms.CharField(label="Reason", required=False, widget=TEXT_WIDGET,
                             help_text="Internal: why the credit is paid back.")
    payee_name = forms.CharField(label="Make the check out to", max_length=200, required=False, widget=LINE_WIDGET,
                                 help_text="Blank: the owner.")
    payee_address = forms.CharField(label="Mail the check to", required=False, widget=TEXT_WIDGET,
                                    help_text="Blank: the owner's mailing address.")
    requested_on = DayField(label="Asked on", initial=today, doing="asked for")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        self.refund = refund_request(account=_account(d["account_no"], field="account_no"), amount=d["amount"],
                                     reason=d["reason"], as_of=d["requested_on"], actor=actor,
                                     payee_name=d["payee_name"], payee_address=d["payee_address"])
        return (f"Refund {self.refund.number} of {fmt_dollars(self.refund.amount.amount)} to "
                f"{self.refund.payee_name} waits for a supervisor's approval.")


class RefundDecisionForm(ServiceForm):
    whole_fields = ("", "status", "actor", "amount")
    decision = forms.ChoiceField(label="Decision", choices=(("approve", "Approve: post it and put it on the check "
                                                                        "register"), ("refuse", "Refuse")),
                                 widget=forms.RadioSelect)
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET, help_text="Required to refuse.")
    refunded_on = DayField(label="Refunded on", initial=today, doing="refunded")
    submit = "Record the decision"

    def __init__(self, *args, refund, **kwargs):
        self.refund = refund
        super().__init__(*args, **kwargs)

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        refund = refund_decide(refund=self.refund, approve=d["decision"] == "approve", note=d["note"],
                               as_of=d["refunded_on"], actor=actor)
        if refund.status == refund.Status.APPROVED:
            return (f"Refund {refund.number} approved: {fmt_dollars(refund.amount.amount)} posted on "
                    f"{refund.refunded_on} and on the check register for accounts payable.")
        return f"Refund {refund.number} refused."


class RangeForm(forms.Form):
    start = forms.DateField(label="From", widget=DATE_WIDGET, initial=today)
    end = forms.DateField(label="To", widget=DATE_WIDGET, initial=today)

    def clean(self):
        data = super().clean()
        if data.get("start") and data.get("end") and data["end"] < data["start"]:
            self.add_error("end", f"{data['end']} is before {data['start']}")
        return data


class TransferForm(ServiceForm):
    submit = "Move the balance"
    from_account_no = forms.CharField(label="From account (closed)", max_length=20)
    to_account_no = forms.CharField(label="To the owner's account", max_length=20)
    reason = forms.CharField(label="Reason", required=False, widget=TEXT_WIDGET,
                             help_text="Internal: kept for the audit.")
    transferred_on = DayField(label="On", initial=today, doing="transferred")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        errors = []
        accounts = {}
        for field in ("from_account_no", "to_account_no"):
            try:
                accounts[field] = _account(d[field], field=field)
            except ApplicationError as exc:
                errors.extend(exc.errors)
        if errors:
            raise ApplicationError(errors=errors)
        self.transfer = transfer_make(from_account=accounts["from_account_no"], to_account=accounts["to_account_no"],
                                      as_of=d["transferred_on"], reason=d["reason"], actor=actor)
        t = self.transfer
        return (f"{t.what} of {fmt_dollars(abs(t.amount))} moved from account {t.from_account.account_no} to "
                f"account {t.to_account.account_no}.")


class InvoiceForm(ServiceForm):
    submit = "Make the invoice"
    aliases = {"invoiced_on": "invoiced_on"}
    account_no = forms.CharField(label="Account number", max_length=20)
    code = forms.ChoiceField(label="Fee")
    amount = forms.CharField(label="Amount", required=False, max_length=20,
                             help_text="Only for a fee whose amount the clerk sets.")
    base = forms.CharField(label="Cost it is computed from", required=False, max_length=20,
                           help_text="Only for a fee computed from a cost.")
    size = forms.CharField(label="Size (inches)", required=False, max_length=10,
                           help_text="Only for a fee by size.")
    invoiced_on = DayField(label="Invoice date", initial=today, doing="invoiced")
    due_on = forms.DateField(label="Due by", widget=DATE_WIDGET)
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET, help_text="Internal.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].choices = [(fee.code, f"{fee.description} ({fee.citation})")
                                       for fee in fees_in_force(on=today())]

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        amount, base = charge_figures_parse(amount=d["amount"], base=d["base"])
        self.invoice = invoice_create(account=_account(d["account_no"], field="account_no"), code=d["code"],
                                      as_of=d["invoiced_on"], due_on=d["due_on"], actor=actor, amount=amount,
                                      base=base, size=d["size"] or None, note=d["note"])
        i = self.invoice
        return (f"Invoice {i.number} of {fmt_dollars(i.amount.amount)} made for account {i.account.account_no}, due "
                f"{i.due_on}: print it for the customer.")


class DayCloseForm(ServiceForm):
    submit = "Close the day"
    aliases = {"day": "day"}
    day = DayField(label="Day", initial=today, doing="closed")
    counted_cash = forms.DecimalField(label="Cash counted", max_digits=12, decimal_places=2)
    counted_checks = forms.DecimalField(label="Checks counted", max_digits=12, decimal_places=2)
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET,
                           help_text="Required when the drawer is over or short: what explains it.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        close = day_close(on=d["day"], counted_cash=d["counted_cash"], counted_checks=d["counted_checks"],
                          note=d["note"], actor=actor)
        off = close.over_short
        words = "balanced" if not off else f"{'over' if off > 0 else 'short'} by {fmt_dollars(abs(off))}"
        return f"{close.day} closed: the drawer {words}."




class DayReopenForm(ServiceForm):
    submit = "Ask a supervisor to reopen the day"
    day = DayField(label="Day", doing="reopened")
    reason = forms.CharField(label="Reason", required=False, widget=TEXT_WIDGET,
                             help_text="Why the closed day's books must change (a deposit found, a payment keyed to "
                                       "the wrong day): kept for the audit.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        close = DayClose.objects.filter(day=d["day"]).first()
        if close is None:
            raise ApplicationError(f"{d['day']} was never closed: it is open", field="day")
        self.reopen = day_reopen_request(close=close, reason=d["reason"], actor=actor)
        return f"Reopening {close.day} waits for a supervisor's approval."


class DayReopenDecisionForm(ServiceForm):
    whole_fields = ("", "status", "actor", "day")
    decision = forms.ChoiceField(label="Decision", choices=(("approve", "Approve: open the day again"),
                                                            ("refuse", "Refuse")), widget=forms.RadioSelect)
    note = forms.CharField(label="Note", required=False, widget=TEXT_WIDGET, help_text="Required to refuse.")
    submit = "Record the decision"

    def __init__(self, *args, reopen, **kwargs):
        self.reopen = reopen
        super().__init__(*args, **kwargs)

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        reopen = day_reopen_decide(reopen=self.reopen, approve=d["decision"] == "approve", note=d["note"],
                                   actor=actor)
        day = reopen.close.day
        if reopen.status == reopen.Status.APPROVED:
            return f"{day} is open again: entries dated it reach its books until it is closed again."
        return f"Reopening {day} refused."
