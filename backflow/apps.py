from django.apps import AppConfig


class BackflowConfig(AppConfig):
    name = "backflow"
    verbose_name = "Backflow and cross-connections"

    def ready(self):
        from ordinance.sections import section_register

        from .policy import BACKFLOW_KEYS, backflow_rules_from

        section_register("backflow", backflow_rules_from, owner="backflow", keys=BACKFLOW_KEYS,
                         meaning="Backflow and cross-connection control: the device rule, how often devices are "
                                 "tested, the compliance notices and what noncompliance leads to.")
