import django.db.models.deletion
from django.db import migrations, models


def alerts_dated(apps, schema_editor):
    UsageAlert = apps.get_model("meters", "UsageAlert")
    for alert in UsageAlert.objects.select_related("reading").iterator():
        UsageAlert.objects.filter(pk=alert.pk).update(meter_id=alert.reading.meter_id, read_on=alert.reading.read_on)


class Migration(migrations.Migration):

    dependencies = [
        ("meters", "0008_usage_alert_figures"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="usagealert",
            options={"ordering": ["-created_at", "-id"], "verbose_name": "meter alert"},
        ),
        migrations.AlterField(
            model_name="usagealert",
            name="days",
            field=models.PositiveIntegerField(default=0, help_text="The days that use is over (no flow: the days "
                                                                   "reported)."),
        ),
        migrations.AlterField(
            model_name="usagealert",
            name="kind",
            field=models.CharField(choices=[
                ("high", "Use far above the account's own"), ("vacant", "Use on a vacant or shut-off account"),
                ("none", "No use on an occupied account"), ("leak", "Leak reported by the meter"),
                ("reverse_flow", "Reverse flow reported by the meter"), ("tamper", "Tamper reported by the meter"),
                ("no_flow", "No flow for days, reported by the meter"),
                ("register_mismatch", "Register and encoder do not match"),
                ("continuous_flow", "Continuous flow in the daily reads"),
                ("out_of_range", "Outside the range expected for this read: re-read")], max_length=20),
        ),
        migrations.AddField(
            model_name="usagealert",
            name="meter",
            field=models.ForeignKey(null=True, on_delete=django.db.models.deletion.CASCADE, related_name="alerts",
                                    to="meters.meter"),
        ),
        migrations.AddField(model_name="usagealert", name="read_on", field=models.DateField(null=True)),
        migrations.RunPython(alerts_dated, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="usagealert",
            name="meter",
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="alerts",
                                    to="meters.meter"),
        ),
        migrations.AlterField(model_name="usagealert", name="read_on", field=models.DateField()),
        migrations.AlterField(
            model_name="usagealert",
            name="reading",
            field=models.ForeignKey(blank=True, help_text="The register reading it is about; none for a flag in the "
                                                          "daily reads.",
                                    null=True, on_delete=django.db.models.deletion.CASCADE,
                                    related_name="usage_alerts", to="meters.reading"),
        ),
        migrations.RemoveConstraint(model_name="usagealert", name="one_usage_alert_per_reading"),
        migrations.AddConstraint(
            model_name="usagealert",
            constraint=models.UniqueConstraint(fields=("meter", "read_on", "kind"), name="one_meter_alert_per_day"),
        ),
        migrations.CreateModel(
            name="DailyRead",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("month", models.DateField(help_text="The first day of the month.")),
                ("values", models.JSONField(default=list)),
                ("meter", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="daily_reads",
                                            to="meters.meter")),
            ],
            options={
                "constraints": [
                    models.UniqueConstraint(fields=("meter", "month"), name="one_daily_row_per_meter_month"),
                    models.CheckConstraint(condition=models.Q(("month__day", 1)), name="daily_row_month_is_first"),
                ],
            },
        ),
    ]
