from django.apps import AppConfig


class MetersConfig(AppConfig):
    name = "meters"
    verbose_name = "Meters and readings"

    def ready(self):
        from ordinance.sections import section_register

        from .rules import METER_KEYS, meter_policy_from

        section_register("meters", meter_policy_from, owner="meters", keys=METER_KEYS,
                         meaning="Meters: the units they register in, how often they are inspected, how a meter that "
                                 "failed to register is estimated.")
