from django.apps import AppConfig


class ConversionConfig(AppConfig):
    name = "conversion"
    verbose_name = "Conversion from another system"
