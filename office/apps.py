from django.apps import AppConfig


class OfficeConfig(AppConfig):
    name = "office"
    verbose_name = "Back office"

    def ready(self):
        from billing.ledger.posting import closed_days_register
        from billing.signals import payment_reversed

        from . import receivers
        from .services import closed_days

        # A closed day stays closed: a late entry dated it reaches the books on the first open day after it.
        closed_days_register(closed_days)

        # A payment taken back after a refund of the credit it made: the refund is flagged for the supervisor.
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="office.refund_came_back")
