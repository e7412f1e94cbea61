from django.apps import AppConfig


class BillingConfig(AppConfig):
    name = "billing"
    verbose_name = "Billing"

    def ready(self):
        from meters.selectors import reading_holders_register

        from . import signals
        from .pdf import bills_issued_render
        from .selectors import bills_using_reading

        signals.bills_issued.connect(bills_issued_render, dispatch_uid="billing.pdf.render")
        # A reading a bill in force used is final (meters refuses to change it).
        reading_holders_register(bills_using_reading)
