from django.apps import AppConfig


class ArrearsConfig(AppConfig):
    name = "arrears"
    verbose_name = "Payment plans"

    def ready(self):
        from accounts.signals import account_closed
        from billing.signals import payment_reversed
        from termination.holds import shutoff_hold_register

        from . import receivers
        from .services import plan_hold

        shutoff_hold_register(plan_hold)
        # A payment taken back after it completed a plan reopens the plan; closing the account ends it.
        payment_reversed.connect(receivers.on_payment_reversed, dispatch_uid="arrears.plan_reopened")
        account_closed.connect(receivers.on_account_closed, dispatch_uid="arrears.plan_ends_on_close")
