"""``billing.models`` is a package of modules; every model, and the history model simple-history makes for it, is
found where it was before: ``billing.models.<Name>``."""

import importlib

from django.apps import apps


def test_every_billing_model_and_its_history_model_is_found_in_billing_models():
    package = importlib.import_module("billing.models")
    for model in apps.get_app_config("billing").get_models():
        module = importlib.import_module(model.__module__)
        assert getattr(module, model.__name__) is model, model
        assert getattr(package, model.__name__) is model, model
    assert package.HistoricalPayment.__module__ == "billing.models"
