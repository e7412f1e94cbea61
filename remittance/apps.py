from django.apps import AppConfig


class RemittanceConfig(AppConfig):
    name = "remittance"
    verbose_name = "Payments online and from the bank"

    def ready(self):
        from accounts.signals import account_closed
        from billing.signals import bills_issued, payment_posted

        from . import receivers

        payment_posted.connect(receivers.on_payment_posted, dispatch_uid="remittance.receipts")
        bills_issued.connect(receivers.on_bills_issued, dispatch_uid="remittance.autopay_notices")
        # An account closed ends its autopay (before its final bill's notice would be made).
        account_closed.connect(receivers.on_account_closed, dispatch_uid="remittance.autopay_ends_on_close")
