"""History brought over with the opening balances: the old system's past bills and payments, shown (statement,
portal, usage chart), read by the next bill (its starting reading, the high-usage average), never owed.

Mineola's book 1 is billed on February 1 and August 1 from the readings of mid-January and mid-July (§ 45.29 A,
D). The old system billed 1-0001 on 2026-02-01 for 62,500 gal (July 10 → January 12) and was paid $186.13 for
it on February 20; the account owes nothing on the cutover, June 15.
"""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from billing.models import Bill, BillingException, LedgerEntry, PriorPayment
from conversion.models import ConversionBatch
from conversion.posting import conversion_post, conversion_rollback
from conversion.reconcile import reconciliation
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run, statement
from tests.conversion.test_check import HEADER, counts
from tests.conversion.test_post import books

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: conversion")]
CUTOVER = date(2026, 6, 15)
TODAY = date(2026, 12, 3)
HISTORY = ("account_no,bill_no,bill_date,due_date,period_start,period_end,gallons,kind,amount\n"
           "1-0001,L-100,2026-02-01,2026-03-01,2025-07-10,2026-01-12,62500,water,186.13\n"
           "1-0002,L-200,2026-02-01,2026-03-01,2025-07-10,2026-01-12,30000,water,76.00\n"
           "1-0002,L-200,2026-02-01,2026-03-01,2025-07-10,2026-01-12,30000,fee,25.00\n")
PAYMENTS = "account_no,paid_on,amount,reference\n1-0001,2026-02-20,186.13,CK-1001\n"
# 1-0002 still owes its February bill: the open items carry it under the same number.
OPEN = HEADER + ("1-0002,L-200,2026-02-01,2026-03-01,water,76.00,Water\n"
                 "1-0002,L-200,2026-02-01,2026-03-01,fee,25.00,Meter test\n")


@pytest.fixture
def meters(mineola):
    made = {}
    for number in ("1-0001", "1-0002"):
        account, meter = account_with_meter(book=1, account_no=number)  # 1,000,000 on 2025-07-10
        read(meter, date(2026, 1, 12), 1_062_500 if number == "1-0001" else 1_030_000)
        made[number] = (account, meter)
    return made


def post(**files):
    return conversion_post(OPEN.encode(), cutover=CUTOVER, today=TODAY,
                           **{"bills": HISTORY.encode(), "payments": PAYMENTS.encode(), **files})


def test_past_bills_and_payments_are_shown_not_owed(meters):
    post()
    past = Bill.objects.get(number="L-100")
    assert (past.gallons, past.period_start, past.period_end, past.total.amount, past.has_usage) == (
        62_500, date(2025, 7, 10), date(2026, 1, 12), Decimal("186.13"), True)
    assert not LedgerEntry.objects.filter(bill=past).exists()  # paid in the old system: not on the books
    both = Bill.objects.get(number="L-200")  # owed: its period and gallons from the history, its charges open
    assert (both.gallons, both.period_end, both.total.amount) == (30_000, date(2026, 1, 12), Decimal("101.00"))
    one = statement("1-0001", "2026-06-15")
    assert one["balance"] == "0.00"
    assert one["payments"] == []  # paid to the old system: not a payment on our books (the statement PDF lists it)
    assert [b["gallons"] for b in one["bills"]] == [62_500]
    assert Decimal(statement("1-0002", "2026-06-15")["balance"]) == Decimal("101.00")
    from billing.documents.statement import statement_view

    view = statement_view(account=Bill.objects.get(number="L-100").account, as_of=date(2026, 6, 15))
    assert view.prior_payments == ["Feb 20, 2026: $186.13 (CK-1001)"]
    result = reconciliation(cutover=CUTOVER)
    assert result.matches and result.history == (2, 2, 1, 1) and result.paid == (Decimal("186.13"),) * 2


def test_the_portal_shows_the_old_systems_bills_chart_and_payments(meters):
    post()
    account = meters["1-0001"][0]
    client = Client()
    client.force_login(_customer_of(account), backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Payments to the previous billing system" in page and "CK-1001" in page and "$186.13" in page
    assert "62,500" in page  # the usage chart's table and the bill's row


def _customer_of(account):
    from django.contrib.auth import get_user_model

    from accounts.models import PortalLink

    user = get_user_model().objects.create_user(username="hal@example.org", email="hal@example.org", password="x")
    PortalLink.objects.create(user=user, account=account)
    return user


def test_the_first_bill_after_the_cutover_starts_from_the_old_systems_last_reading(meters):
    """August 1: 1-0001 read 1,092,500 on July 12. From the old bill's closing reading (1,062,500 on January 12)
    that is 30,000 gal, $45.00 + 10,000 × $3.10 = $76.00 (§ 45.28 A); without the history the bill would
    start at the meter's first reading and charge 92,500 gal."""
    post()
    read(meters["1-0001"][1], date(2026, 7, 12), 1_092_500)
    read(meters["1-0002"][1], date(2026, 7, 12), 1_030_000 + 400_000)
    run("run_billing", "--date", "2026-08-01")
    ours = Bill.objects.get(account=meters["1-0001"][0], bill_date=date(2026, 8, 1))
    assert (ours.gallons, ours.total.amount, ours.start_reading.read_on) == (30_000, Decimal("76.00"),
                                                                             date(2026, 1, 12))
    # 1-0002: 400,000 gal in 181 days against the old bill's 30,000 in 186 is over 4× its average: held.
    held = BillingException.objects.get(account=meters["1-0002"][0])
    assert held.kind == "high_usage" and "average of 161 gal/day on earlier bills" in held.detail


def test_a_bill_in_both_files_is_one_bill_or_the_files_are_refused(meters):
    before = counts()
    wrong = HISTORY.replace("1-0002,L-200,2026-02-01,2026-03-01,2025-07-10,2026-01-12,30000,water",
                            "1-0002,L-200,2026-02-02,2026-03-01,2025-07-10,2026-01-12,30000,water")
    with pytest.raises(ApplicationError) as refused:
        post(bills=wrong.encode())
    said = [str(e) for e in refused.value.errors]
    assert "line 4: history.bill_date: bill L-200 has other dates, period or gallons on line 3; every row of a bill " \
           "has the same" in said
    shifted = HISTORY.replace(",2026-02-01,2026-03-01,", ",2026-02-02,2026-03-02,")
    with pytest.raises(ApplicationError) as refused:
        post(bills=shifted.encode())
    assert any(e.field == "history.bill_no" and "on line 2 of the opening balances" in e.message
               for e in refused.value.errors)
    bad = HISTORY + "9-9,L-9,2026-02-01,2026-01-01,2026-01-12,2025-07-10,lots,rent,-1\n"
    with pytest.raises(ApplicationError) as refused:
        post(bills=bad.encode(), payments=(PAYMENTS + "1-0001,2027-01-01,5.00,\n").encode())
    said = {str(e) for e in refused.value.errors}
    for expected in ("line 5: history.due_date: 2026-01-01 is before the bill date 2026-02-01",
                     "line 5: history.period_end: 2025-07-10 is not after the period's start 2026-01-12",
                     "line 5: history.gallons: 'lots' is not a whole number of gallons",
                     "line 5: history.kind: 'rent' is not a kind of a past bill's charge; use water, sewer, fee, "
                     "fine"):
        assert expected in said, (expected, said)
    assert counts() == before


def test_rollback_takes_the_history_with_it(meters):
    before = books()
    batch = post().batch
    assert PriorPayment.objects.count() == 1 and Bill.objects.count() == 2
    conversion_rollback(batch.pk)
    assert books() == before
    assert ConversionBatch.objects.get().status == "rolled_back"


def test_check_and_post_take_the_history_on_the_command_line(meters, tmp_path):
    for name, text in (("open.csv", OPEN), ("bills.csv", HISTORY), ("payments.csv", PAYMENTS)):
        (tmp_path / name).write_text(text)
    files = [str(tmp_path / "open.csv"), "--history", str(tmp_path / "bills.csv"), "--payments",
             str(tmp_path / "payments.csv")]
    out = io.StringIO()
    call_command("convert", "check", *files, "--date", "2026-06-14", stdout=out)
    assert "history: 2 past bills (92,500 gal, $287.13 billed), 1 payments ($186.13)" in out.getvalue()
    (tmp_path / "payments.csv").write_text(PAYMENTS + "1-0009,2026-01-01,5.00,X\n")
    err = io.StringIO()
    with pytest.raises(CommandError):
        call_command("convert", "post", *files, "--cutover", "2026-06-15", stdout=io.StringIO(), stderr=err)
    assert "line 3: payments.account_no: unknown account '1-0009'" in err.getvalue()
    (tmp_path / "payments.csv").write_text(PAYMENTS)
    out = io.StringIO()
    call_command("convert", "post", *files, "--cutover", "2026-06-15", stdout=out)
    assert "posted conversion" in out.getvalue()


DEVICES = ("account_no,serial,type,size,make,model,location,installed_on,tested_on,result,tester_certification,"
           "tester_name,tester_certification_expires\n"
           "1-0001,RP-1,RPZ,1,Watts,009,Basement,2020-05-01,2026-04-10,pass,BT-77,Pat Tester,2027-03-31\n"
           "1-0002,DC-2,DCA,3/4,,,,2021-03-01,,,,,\n")


def test_backflow_devices_come_over_with_their_last_tests(meters):
    """Mineola's devices are tested once a year (office policy: Chapter 45 sets no frequency); RP-1's last test, April 10, 2026, makes it due again
    April 10, 2027; DC-2 has no test in the old system, so it is due from its installation: overdue."""
    from backflow.models import Device, DeviceTest, Tester
    from backflow.services.compliance import device_due

    before = counts()
    batch = post(devices=DEVICES.encode()).batch
    rp, dc = Device.objects.get(serial="RP-1"), Device.objects.get(serial="DC-2")
    assert (rp.account.account_no, rp.type, rp.installed_on, rp.location) == ("1-0001", "RPZ", date(2020, 5, 1),
                                                                              "Basement")
    test = DeviceTest.objects.get()
    assert (test.device, test.tested_on, test.result, test.status, test.tester.name) == (
        rp, date(2026, 4, 10), "pass", "accepted", "Pat Tester")
    assert device_due(rp, as_of=date(2026, 6, 15)).due_on == date(2027, 4, 10)
    assert device_due(dc, as_of=date(2026, 6, 15)).overdue
    assert reconciliation(cutover=CUTOVER).devices == (2, 2)
    conversion_rollback(batch.pk)
    assert not (Device.objects.exists() or DeviceTest.objects.exists() or Tester.objects.exists())
    # Everything is as before, but the record of the rollback itself (the batch's status change).
    after = counts()
    assert after.pop("core.StatusChange") == before.pop("core.StatusChange") + 1
    assert {k: v for k, v in after.items() if not k.startswith("conversion.")} == {
        k: v for k, v in before.items() if not k.startswith("conversion.")}


def test_a_bad_devices_file_is_refused_naming_every_row(meters):
    bad = DEVICES.splitlines()[0] + "\n" + (
        "1-0001,RP-1,XYZ,1,,,,2020-05-01,2026-04-10,maybe,,,\n"
        "1-0002,RP-1,DCA,1,,,,2021-03-01,2020-01-01,pass,BT-9,,\n"
        "9-9999,DC-9,DCA,1,,,,2027-01-01,,,,,\n"
        "1-0002,DC-3,DCA,1,,,,2021-03-01,2026-04-10,pass,BT-1,,\n")
    from backflow.models import Tester

    Tester.objects.create(name="Lapsed", certification_no="BT-1", certification_expires=date(2025, 1, 1))
    before = counts()
    with pytest.raises(ApplicationError) as refused:
        post(devices=bad.encode())
    said = {str(e) for e in refused.value.errors}
    for expected in ("line 2: devices.type: 'XYZ' is not a device type; use AG, RPZ, DCA, AVB, PVB",
                     "line 2: devices.result: 'maybe' is not a result; use pass or fail",
                     "line 2: devices.tester_certification: is required: a test counts only by a certified tester",
                     "line 3: devices.serial: serial RP-1 is on line 2 too; a device is registered once",
                     "line 3: devices.tested_on: 2020-01-01 is before the device was installed (2021-03-01)",
                     "line 3: devices.tester_name: tester BT-9 is not registered here: give the name and the "
                     "certification's expiry",
                     "line 4: devices.installed_on: 2027-01-01 is after 2026-06-14: history is before the cutover",
                     "line 4: devices.account_no: unknown account '9-9999'",
                     "line 5: devices.tester_certification: the certification BT-1 registered here expired on "
                     "2025-01-01, before the test on 2026-04-10: a test counts only by a certified tester"):
        assert expected in said, (expected, said)
    assert counts() == before


def test_a_monthly_meter_is_not_charged_the_years_minimum_twice(mineola):
    """§ 45.28 A(1), § 45.29 C: a 1 1/2" meter is billed monthly, its $300.00 annual minimum (80,000 gal
    allowance) on the first bill of the billable year, which for book 1 starts February 1 (§ 45.29 A(1)). The
    old system billed February 1 to June 1, 15,000 gal a month ($300.00, then $0.00: 75,000 gal of the
    allowance used). Our July 1 bill, 15,000 gal more: 90,000 gal in the year, 10,000 over the allowance,
    10 × $3.85 = $38.50 — not a second $300.00 minimum."""
    account, meter = account_with_meter(book=1, account_no="1-0007", size="1 1/2", start=date(2025, 12, 15))
    months = [(date(2026, m, 1), date(2026, m - 2, 15) if m > 2 else date(2025, 12, 15), date(2026, m - 1, 15))
              for m in range(2, 7)]
    history = "account_no,bill_no,bill_date,due_date,period_start,period_end,gallons,kind,amount\n" + "".join(
        f"1-0007,L-7-{bill_date.month},{bill_date},{bill_date.replace(month=bill_date.month + 1)},{start},{end},"
        f"15000,water,{'300.00' if bill_date.month == 2 else '0.00'}\n" for bill_date, start, end in months)
    for n, (_, _, end) in enumerate(months, start=1):
        read(meter, end, 1_000_000 + 15_000 * n)
    conversion_post(HEADER.encode(), cutover=CUTOVER, today=TODAY, bills=history.encode())
    first = Bill.objects.get(number="L-7-2")
    assert first.includes_annual_minimum and not Bill.objects.filter(
        number__in=["L-7-3", "L-7-4", "L-7-5", "L-7-6"], includes_annual_minimum=True).exists()
    read(meter, date(2026, 6, 15), 1_090_000)
    run("run_billing", "--date", "2026-07-01")
    ours = Bill.objects.get(account=account, bill_date=date(2026, 7, 1))
    assert (ours.gallons, ours.total.amount) == (15_000, Decimal("38.50"))
    assert [(line.description, line.amount.amount) for line in ours.lines.all()] == [
        ("10,000 gal over the year's 80,000 gal allowance at $3.85 per 1,000", Decimal("38.50"))]
