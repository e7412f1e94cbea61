"""A fee's rule: flat, pro rata, by size, or the clerk's amount (``billing.fees``), and the table a fee by size
needs. Fees already installed get the rule their numbers imply; installing the preset again sets it too."""

from django.db import migrations, models


def rules_from_numbers(apps, schema_editor):
    Fee = apps.get_model("billing", "Fee")
    Fee.objects.filter(rate__isnull=False).update(rule="pro_rata")
    Fee.objects.filter(rate__isnull=True, amount__isnull=True).update(rule="clerk")


class Migration(migrations.Migration):

    dependencies = [
        ("billing", "0010_rate_rules_per_bill"),
    ]

    operations = [
        migrations.AddField(
            model_name='fee',
            name='by_size',
            field=models.JSONField(blank=True, default=dict, help_text='For fees by supply or meter size: dollars by inches, {"2": "100.00"}.'),
        ),
        migrations.AddField(
            model_name='fee',
            name='rule',
            field=models.CharField(default='flat', help_text='How the fee is quoted: flat, pro_rata, by_size or clerk (billing/fees.py).', max_length=20),
        ),
        migrations.AddField(
            model_name='historicalfee',
            name='by_size',
            field=models.JSONField(blank=True, default=dict, help_text='For fees by supply or meter size: dollars by inches, {"2": "100.00"}.'),
        ),
        migrations.AddField(
            model_name='historicalfee',
            name='rule',
            field=models.CharField(default='flat', help_text='How the fee is quoted: flat, pro_rata, by_size or clerk (billing/fees.py).', max_length=20),
        ),
        migrations.RunPython(rules_from_numbers, migrations.RunPython.noop),
    ]
