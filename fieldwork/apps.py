from django.apps import AppConfig


class FieldworkConfig(AppConfig):
    name = "fieldwork"
    verbose_name = "Field work"
