"""An issued bill's issue date is as fixed as its other figures (PostgreSQL trigger of 0002, extended)."""

from django.db import migrations

from core.db import postgres_only_sql

FUNCTION = """
CREATE OR REPLACE FUNCTION billing_bill_issued_is_final() RETURNS trigger AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        RAISE EXCEPTION 'bill % is issued and cannot be deleted; void it instead', OLD.number
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF (NEW.number, NEW.public_id, NEW.account_id, NEW.frequency, NEW.bill_date, NEW.issued_on, NEW.due_date,
        NEW.period_start, NEW.period_end, NEW.gallons, NEW.schedule_gallons, NEW.includes_annual_minimum,
        NEW.start_reading_id, NEW.end_reading_id, NEW.estimated, NEW.rate_schedule_id, NEW.total,
        NEW.total_currency)
       IS DISTINCT FROM
       (OLD.number, OLD.public_id, OLD.account_id, OLD.frequency, OLD.bill_date, OLD.issued_on, OLD.due_date,
        OLD.period_start, OLD.period_end, OLD.gallons, OLD.schedule_gallons, OLD.includes_annual_minimum,
        OLD.start_reading_id, OLD.end_reading_id, OLD.estimated, OLD.rate_schedule_id, OLD.total,
        OLD.total_currency) THEN
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

PREVIOUS = FUNCTION.replace(" NEW.issued_on,", "").replace(" OLD.issued_on,", "")


class Migration(migrations.Migration):
    dependencies = [("billing", "0003_issue_dates_public_descriptions_corrections_payment_order")]
    operations = [postgres_only_sql(FUNCTION, PREVIOUS)]
