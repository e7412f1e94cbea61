"""Bills and late charges brought over from a village's previous system (``conversion``).

A converted bill has no rate schedule of ours and records its cutover date (``converted_on``); the late charges
the old system charged before the cutover are their own ledger kinds, facts the penalty replay never recomputes;
a bill names the conversion that wrote it (``conversion``), and the payments made to the old system are kept as
history (``PriorPayment``), never on the books.

On PostgreSQL the ledger, bill lines and issued bills stay append-only (0002, 0006), with one door: a
conversion's rollback, inside its transaction (``SET LOCAL billing.conversion_rollback = 'on'``), may delete the
rows that conversion wrote (ledger rows whose source starts ``convert:``, converted bills and their lines) and
nothing else.
"""

import django.db.models.deletion
import djmoney.models.fields
from django.db import migrations, models

from core.db import postgres_only_sql

ROLLBACK_OPEN = "current_setting('billing.conversion_rollback', true) = 'on'"

LEDGER = f"""
CREATE OR REPLACE FUNCTION billing_ledger_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND {ROLLBACK_OPEN} AND OLD.source LIKE 'convert:%' THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused (correct it with an adjustment)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS billing_ledgerentry_append_only ON billing_ledgerentry;
CREATE TRIGGER billing_ledgerentry_append_only BEFORE UPDATE OR DELETE ON billing_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION billing_ledger_append_only();

CREATE OR REPLACE FUNCTION billing_billline_append_only() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' AND {ROLLBACK_OPEN}
       AND EXISTS (SELECT 1 FROM billing_bill b WHERE b.id = OLD.bill_id AND b.converted_on IS NOT NULL) THEN
        RETURN OLD;
    END IF;
    RAISE EXCEPTION '% is append-only: % refused (correct it with an adjustment)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
DROP TRIGGER IF EXISTS billing_billline_append_only ON billing_billline;
CREATE TRIGGER billing_billline_append_only BEFORE UPDATE OR DELETE ON billing_billline
    FOR EACH ROW EXECUTE FUNCTION billing_billline_append_only();
"""

LEDGER_BEFORE = """
DROP TRIGGER IF EXISTS billing_ledgerentry_append_only ON billing_ledgerentry;
CREATE TRIGGER billing_ledgerentry_append_only BEFORE UPDATE OR DELETE ON billing_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION billing_refuse_change();
DROP TRIGGER IF EXISTS billing_billline_append_only ON billing_billline;
CREATE TRIGGER billing_billline_append_only BEFORE UPDATE OR DELETE ON billing_billline
    FOR EACH ROW EXECUTE FUNCTION billing_refuse_change();
DROP FUNCTION IF EXISTS billing_ledger_append_only();
DROP FUNCTION IF EXISTS billing_billline_append_only();
"""

BILL = f"""
CREATE OR REPLACE FUNCTION billing_bill_issued_is_final() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.converted_on IS NOT NULL AND {ROLLBACK_OPEN} THEN
            RETURN OLD;
        END IF;
        RAISE EXCEPTION 'bill % is issued and cannot be deleted; void it instead', OLD.number
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.number, NEW.public_id, NEW.account_id, NEW.frequency, NEW.bill_date, NEW.issued_on,
        NEW.recipient_name, NEW.recipient_address, NEW.due_date,
        NEW.period_start, NEW.period_end, NEW.gallons, NEW.schedule_gallons, NEW.includes_annual_minimum,
        NEW.start_reading_id, NEW.end_reading_id, NEW.estimated, NEW.rate_schedule_id, NEW.total,
        NEW.total_currency, NEW.converted_on, NEW.conversion)
       IS DISTINCT FROM
       (OLD.number, OLD.public_id, OLD.account_id, OLD.frequency, OLD.bill_date, OLD.issued_on,
        OLD.recipient_name, OLD.recipient_address, OLD.due_date,
        OLD.period_start, OLD.period_end, OLD.gallons, OLD.schedule_gallons, OLD.includes_annual_minimum,
        OLD.start_reading_id, OLD.end_reading_id, OLD.estimated, OLD.rate_schedule_id, OLD.total,
        OLD.total_currency, OLD.converted_on, OLD.conversion) THEN
        RAISE EXCEPTION 'bill % is issued and cannot change; correct it with a credit or debit memo', OLD.number
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.status = 'void' AND NEW.status <> 'void' THEN
        RAISE EXCEPTION 'bill % is void and stays void', OLD.number USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;
"""

BILL_BEFORE = (BILL.replace(f"""        IF OLD.converted_on IS NOT NULL AND {ROLLBACK_OPEN} THEN
            RETURN OLD;
        END IF;
""", "").replace(", NEW.converted_on, NEW.conversion)", ")").replace(", OLD.converted_on, OLD.conversion)", ")"))


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_owrs_rate_fields'),
        ('billing', '0020_utility_list_floor'),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name='ledgerentry',
            name='ledger_sign_matches_kind',
        ),
        migrations.AddField(
            model_name='bill',
            name='converted_on',
            field=models.DateField(blank=True, help_text="For a bill brought over from the village's previous system: the cutover date. Its charges and the late charges before that day are the old system's; ours start on it.", null=True),
        ),
        migrations.AlterField(
            model_name='bill',
            name='rate_schedule',
            field=models.ForeignKey(blank=True, help_text='The schedule it was rated under; none for a converted bill.', null=True, on_delete=django.db.models.deletion.PROTECT, related_name='bills', to='billing.rateschedule'),
        ),
        migrations.AlterField(
            model_name='ledgerentry',
            name='kind',
            field=models.CharField(choices=[('water', 'Water charge'), ('fee', 'Fee'), ('penalty', 'Penalty'), ('payment', 'Payment'), ('credit', 'Credit memo'), ('debit', 'Debit memo'), ('void', 'Bill voided'), ('penalty_correction', 'Penalty corrected'), ('interest', 'Interest'), ('fine', 'Fine'), ('interest_correction', 'Interest corrected'), ('deposit', 'Deposit held'), ('deposit_refund', 'Deposit refunded'), ('payment_reversal', 'Payment reversed'), ('converted_penalty', 'Penalty (previous system)'), ('converted_interest', 'Interest (previous system)')], max_length=20),
        ),
        migrations.AddConstraint(
            model_name='bill',
            constraint=models.CheckConstraint(condition=models.Q(('rate_schedule__isnull', False), ('converted_on__isnull', False), _connector='OR'), name='bill_rated_or_converted'),
        ),
        migrations.AddConstraint(
            model_name='ledgerentry',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('amount__gte', 0), ('kind__in', ['water', 'fee', 'fine', 'penalty', 'interest', 'debit', 'deposit_refund', 'payment_reversal', 'converted_penalty', 'converted_interest'])), models.Q(('amount__lte', 0), ('kind__in', ['payment', 'credit', 'void', 'deposit'])), ('kind__in', ['penalty_correction', 'interest_correction']), _connector='OR'), name='ledger_sign_matches_kind'),
        ),
        migrations.CreateModel(
            name='PriorPayment',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('paid_on', models.DateField()),
                ('amount_currency', djmoney.models.fields.CurrencyField(choices=[('USD', 'USD')], default='USD', editable=False, max_length=3)),
                ('amount', djmoney.models.fields.MoneyField(currency_choices=[('USD', 'USD')], decimal_places=2, max_digits=12)),
                ('reference', models.CharField(blank=True, max_length=80)),
                ('conversion', models.CharField(help_text='The conversion that brought it over.', max_length=40)),
            ],
            options={
                'ordering': ['-paid_on', '-id'],
            },
        ),
        migrations.AddField(
            model_name='bill',
            name='conversion',
            field=models.CharField(blank=True, db_default='', default='', help_text='The conversion that brought it over (its ledger source prefix).', max_length=40),
        ),
        migrations.AddConstraint(
            model_name='bill',
            constraint=models.CheckConstraint(condition=models.Q(models.Q(('conversion', ''), ('converted_on__isnull', True)), models.Q(('converted_on__isnull', False), models.Q(('conversion', ''), _negated=True)), _connector='OR'), name='bill_converted_by_a_conversion'),
        ),
        migrations.AddField(
            model_name='priorpayment',
            name='account',
            field=models.ForeignKey(on_delete=django.db.models.deletion.PROTECT, related_name='prior_payments', to='accounts.account'),
        ),
        migrations.AddIndex(
            model_name='priorpayment',
            index=models.Index(fields=['account', 'paid_on'], name='prior_payment_account_date'),
        ),
        postgres_only_sql(LEDGER, LEDGER_BEFORE),
        postgres_only_sql(BILL, BILL_BEFORE),
    ]
