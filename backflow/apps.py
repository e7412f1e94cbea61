from django.apps import AppConfig


class BackflowConfig(AppConfig):
    name = "backflow"
    verbose_name = "Backflow and cross-connections"
