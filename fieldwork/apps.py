from django.apps import AppConfig


class FieldworkConfig(AppConfig):
    name = "fieldwork"
    verbose_name = "Field work"

    def ready(self):
        from meters.signals import usage_alerts_raised

        from . import receivers

        # A reading outside its expected range is re-read (docs/architecture.md, the event table).
        usage_alerts_raised.connect(receivers.on_usage_alerts_raised, dispatch_uid="fieldwork.reread")
