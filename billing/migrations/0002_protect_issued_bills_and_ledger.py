"""Issued bills and the ledger, protected by the database itself (PostgreSQL).

The ledger and bill lines are append-only: no UPDATE or DELETE. An issued bill may only be voided (status
and the void fields) or have its PDF stored; everything it says about money and dates is fixed. The
application never tries otherwise — these triggers make sure nothing else can either.
"""

from django.db import migrations

from core.db import postgres_only_sql

FORWARD = """
CREATE OR REPLACE FUNCTION billing_refuse_change() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '% is append-only: % refused (correct it with an adjustment)', TG_TABLE_NAME, TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER billing_ledgerentry_append_only BEFORE UPDATE OR DELETE ON billing_ledgerentry
    FOR EACH ROW EXECUTE FUNCTION billing_refuse_change();
CREATE TRIGGER billing_billline_append_only BEFORE UPDATE OR DELETE ON billing_billline
    FOR EACH ROW EXECUTE FUNCTION billing_refuse_change();

CREATE OR REPLACE FUNCTION billing_bill_issued_is_final() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'bill % is issued and cannot be deleted; void it instead', OLD.number
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.number, NEW.public_id, NEW.account_id, NEW.frequency, NEW.bill_date, NEW.due_date, NEW.period_start,
        NEW.period_end, NEW.gallons, NEW.schedule_gallons, NEW.includes_annual_minimum, NEW.start_reading_id,
        NEW.end_reading_id, NEW.estimated, NEW.rate_schedule_id, NEW.total, NEW.total_currency)
       IS DISTINCT FROM
       (OLD.number, OLD.public_id, OLD.account_id, OLD.frequency, OLD.bill_date, OLD.due_date, OLD.period_start,
        OLD.period_end, OLD.gallons, OLD.schedule_gallons, OLD.includes_annual_minimum, OLD.start_reading_id,
        OLD.end_reading_id, OLD.estimated, OLD.rate_schedule_id, OLD.total, OLD.total_currency) THEN
        RAISE EXCEPTION 'bill % is issued and cannot change; correct it with a credit or debit memo', OLD.number
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF OLD.status = 'void' AND NEW.status <> 'void' THEN
        RAISE EXCEPTION 'bill % is void and stays void', OLD.number USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER billing_bill_issued_is_final BEFORE UPDATE OR DELETE ON billing_bill
    FOR EACH ROW EXECUTE FUNCTION billing_bill_issued_is_final();
"""

REVERSE = """
DROP TRIGGER IF EXISTS billing_bill_issued_is_final ON billing_bill;
DROP FUNCTION IF EXISTS billing_bill_issued_is_final();
DROP TRIGGER IF EXISTS billing_billline_append_only ON billing_billline;
DROP TRIGGER IF EXISTS billing_ledgerentry_append_only ON billing_ledgerentry;
DROP FUNCTION IF EXISTS billing_refuse_change();
"""


class Migration(migrations.Migration):
    dependencies = [("billing", "0001_initial")]
    operations = [postgres_only_sql(FORWARD, REVERSE)]
