"""Every ledger entry names its source (the fact it records), unique with its kind: several fees and fines
can sit on one bill, and a retry never posts twice. Kinds ``interest`` and ``fine`` join the others.

Existing rows get their source from what they already refer to. The ledger is append-only on PostgreSQL
(migration 0002), so its trigger is set aside for this one UPDATE.
"""

from django.db import migrations, models
from django.db.models import Q

FILL = """
UPDATE billing_ledgerentry SET source = CASE
    WHEN kind IN ('water', 'fee', 'void') THEN 'bill:' || bill_id
    WHEN kind = 'payment' THEN 'payment:' || payment_id
    WHEN kind IN ('credit', 'debit') THEN 'adjustment:' || adjustment_id
    WHEN kind = 'penalty' THEN 'bill:' || bill_id || '@' || posted_on
    WHEN kind = 'penalty_correction' THEN 'penalty:' || corrects_id || '#' || (
        SELECT COUNT(*) FROM billing_ledgerentry c
        WHERE c.corrects_id = billing_ledgerentry.corrects_id AND c.id <= billing_ledgerentry.id)
    ELSE 'entry:' || id
END
"""


def fill_sources(apps, schema_editor):
    postgres = schema_editor.connection.vendor == "postgresql"
    with schema_editor.connection.cursor() as cursor:
        if postgres:
            cursor.execute("ALTER TABLE billing_ledgerentry DISABLE TRIGGER billing_ledgerentry_append_only")
        cursor.execute(FILL)
        if postgres:
            cursor.execute("ALTER TABLE billing_ledgerentry ENABLE TRIGGER billing_ledgerentry_append_only")


KIND_CHOICES = [("water", "Water charge"), ("fee", "Fee"), ("penalty", "Penalty"), ("payment", "Payment"),
                ("credit", "Credit memo"), ("debit", "Debit memo"), ("void", "Bill voided"),
                ("penalty_correction", "Penalty corrected"), ("interest", "Interest"), ("fine", "Fine")]


class Migration(migrations.Migration):
    dependencies = [("billing", "0008_payment_reference_unique_ignoring_case")]

    operations = [
        migrations.AddField(model_name="ledgerentry", name="source",
                            field=models.CharField(max_length=80, null=True)),
        migrations.RunPython(fill_sources, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="ledgerentry", name="source",
            field=models.CharField(help_text="The fact this entry records (bill:12, charge:3, payment:7, "
                                             "bill:12@2026-05-02 …); one entry per source and kind.",
                                   max_length=80)),
        migrations.AlterField(model_name="ledgerentry", name="kind",
                              field=models.CharField(choices=KIND_CHOICES, max_length=20)),
        migrations.RemoveConstraint(model_name="ledgerentry", name="one_charge_entry_per_bill_kind"),
        migrations.RemoveConstraint(model_name="ledgerentry", name="ledger_sign_matches_kind"),
        migrations.RemoveConstraint(model_name="ledgerentry", name="penalty_entry_has_bill"),
        migrations.AddConstraint(model_name="ledgerentry", constraint=models.UniqueConstraint(
            fields=("source", "kind"), name="one_entry_per_source_and_kind")),
        migrations.AddConstraint(model_name="ledgerentry", constraint=models.CheckConstraint(
            condition=~Q(source=""), name="ledger_entry_has_source")),
        migrations.AddConstraint(model_name="ledgerentry", constraint=models.CheckConstraint(
            condition=(Q(kind__in=["water", "fee", "fine", "penalty", "interest", "debit"], amount__gte=0)
                       | Q(kind__in=["payment", "credit", "void"], amount__lte=0)
                       | Q(kind="penalty_correction")),
            name="ledger_sign_matches_kind")),
        migrations.AddConstraint(model_name="ledgerentry", constraint=models.CheckConstraint(
            condition=~Q(kind__in=["penalty", "interest"]) | Q(bill__isnull=False), name="penalty_entry_has_bill")),
    ]
