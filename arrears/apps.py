from django.apps import AppConfig


class ArrearsConfig(AppConfig):
    name = "arrears"
    verbose_name = "Payment plans"

    def ready(self):
        from termination.holds import shutoff_hold_register

        from .services import plan_hold

        shutoff_hold_register(plan_hold)
