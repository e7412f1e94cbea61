from django.apps import AppConfig


class OrdinanceConfig(AppConfig):
    name = "ordinance"
    verbose_name = "Ordinance"

    def ready(self):
        from . import readers  # noqa: F401  (the tables this floor reads itself: [utility], [note])
