"""Work orders for the field: made at the office, completed from the field with what was found (the reading, the new
meter, the water off or on), listed for the crew in route order with the shut-offs ordered on termination cases;
the shut-off list printed with a door hanger for each stop."""

import io
import shutil
import subprocess
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.urls import reverse

from accounts.models import Account
from billing.models import Bill
from core.errors import ApplicationError
from fieldwork.documents import shutoff_pdf
from fieldwork.models import FieldOrder
from fieldwork.services import day_sheet, field_order_complete, field_order_create, shutoff_list
from meters.models import Installation, Reading
from tests.billing.steps import account_with_meter, read
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account, term, terminated_case

pytestmark = pytest.mark.django_db
needs_poppler = pytest.mark.skipif(shutil.which("pdftotext") is None,
                                   reason="pdftotext (poppler-utils) is not installed")


def fields(exc) -> set[str]:
    return {e.field for e in exc.value.errors}


def order(account, kind, on=date(2026, 2, 10)):
    return field_order_create(account=account, kind=kind, reason="reading looks high", scheduled_on=on, actor=None)


def test_a_reread_records_the_reading(mineola):
    account, meter = account_with_meter(book=1)
    wo = order(account, "reread")
    with pytest.raises(ApplicationError) as no_value:
        field_order_complete(order=wo, done_on=date(2026, 2, 10), actor=None)
    assert fields(no_value) == {"value"}
    with pytest.raises(ApplicationError) as backwards:  # below the install reading of 1,000,000
        field_order_complete(order=wo, done_on=date(2026, 2, 10), actor=None, value=999_000)
    assert "value" in fields(backwards)
    done = field_order_complete(order=wo, done_on=date(2026, 2, 10), actor=None, value=1_020_000,
                                result="register read twice")
    assert (done.status, done.reading.value, done.reading.read_on) == ("done", 1_020_000, date(2026, 2, 10))
    assert Reading.objects.filter(meter=meter).count() == 2


def test_a_meter_change_bills_both_meters_on_the_next_bill(mineola):
    # Mineola: the old meter read 1,000,000 on Jul 10, 2025 and 1,040,000 when changed on Dec 1, 2025; the new one
    # starts at 0 and reads 22,500 on Jan 12, 2026: 40,000 + 22,500 = 62,500 gal, the worked example's $186.13.
    account, meter = account_with_meter(book=1)
    wo = order(account, "meter_change", on=date(2025, 12, 1))
    with pytest.raises(ApplicationError) as refused:
        field_order_complete(order=wo, done_on=date(2025, 12, 1), actor=None, value=1_040_000, new_serial=meter.serial,
                             new_size="9", start_value=None)
    assert fields(refused) == {"start_value"}
    with pytest.raises(ApplicationError) as refused:
        field_order_complete(order=wo, done_on=date(2025, 12, 1), actor=None, value=1_040_000, new_serial=meter.serial,
                             new_size="9", start_value=0)
    assert fields(refused) == {"new_serial", "new_size"}
    done = field_order_complete(order=wo, done_on=date(2025, 12, 1), actor=None, value=1_040_000,
                                new_serial="NEW-1", new_size="5/8", start_value=0)
    assert Installation.objects.get(meter=meter).removed_on == date(2025, 12, 1)
    assert Installation.objects.get(meter=done.new_meter).account_id == account.pk
    read(done.new_meter, date(2026, 1, 12), 22_500)
    call_command("run_billing", "--date", "2026-02-01", "--no-progress", stdout=io.StringIO())
    bill = Bill.objects.get(account=account)
    assert (bill.gallons, bill.total.amount) == (62_500, Decimal("186.13"))


def test_water_shut_off_and_turned_on_at_the_customers_request(mineola):
    account, _ = account_with_meter(book=1)
    with pytest.raises(ApplicationError) as on_already:
        order(account, "turn_on")
    assert "on already" in str(on_already.value)
    field_order_complete(order=order(account, "shut_off"), done_on=date(2026, 2, 10), actor=None)
    account.refresh_from_db()
    assert account.status == Account.Status.SHUT_OFF
    with pytest.raises(ApplicationError) as twice:
        order(account, "shut_off")
    assert "off already" in str(twice.value)
    field_order_complete(order=order(account, "turn_on", on=date(2026, 2, 12)), done_on=date(2026, 2, 12), actor=None)
    account.refresh_from_db()
    assert account.status == Account.Status.ACTIVE


def test_orders_are_refused_naming_the_field(mineola):
    bare = account_with_meter(book=1)[0]
    Installation.objects.filter(account=bare).update(removed_on=date(2026, 1, 1))
    with pytest.raises(ApplicationError) as no_meter:
        field_order_create(account=bare, kind="reread", reason="", scheduled_on=date(2026, 2, 1), actor=None)
    assert fields(no_meter) == {"kind", "reason"}
    account, _ = delinquent_account(occupant=False)
    term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    with pytest.raises(ApplicationError) as on_a_case:
        order(account, "shut_off")
    assert "termination case open" in str(on_a_case.value)
    order(account, "reread")
    with pytest.raises(ApplicationError) as second:
        order(account, "reread")
    assert "already has an open order" in str(second.value)


@pytest.fixture
def round_of_stops(mineola):
    """Three stops: a re-read at route stop 2, a shut-off ordered on a case at stop 1, a meter change at a stop
    with no number (after the numbered ones)."""
    owed, _ = delinquent_account(occupant=False)
    number = terminated_case(owed, occupant=False)
    term("shutoff", number, date_="2026-05-05")
    reread, _ = account_with_meter(book=1)
    change, _ = account_with_meter(book=1)
    for account, stop in ((owed, 1), (reread, 2), (change, None)):
        account.premises.route_order = stop
        account.premises.save()
    order(reread, "reread", on=date(2026, 5, 5))
    order(change, "meter_change", on=date(2026, 5, 5))
    return owed, reread, change, number


def test_the_day_sheet_and_the_shutoff_list_follow_the_route(round_of_stops):
    owed, reread, change, number = round_of_stops
    stops = day_sheet(on=date(2026, 5, 5))
    assert [s.account.pk for s in stops] == [owed.pk, reread.pk, change.pk]
    assert stops[0].what == f"Shut off for nonpayment (case {number})" and stops[0].owed > 0
    assert [s.account.pk for s in shutoff_list(as_of=date(2026, 5, 5))] == [owed.pk]
    assert day_sheet(on=date(2026, 5, 4))[0].work_order is not None  # orders scheduled later wait


@needs_poppler
def test_the_shutoff_list_prints_with_a_door_hanger_per_stop(round_of_stops):
    owed, *_ = round_of_stops
    stops = shutoff_list(as_of=date(2026, 5, 5))
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=shutoff_pdf(stops, as_of=date(2026, 5, 5)),
                          capture_output=True, check=True).stdout.decode()
    assert "SHUT-OFF LIST" in text and "WATER SERVICE SHUT OFF" in text
    assert text.index("SHUT-OFF LIST") < text.index("WATER SERVICE SHUT OFF")
    assert owed.premises.service_address in text and f"${stops[0].owed:,.2f}" in text


def test_the_crew_completes_a_stop_from_the_day_sheet(round_of_stops, client):
    owed, reread, change, number = round_of_stops
    client.force_login(staff("fred", "Field crew"))
    sheet = client.get(reverse("admin:fieldwork_fieldorder_day"))
    assert sheet.status_code == 200 and f"Record the shut-off ({number})".encode() in sheet.content
    wo = FieldOrder.objects.get(account=reread)
    complete = reverse("admin:fieldwork_fieldorder_complete", args=[wo.pk])
    refused = client.post(complete, {"done_on": "2026-05-05", "value": ""})
    assert refused.status_code == 400 and b"the reading on the meter is needed" in refused.content
    done = client.post(complete, {"done_on": "2026-05-05", "value": "1010000", "result": "ok"}, follow=True)
    assert f"{wo.number} done".encode() in done.content
    wo.refresh_from_db()
    assert wo.status == "done" and wo.reading.value == 1_010_000
    shutoffs = client.get(reverse("admin:fieldwork_fieldorder_shutoffs"), {"on": "2026-05-05"})
    assert number.encode() in shutoffs.content
    pdf = client.get(reverse("admin:fieldwork_fieldorder_shutoffs"), {"on": "2026-05-05", "format": "pdf"})
    assert pdf["Content-Type"] == "application/pdf"
    assert client.post(reverse("admin:fieldwork_fieldorder_add"), {}).status_code == 403  # the office makes orders


def test_the_crew_reads_each_stop_records_the_shut_off_and_the_restore_and_never_cancels(round_of_stops, client):
    """The crew's phone page: each stop with the meter's previous reading, the range expected today and where the
    meter is; the shut-off the case board assigned recorded from it, service restored once paid; cancelling an order
    is the office's (no button, 403), as docs/roles.md says."""
    from billing.services.payments import payment_post
    from termination.models import TerminationCase

    owed, reread, change, number = round_of_stops
    read(Installation.objects.get(account=reread).meter, date(2026, 3, 1), 1_005_000)
    reread.premises.meter_location = "basement, left of the stairs"
    reread.premises.save()
    crew = staff("fred", "Field crew")
    client.force_login(crew)
    sheet = client.get(reverse("admin:fieldwork_fieldorder_day"), {"on": "2026-05-05"}).content.decode()
    assert "Meter: basement, left of the stairs" in sheet
    assert "Previous reading 1,005,000 on Mar 1, 2026; expected today" in sheet
    order_ = FieldOrder.objects.get(account=reread)
    complete = client.get(reverse("admin:fieldwork_fieldorder_complete", args=[order_.pk])).content.decode()
    assert "Previous reading" in complete and "1,005,000 on Mar 1, 2026" in complete and "Expected today" in complete
    assert "Where the meter is" in complete
    # No cancelling from the field.
    page = client.get(reverse("admin:fieldwork_fieldorder_change", args=[order_.pk])).content.decode()
    assert "Cancel the order" not in page and "Complete" in page
    assert client.get(reverse("admin:fieldwork_fieldorder_cancel", args=[order_.pk])).status_code == 403
    # The shut-off, recorded from the sheet's link on the day it was done.
    case = TerminationCase.objects.get(number=number)
    carried = reverse("admin:termination_terminationcase_carried_out", args=[case.pk])
    assert f'href="{carried}?done_on=2026-05-05"' in sheet
    done = client.post(carried, {"done_on": "2026-05-05", "at": "10:40", "note": "curb valve locked, tag left"},
                       follow=True)
    assert "Service shut off on May 5, 2026." in done.content.decode()
    case.refresh_from_db()
    assert case.status == "shut_off"
    event = case.events.get(kind="shut_off")
    assert "at 10:40 AM" in event.what and event.what.endswith("curb valve locked, tag left") and event.actor == crew
    # Restored: refused while owed (the guard's reasons shown), done once paid.
    restore = reverse("admin:termination_terminationcase_restore", args=[case.pk])
    refused = client.post(restore, {"restored_on": "2026-05-06"})
    assert refused.status_code == 400
    payment_post(account_no=owed.account_no, amount=Decimal("500.00"), paid_on=date(2026, 5, 6), reference="PAID")
    restored = client.post(restore, {"restored_on": "2026-05-06"}, follow=True)
    assert "Service restored on May 6, 2026." in restored.content.decode()
    # The office cancels.
    client.force_login(staff("clara", "Clerk"))
    page = client.get(reverse("admin:fieldwork_fieldorder_change", args=[order_.pk])).content.decode()
    assert "Cancel the order" in page


def test_a_plan_signed_after_the_order_holds_the_stop_on_every_sheet_and_the_carry_out(round_of_stops, client):
    """The customer signs a payment plan at the counter the day the shut-off is ordered and pays its down payment:
    the crew's day sheet and the shut-off list show the stop as held with why, the door hanger is not printed, and
    carrying the shut-off out is refused naming the plan (One office: the guard at every step that acts)."""
    from arrears.services import plan_create
    from billing.services.payments import payment_post
    from termination.models import TerminationCase
    from termination.services.shutoff import shutoff_carry_out

    owed, reread, change, number = round_of_stops
    plan = plan_create(account=owed, total=Decimal("186.13"), down_payment=Decimal("36.13"),
                       down_due_on=date(2026, 5, 6), installments=3, first_due_on=date(2026, 6, 1),
                       as_of=date(2026, 5, 5))
    payment_post(account_no=owed.account_no, amount=Decimal("36.13"), paid_on=date(2026, 5, 5), reference="DOWN")
    (stop,) = shutoff_list(as_of=date(2026, 5, 5))
    assert any(f"(6) payment plan {plan.number}" in why and "in good standing" in why for why in stop.held)
    client.force_login(staff("fred", "Field crew"))
    sheet = client.get(reverse("admin:fieldwork_fieldorder_day"), {"on": "2026-05-05"}).content.decode()
    assert "Held — do not shut off:" in sheet and f"payment plan {plan.number}" in sheet
    listing = client.get(reverse("admin:fieldwork_fieldorder_shutoffs"), {"on": "2026-05-05"}).content.decode()
    assert "Held — do not shut off:" in listing and f"payment plan {plan.number}" in listing
    case = TerminationCase.objects.get(number=number)
    with pytest.raises(ApplicationError) as carried:
        shutoff_carry_out(case=case, done_on=date(2026, 5, 5), actor=None)
    assert f"(6) payment plan {plan.number}" in str(carried.value)
    owed.refresh_from_db()
    case.refresh_from_db()
    assert owed.status == "active" and case.status == "ordered"


@needs_poppler
def test_a_held_stop_is_listed_as_held_and_gets_no_door_hanger(round_of_stops):
    from arrears.services import plan_create
    from billing.services.payments import payment_post

    owed, *_ = round_of_stops
    plan_create(account=owed, total=Decimal("186.13"), down_payment=Decimal("36.13"), down_due_on=date(2026, 5, 6),
                installments=3, first_due_on=date(2026, 6, 1), as_of=date(2026, 5, 5))
    payment_post(account_no=owed.account_no, amount=Decimal("36.13"), paid_on=date(2026, 5, 5), reference="DOWN")
    stops = shutoff_list(as_of=date(2026, 5, 5))
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=shutoff_pdf(stops, as_of=date(2026, 5, 5)),
                          capture_output=True, check=True).stdout.decode()
    assert "HELD, DO NOT SHUT OFF" in " ".join(text.split()) and "WATER SERVICE SHUT OFF" not in text
