"""Pending charges: fees and fines charged between bills, carried by the account's next bill.

On PostgreSQL a trigger keeps what a bill carries final: a charge's ``bill`` is set once and never changed or
cleared, a billed charge's figures never change and it is never deleted, and a cancelled charge stays
cancelled. The billing run and the services already behave so; the trigger makes it true under every writer.
"""

import django.db.models.deletion
import djmoney.models.fields
from django.conf import settings
from django.db import migrations, models

from core.db import postgres_only_sql

FUNCTION = """
CREATE OR REPLACE FUNCTION billing_pending_charge_billed_is_final() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.bill_id IS NOT NULL THEN
            RAISE EXCEPTION 'charge % is on a bill and cannot be deleted', OLD.id
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN OLD;
    END IF;
    IF OLD.bill_id IS NOT NULL AND (NEW.bill_id, NEW.account_id, NEW.code, NEW.kind, NEW.description, NEW.citation,
                                    NEW.amount, NEW.amount_currency, NEW.quantity, NEW.rate, NEW.charged_on,
                                    NEW.earliest_bill_on)
                                   IS DISTINCT FROM
                                   (OLD.bill_id, OLD.account_id, OLD.code, OLD.kind, OLD.description, OLD.citation,
                                    OLD.amount, OLD.amount_currency, OLD.quantity, OLD.rate, OLD.charged_on,
                                    OLD.earliest_bill_on) THEN
        RAISE EXCEPTION 'charge % is on a bill and cannot change; correct the bill instead', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.cancelled_at IS NOT NULL AND NEW.cancelled_at IS NULL THEN
        RAISE EXCEPTION 'charge % is cancelled and stays cancelled', OLD.id
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER billing_pending_charge_billed_is_final
    BEFORE UPDATE OR DELETE ON billing_pendingcharge
    FOR EACH ROW EXECUTE FUNCTION billing_pending_charge_billed_is_final();
"""

REVERSE = """
DROP TRIGGER IF EXISTS billing_pending_charge_billed_is_final ON billing_pendingcharge;
DROP FUNCTION IF EXISTS billing_pending_charge_billed_is_final();
"""


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_portal_link_history"),
        ("billing", "0011_fee_rules"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name='billline',
            name='kind',
            field=models.CharField(choices=[('minimum', 'Minimum charge'), ('consumption', 'Consumption'), ('nonprofit', 'Nonprofit rate'), ('sprinkler', 'Sprinkler service charge'), ('fee', 'Fee'), ('fine', 'Fine')], max_length=12),
        ),
        migrations.CreateModel(
            name='PendingCharge',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('code', models.CharField(help_text="The fee's code in the preset's fee schedule.", max_length=40)),
                ('kind', models.CharField(choices=[('fee', 'Fee'), ('fine', 'Fine')], default='fee', max_length=4)),
                ('description', models.CharField(max_length=200)),
                ('citation', models.CharField(max_length=80)),
                ('amount_currency', djmoney.models.fields.CurrencyField(choices=[('USD', 'USD')], default='USD', editable=False, max_length=3)),
                ('amount', djmoney.models.fields.MoneyField(currency_choices=[('USD', 'USD')], decimal_places=2, max_digits=12)),
                ('quantity', models.DecimalField(decimal_places=2, default=1, help_text="The bill line's quantity: 1, or the base of a pro-rata fee.", max_digits=14)),
                ('rate', models.DecimalField(decimal_places=6, help_text="The bill line's rate.", max_digits=12)),
                ('base', models.DecimalField(blank=True, decimal_places=2, help_text='Dollars a pro-rata fee was computed from.', max_digits=14, null=True)),
                ('size', models.CharField(blank=True, help_text='Inches, for a fee by size.', max_length=10)),
                ('note', models.TextField(blank=True, help_text='Internal note; never shown to the customer.')),
                ('charged_on', models.DateField()),
                ('earliest_bill_on', models.DateField(help_text='The earliest bill date it may go on.')),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('cancelled_at', models.DateTimeField(blank=True, null=True)),
                ('cancel_reason', models.TextField(blank=True)),
                ('account', models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='pending_charges', to='accounts.account')),
                ('bill', models.ForeignKey(blank=True, help_text='The bill that carried it; empty while it is pending.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='charges', to='billing.bill')),
                ('cancelled_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('created_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.PROTECT, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('reissue_of', models.OneToOneField(blank=True, help_text='The charge of a voided bill this one charges again.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='reissue', to='billing.pendingcharge')),
            ],
            options={
                'ordering': ['-charged_on', '-id'],
                'indexes': [models.Index(condition=models.Q(('bill__isnull', True)), fields=['account', 'earliest_bill_on'], name='pending_charge_waiting')],
                'constraints': [models.CheckConstraint(condition=models.Q(('amount__gt', 0)), name='pending_charge_amount_positive'), models.CheckConstraint(condition=models.Q(('kind__in', ['fee', 'fine'])), name='pending_charge_kind_valid'), models.CheckConstraint(condition=models.Q(('earliest_bill_on__gte', models.F('charged_on'))), name='pending_charge_not_billed_before_charged'), models.CheckConstraint(condition=models.Q(('bill__isnull', True), ('cancelled_at__isnull', True), _connector='OR'), name='pending_charge_billed_or_cancelled_not_both'), models.CheckConstraint(condition=models.Q(('cancelled_at__isnull', True), models.Q(('cancel_reason', ''), _negated=True), _connector='OR'), name='pending_charge_cancel_has_reason')],
            },
        ),
        postgres_only_sql(FUNCTION, REVERSE),
    ]
