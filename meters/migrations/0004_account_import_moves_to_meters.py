"""The account import (accounts with their meters and first readings) moved from accounts to meters: import
jobs recorded under its old dotted path keep their page and run under the new one."""

from django.db import migrations

OLD = "accounts.imports.accounts_import"
NEW = "meters.account_imports.accounts_import"


def forwards(apps, schema_editor):
    apps.get_model("core", "ImportJob").objects.filter(importer=OLD).update(importer=NEW)


def backwards(apps, schema_editor):
    apps.get_model("core", "ImportJob").objects.filter(importer=NEW).update(importer=OLD)


class Migration(migrations.Migration):
    dependencies = [
        ("core", "0001_import_jobs"),
        ("meters", "0003_readings_used_by_bills_are_final"),
    ]

    operations = [migrations.RunPython(forwards, backwards)]
