"""Stored rate schedules say ``per_bill`` where they said ``semiannual``, and name their rate structure.

The category minimum and blocks apply to one bill, whatever the calendar's frequency (Mineola's semiannual
bills, a quarterly village's bills), so the rules call them rates per bill. Every schedule stored before
this migration was rated by the one structure there was, ``mineola_blocks``; it is named in the rules so
the preset file, which names it, installs again unchanged. History rows are renamed too, so the history
of a schedule reads in one vocabulary.
"""

from django.db import migrations

STRUCTURE = "mineola_blocks"


def _forward(rules):
    if not isinstance(rules, dict):
        return rules
    rules = dict(rules)
    if "semiannual" in rules and "per_bill" not in rules:
        rules["per_bill"] = rules.pop("semiannual")
    rules.setdefault("structure", STRUCTURE)
    return rules


def _backward(rules):
    if not isinstance(rules, dict):
        return rules
    rules = dict(rules)
    if "per_bill" in rules and "semiannual" not in rules:
        rules["semiannual"] = rules.pop("per_bill")
    if rules.get("structure") == STRUCTURE:
        del rules["structure"]
    return rules


def _rewrite(apps, change):
    for model_name in ("RateSchedule", "HistoricalRateSchedule"):
        model = apps.get_model("billing", model_name)
        pk = model._meta.pk.attname
        changed = []
        for row in model.objects.only(pk, "rules").iterator():
            rules = change(row.rules)
            if rules != row.rules:
                row.rules = rules
                changed.append(row)
        model.objects.bulk_update(changed, ["rules"], batch_size=500)


def rules_per_bill(apps, schema_editor):
    _rewrite(apps, _forward)


def rules_semiannual(apps, schema_editor):
    _rewrite(apps, _backward)


class Migration(migrations.Migration):

    dependencies = [
        ("billing", "0009_ledger_entry_sources"),
    ]

    operations = [
        migrations.RunPython(rules_per_bill, rules_semiannual),
    ]
