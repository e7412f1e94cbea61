from django.apps import AppConfig


class TerminationConfig(AppConfig):
    name = "termination"
    verbose_name = "Termination of service"

    def ready(self):
        from billing.signals import payment_posted, payment_reversed

        from . import receivers

        # Payment in full before the shut-off closes the case, however the payment arrived.
        payment_posted.connect(receivers.on_payment_posted, dispatch_uid="termination.close_paid_cases")
        # A payment reversed reopens the case it paid in full.
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="termination.reopen_unpaid_cases")
