from django.apps import AppConfig


class OfficeConfig(AppConfig):
    name = "office"
    verbose_name = "Back office"

    def ready(self):
        from billing.signals import payment_reversed

        from . import receivers

        # A payment taken back after a refund of the credit it made: the refund is flagged for the supervisor.
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="office.refund_came_back")
