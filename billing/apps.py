from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self):
        from . import signals
        from .pdf import bills_issued_render

        signals.bills_issued.connect(bills_issued_render, dispatch_uid="billing.pdf.render")
