from django.apps import AppConfig


class PortalConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "portal"
    verbose_name = "Customer portal"

    def ready(self):
        from billing.signals import bills_issued

        from .tasks import bills_issued_notify_receiver

        bills_issued.connect(bills_issued_notify_receiver, dispatch_uid="portal.notify")

        from django.contrib.auth.signals import user_logged_in

        from .middleware import signed_in

        user_logged_in.connect(signed_in, dispatch_uid="portal.language")
