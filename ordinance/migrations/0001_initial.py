# The utility row moves from billing to the ordinance floor (its table stays), and the preset's tables become dated
# sections, each install recorded.

from decimal import Decimal

import django.db.models.deletion
import simple_history.models
from django.conf import settings
from django.db import migrations, models

import ordinance.models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("billing", "0038_prior_relevies"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.CreateModel(
                    name="Utility",
                    fields=[
                        ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False,
                                                   verbose_name="ID")),
                        ("preset", models.CharField(max_length=40, unique=True)),
                        ("name", models.CharField(max_length=200)),
                        ("office_address", models.TextField()),
                        ("phone", models.CharField(blank=True, max_length=40)),
                        ("chapter", models.CharField(blank=True, max_length=200)),
                        ("calendar_scheme", models.CharField(max_length=40)),
                        ("calendar_params", models.JSONField(default=dict)),
                        ("penalty_scheme", models.CharField(max_length=40)),
                        ("penalty_params", models.JSONField(default=dict)),
                        ("termination_params", models.JSONField(default=dict)),
                        ("backflow_params", models.JSONField(blank=True, default=dict)),
                        ("notes", models.JSONField(default=list)),
                        ("payment_order", models.CharField(default="principal_first", max_length=20)),
                        ("is_demo_site", models.BooleanField(default=False)),
                        ("list_floor", models.DecimalField(decimal_places=2, default=Decimal("25.00"), max_digits=12,
                                                           verbose_name="floor under shut-off and relevy lists")),
                        ("high_usage_factor", models.DecimalField(
                            db_default=Decimal("4"), decimal_places=2, default=Decimal("4"), max_digits=5,
                            verbose_name="hold a bill over this many times the usual use")),
                        ("plan_grace_days", models.PositiveSmallIntegerField(
                            default=10, verbose_name="payment plan grace (days)")),
                        ("returned_payment_fee", models.DecimalField(
                            decimal_places=2, default=Decimal("0.00"), max_digits=8,
                            verbose_name="returned-payment fee (office policy)")),
                        ("bill_emails_wait", models.BooleanField(default=False,
                                                                 verbose_name="paperless e-mails wait for the clerk")),
                        ("gl_params", models.JSONField(blank=True, default=dict, verbose_name="general ledger accounts")),
                        ("updated_at", models.DateTimeField(auto_now=True)),
                    ],
                    options={
                        "verbose_name_plural": "utility",
                        "db_table": "billing_utility",
                        "constraints": [
                            models.CheckConstraint(condition=models.Q(("list_floor__gte", 0)),
                                                   name="utility_list_floor_not_negative"),
                            models.CheckConstraint(condition=models.Q(("high_usage_factor__gt", 1)),
                                                   name="utility_high_usage_factor_over_one"),
                        ],
                    },
                ),
            ],
            database_operations=[],
        ),
        migrations.CreateModel(
            name="InstalledPreset",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("version", models.PositiveIntegerField(unique=True)),
                ("code", models.CharField(max_length=40)),
                ("source", models.CharField(help_text="The file installed: a shipped preset or a path outside.",
                                            max_length=500)),
                ("sha256", models.CharField(max_length=64)),
                ("effective_on", models.DateField(help_text="The day its changed tables take effect.")),
                ("installed_at", models.DateTimeField(auto_now_add=True)),
                ("changes", models.JSONField(default=list, help_text="What the install created and updated.")),
            ],
            options={"verbose_name": "preset install", "ordering": ["-version"]},
        ),
        migrations.CreateModel(
            name="Section",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("table", models.CharField(max_length=40)),
                ("effective_on", models.DateField()),
                ("params", models.JSONField(blank=True, default=dict)),
                ("installed", models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name="sections",
                                                to="ordinance.installedpreset")),
            ],
            options={
                "ordering": ["table", "-effective_on"],
                "constraints": [models.UniqueConstraint(fields=("table", "effective_on"),
                                                        name="section_one_version_a_day")],
            },
        ),
        migrations.CreateModel(
            name="HistoricalSection",
            fields=[
                ("id", models.BigIntegerField(auto_created=True, blank=True, db_index=True, verbose_name="ID")),
                ("table", models.CharField(max_length=40)),
                ("effective_on", models.DateField()),
                ("params", models.JSONField(blank=True, default=dict)),
                ("history_id", models.AutoField(primary_key=True, serialize=False)),
                ("history_date", models.DateTimeField(db_index=True)),
                ("history_change_reason", models.CharField(max_length=100, null=True)),
                ("history_type", models.CharField(choices=[("+", "Created"), ("~", "Changed"), ("-", "Deleted")],
                                                  max_length=1)),
                ("history_user", models.ForeignKey(null=True, on_delete=django.db.models.deletion.SET_NULL,
                                                   related_name="+", to=settings.AUTH_USER_MODEL)),
                ("installed", models.ForeignKey(blank=True, db_constraint=False, null=True,
                                                on_delete=django.db.models.deletion.DO_NOTHING, related_name="+",
                                                to="ordinance.installedpreset")),
            ],
            options={
                "verbose_name": "historical section",
                "verbose_name_plural": "historical sections",
                "ordering": ("-history_date", "-history_id"),
                "get_latest_by": ("history_date", "history_id"),
            },
            bases=(simple_history.models.HistoricalChanges, models.Model),
        ),
    ]
