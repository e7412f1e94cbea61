from django.apps import AppConfig


class RemittanceConfig(AppConfig):
    name = "remittance"
    verbose_name = "Payments online and from the bank"

    def ready(self):
        from billing.signals import bills_issued, payment_posted

        from . import receivers

        payment_posted.connect(receivers.on_payment_posted, dispatch_uid="remittance.receipts")
        bills_issued.connect(receivers.on_bills_issued, dispatch_uid="remittance.autopay_notices")
