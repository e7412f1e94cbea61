from django.apps import AppConfig


class TerminationConfig(AppConfig):
    name = "termination"
    verbose_name = "Termination of service"

    def ready(self):
        from accounts.signals import account_closed
        from billing.balances import fine_time_register
        from billing.signals import bill_voided, payment_posted, payment_reversed
        from ordinance.sections import section_register

        from . import receivers
        from .policy import TERMINATION_KEYS, fine_days_to_pay, termination_rules_from

        section_register("termination", termination_rules_from, owner="termination", keys=TERMINATION_KEYS,
                         meaning="Termination of service for nonpayment: due process, each period with its citation.")

        # A fine's own time to pay orders what a payment pays (billing.ledger.allocation: oldest due first).
        fine_time_register(fine_days_to_pay)
        # Payment in full before the shut-off closes the case, however the payment arrived.
        payment_posted.connect(receivers.on_payment_posted, dispatch_uid="termination.close_paid_cases")
        # A payment reversed reopens the case it paid in full.
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="termination.reopen_unpaid_cases")
        # A bill voided withdraws the case it grounded.
        bill_voided.connect(receivers.on_bill_voided, dispatch_uid="termination.withdraw_voided_cases")
        # An account closed: its shut-off orders cancelled, its cases flagged for the clerk.
        account_closed.connect(receivers.on_account_closed, dispatch_uid="termination.closed_account_cases")
