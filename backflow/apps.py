from django.apps import AppConfig


class BackflowConfig(AppConfig):
    name = "backflow"
    verbose_name = "Backflow and cross-connections"

    def ready(self):
        from billing.presets import section_check_register

        from .policy import backflow_table_check

        section_check_register("backflow", backflow_table_check)
