"""The rate structure of a per-bill minimum and blocks is named for what it does, ``minimum_and_blocks``.

Stored schedules (and their history rows) that name it by its former name are renamed, so a preset file
installs again unchanged and the registry finds the structure; back again on reverse.
"""

from django.db import migrations

FORMER, NAME = "mineola_blocks", "minimum_and_blocks"


def _rename(apps, old: str, new: str) -> None:
    for model_name in ("RateSchedule", "HistoricalRateSchedule"):
        model = apps.get_model("billing", model_name)
        pk = model._meta.pk.attname
        changed = []
        for row in model.objects.only(pk, "rules").iterator():
            if isinstance(row.rules, dict) and row.rules.get("structure") == old:
                row.rules = {**row.rules, "structure": new}
                changed.append(row)
        model.objects.bulk_update(changed, ["rules"], batch_size=500)


def forward(apps, schema_editor):
    _rename(apps, FORMER, NAME)


def backward(apps, schema_editor):
    _rename(apps, NAME, FORMER)


class Migration(migrations.Migration):
    dependencies = [("billing", "0031_utility_backflow_params")]
    operations = [migrations.RunPython(forward, backward)]
