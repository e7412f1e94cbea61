"""Each preset's penalty scheme names the charges its late charge is computed on (``[penalty] charges_on``), and
the ledger keeps a bill's fines apart from its fees. A utility installed before gets the preset's own words; the
kept standings, worked out when fines were counted as fees, are dropped to be worked out again (they are derived:
the nightly job, or the first read, rebuilds them)."""

from django.db import migrations

# As the preset files read (fixtures/presets/*.toml, [penalty] charges_on).
CHARGES_ON = {
    "mineola": ["water", "fee"],  # § 45.29 E: "any water charge or bill"
    "washingtonville": ["water"],  # § 169-26: water rents
    "south_farmingdale": ["water", "fee"],  # § 4.2: water and service charges
    "lansing": ["water"],  # § 141-17: the delinquent water rent
    "old_westbury": [],  # no late charge
}


def declare(apps, schema_editor):
    Utility = apps.get_model("billing", "Utility")
    for utility in Utility.objects.all():
        params = dict(utility.penalty_params or {})
        if "charges_on" not in params:
            params["charges_on"] = CHARGES_ON.get(utility.preset, ["water", "fee"])
            Utility.objects.filter(pk=utility.pk).update(penalty_params=params)
    apps.get_model("billing", "AccountStanding").objects.all().delete()


def undeclare(apps, schema_editor):
    Utility = apps.get_model("billing", "Utility")
    for utility in Utility.objects.all():
        params = dict(utility.penalty_params or {})
        if params.pop("charges_on", None) is not None:
            Utility.objects.filter(pk=utility.pk).update(penalty_params=params)
    apps.get_model("billing", "AccountStanding").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("billing", "0018_hot_tables_without_redundant_indexes")]

    operations = [migrations.RunPython(declare, undeclare)]
