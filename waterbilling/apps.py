from django.apps import AppConfig


class WaterbillingConfig(AppConfig):
    name = "waterbilling"
    verbose_name = "Water billing"

    def ready(self):
        from . import checks, receivers  # noqa: F401 (checks registers the deploy checks)

        receivers.connect()
