from django.apps import AppConfig


class DemoConfig(AppConfig):
    """A believable village for `make run`, training and benchmarks; top floor: nothing imports it."""

    name = "demo"
    verbose_name = "Demo data"
