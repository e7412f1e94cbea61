from django.apps import AppConfig


class BackflowConfig(AppConfig):
    name = "backflow"
    verbose_name = "Backflow and cross-connections"

    def ready(self):
        from meters.signals import usage_alerts_raised
        from ordinance.sections import section_register

        from . import receivers
        from .policy import BACKFLOW_KEYS, backflow_rules_from

        # Reverse flow a meter reported opens a follow-up on the premises (docs/architecture.md, the event table).
        usage_alerts_raised.connect(receivers.on_usage_alerts_raised, dispatch_uid="backflow.reverse_flow")

        section_register("backflow", backflow_rules_from, owner="backflow", keys=BACKFLOW_KEYS,
                         meaning="Backflow and cross-connection control: the device rule, how often devices are "
                                 "tested, the compliance notices and what noncompliance leads to.")
