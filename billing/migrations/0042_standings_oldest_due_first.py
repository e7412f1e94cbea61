"""A payment now pays oldest due first, each charge by its own due date (a fine with a time to pay of its own at that
date, even on a later bill), and among charges due the same day water rents, then fines, then fees
(docs/ordinances.md, conventions). A kept standing is the allocation under the old order, so every one is dropped;
the pages that read them replay the ledger until the nightly job keeps them again (``billing.ledger.standing``)."""

from django.db import migrations


def drop_standings(apps, schema_editor):
    apps.get_model("billing", "AccountStanding").objects.all().delete()


class Migration(migrations.Migration):
    dependencies = [("billing", "0041_amendment_rebill")]

    operations = [migrations.RunPython(drop_standings, migrations.RunPython.noop)]
