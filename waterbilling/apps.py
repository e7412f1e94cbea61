from django.apps import AppConfig


class WaterbillingConfig(AppConfig):
    name = "waterbilling"
    verbose_name = "Water billing"

    def ready(self):
        from . import receivers

        receivers.connect()
