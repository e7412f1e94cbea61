"""An invoice's ledger row names its due date (``LedgerEntry.due_on``), so what an account owes knows when a charge
on no bill falls due. Rows written before the field existed get their invoice's due date; the ledger's
append-only trigger (PostgreSQL) is set aside for this one statement only."""

from django.db import connection, migrations


def _set(apps, schema_editor, *, clear: bool):
    Invoice = apps.get_model("office", "Invoice")
    LedgerEntry = apps.get_model("billing", "LedgerEntry")
    postgres = connection.vendor == "postgresql"
    with connection.cursor() as cursor:
        if postgres:
            cursor.execute("ALTER TABLE billing_ledgerentry DISABLE TRIGGER billing_ledgerentry_append_only")
        for pk, due_on in Invoice.objects.values_list("pk", "due_on"):
            LedgerEntry.objects.filter(source=f"invoice:{pk}", kind="fee").update(due_on=None if clear else due_on)
        if postgres:
            cursor.execute("ALTER TABLE billing_ledgerentry ENABLE TRIGGER billing_ledgerentry_append_only")


def forward(apps, schema_editor):
    _set(apps, schema_editor, clear=False)


def backward(apps, schema_editor):
    _set(apps, schema_editor, clear=True)


class Migration(migrations.Migration):
    dependencies = [("office", "0001_back_office"), ("billing", "0034_ledger_entry_due_on")]
    operations = [migrations.RunPython(forward, backward)]
