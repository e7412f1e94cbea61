# The meters' rules are the [meters] section of the installed ordinance now.

import datetime

from django.db import migrations


def forwards(apps, schema_editor):
    MeterRules = apps.get_model("meters", "MeterRules")
    InstalledPreset = apps.get_model("ordinance", "InstalledPreset")
    Section = apps.get_model("ordinance", "Section")
    row = MeterRules.objects.first()
    install = InstalledPreset.objects.order_by("version").first()
    if row is not None and row.params and install is not None:
        Section.objects.create(table="meters", effective_on=datetime.date(1900, 1, 1), params=row.params,
                               installed=install)


class Migration(migrations.Migration):

    dependencies = [("meters", "0005_meter_rules_and_tests"), ("ordinance", "0002_sections_from_the_utility_row")]

    operations = [
        migrations.RunPython(forwards, migrations.RunPython.noop),
        migrations.DeleteModel(name="MeterRules"),
    ]
