from django.apps import AppConfig


class MetersConfig(AppConfig):
    name = "meters"
    verbose_name = "Meters and readings"

    def ready(self):
        from ordinance.sections import section_register

        from . import receivers, signals
        from .rules import METER_KEYS, meter_policy_from

        # Every reading recorded is looked at for usage alerts, by a worker once it is committed.
        signals.readings_recorded.connect(receivers.on_readings_recorded, dispatch_uid="meters.usage_alerts")

        section_register("meters", meter_policy_from, owner="meters", keys=METER_KEYS,
                         meaning="Meters: the units they register in, how often they are inspected, how a meter that "
                                 "failed to register is estimated.")
