"""A reading that a bill in force used is final, protected by the database itself (PostgreSQL).

A bill's gallons, its page and every reprint of its PDF rest on its start and end readings, so while a bill
that is not void refers to a reading, the reading's meter, date, value and type cannot change and the
reading cannot be deleted. Its note may still be added to. The application refuses first with advice
(``meters.services``); this trigger makes sure nothing else gets through either, as the triggers of
``billing.0002`` do for issued bills.
"""

from django.db import migrations

from core.db import postgres_only_sql

FORWARD = """
CREATE OR REPLACE FUNCTION meters_reading_billed_is_final() RETURNS trigger AS $$
DECLARE
    bills text;
BEGIN
    IF TG_OP = 'UPDATE' AND (NEW.meter_id, NEW.read_on, NEW.value, NEW.read_type)
                            IS NOT DISTINCT FROM (OLD.meter_id, OLD.read_on, OLD.value, OLD.read_type) THEN
        RETURN NEW;
    END IF;
    SELECT string_agg(number, ', ' ORDER BY number) INTO bills
      FROM billing_bill
     WHERE status <> 'void' AND (start_reading_id = OLD.id OR end_reading_id = OLD.id);
    IF bills IS NOT NULL THEN
        RAISE EXCEPTION 'reading % (meter id %, %) was used by bill % and is final: % refused (record a new '
                        'reading and correct the bill with a credit or debit memo, or void the bill and bill '
                        'again)', OLD.id, OLD.meter_id, OLD.read_on, bills, TG_OP
            USING ERRCODE = 'integrity_constraint_violation';
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN OLD;
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER meters_reading_billed_is_final BEFORE UPDATE OR DELETE ON meters_reading
    FOR EACH ROW EXECUTE FUNCTION meters_reading_billed_is_final();
"""

REVERSE = """
DROP TRIGGER IF EXISTS meters_reading_billed_is_final ON meters_reading;
DROP FUNCTION IF EXISTS meters_reading_billed_is_final();
"""


class Migration(migrations.Migration):
    dependencies = [
        ("meters", "0002_drop_redundant_reading_index"),
        ("billing", "0004_issued_on_is_final"),
    ]
    operations = [postgres_only_sql(FORWARD, REVERSE)]
