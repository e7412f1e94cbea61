# The rules the utility row carried become the first version of each section, in force from the beginning.

import datetime

from django.db import migrations

BEGINNING = datetime.date(1900, 1, 1)
COLUMNS = {"calendar": "calendar_params", "penalty": "penalty_params", "termination": "termination_params",
           "backflow": "backflow_params", "note": "notes", "gl": "gl_params"}


def forwards(apps, schema_editor):
    Utility = apps.get_model("ordinance", "Utility")
    InstalledPreset = apps.get_model("ordinance", "InstalledPreset")
    Section = apps.get_model("ordinance", "Section")
    utility = Utility.objects.first()
    if utility is None:
        return
    install = InstalledPreset.objects.create(version=1, code=utility.preset, source="the utility row before sections",
                                             sha256="", effective_on=BEGINNING, changes=["sections from the utility row"])
    for table, column in COLUMNS.items():
        value = getattr(utility, column)
        if value:
            Section.objects.create(table=table, effective_on=BEGINNING, params=value, installed=install)
    Section.objects.create(table="policy", effective_on=BEGINNING, params={"payment_order": utility.payment_order},
                           installed=install)


class Migration(migrations.Migration):

    dependencies = [("ordinance", "0001_initial")]

    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
