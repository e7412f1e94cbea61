from django.apps import AppConfig


class MetersConfig(AppConfig):
    name = "meters"
    verbose_name = "Meters and readings"
