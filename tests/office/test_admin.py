"""The back office's admin pages as a clerk and a supervisor use them: every form calls its service, shows the
refusals under their fields (400, never a 500) and says what it did."""

from datetime import date
from decimal import Decimal

import pytest
from django.urls import reverse

from core.clock import today
from office.models import DayClose, Invoice, Refund

pytestmark = pytest.mark.django_db
D = Decimal


def test_a_clerk_asks_for_a_refund_and_a_supervisor_approves_it(overpaid, clerk, supervisor, client):
    client.force_login(clerk)
    add = reverse("admin:office_refund_add")
    page = client.get(add, {"account": overpaid.account_no.replace("-", "")})
    assert page.status_code == 200 and b"Credit today" in page.content and b"$63.87" in page.content
    refused = client.post(add, {"account_no": overpaid.account_no, "amount": "99.00", "reason": "",
                                "requested_on": today().isoformat()})
    assert refused.status_code == 400 and b"more than account" in refused.content
    assert b"a refund needs a reason" in refused.content
    done = client.post(add, {"account_no": overpaid.account_no, "amount": "63.87", "reason": "moved away",
                             "requested_on": today().isoformat()}, follow=True)
    assert b"waits for a supervisor" in done.content
    refund = Refund.objects.get()
    assert client.get(reverse("admin:office_refund_decide", args=[refund.pk])).status_code == 403
    client.force_login(supervisor)
    change = client.get(reverse("admin:office_refund_change", args=[refund.pk]))
    assert b"Approve or refuse" in change.content
    decide = reverse("admin:office_refund_decide", args=[refund.pk])
    no_note = client.post(decide, {"decision": "refuse", "note": "", "refunded_on": today().isoformat()})
    assert no_note.status_code == 400 and b"a refusal needs a note" in no_note.content
    approved = client.post(decide, {"decision": "approve", "note": "", "refunded_on": today().isoformat()},
                           follow=True)
    assert b"on the check register" in approved.content
    register = client.get(reverse("admin:office_refund_register"), {"start": "2026-01-01",
                                                                     "end": today().isoformat()})
    assert register["Content-Type"] == "text/csv" and refund.number in register.content.decode()


def test_the_clerk_invoices_a_fee_and_prints_it(overpaid, clerk, client):
    client.force_login(clerk)
    add = reverse("admin:office_invoice_add")
    refused = client.post(add, {"account_no": "9-9999", "code": "tank_wagon", "invoiced_on": today().isoformat(),
                                "due_on": "2020-01-01"})
    assert refused.status_code == 400 and b"no account" in refused.content
    done = client.post(add, {"account_no": overpaid.account_no, "code": "tank_wagon",
                             "invoiced_on": today().isoformat(), "due_on": today().isoformat()}, follow=True)
    invoice = Invoice.objects.get()
    assert b"print it for the customer" in done.content and b"(PDF)" in done.content
    pdf = client.get(reverse("admin:office_invoice_pdf", args=[invoice.pk]))
    assert pdf["Content-Type"] == "application/pdf" and pdf.content.startswith(b"%PDF")


def test_the_day_is_closed_from_its_page(overpaid, clerk, client):
    client.force_login(clerk)
    add = reverse("admin:office_dayclose_add")
    page = client.get(add, {"day": "2026-02-20"})
    assert b"$0.00 cash and $250.00 in checks (1 payment at" in page.content  # the overpaying check
    refused = client.post(add, {"day": "2026-02-20", "counted_cash": "5.00", "counted_checks": "250.00", "note": ""})
    assert refused.status_code == 400 and b"over by $5.00" in refused.content
    client.post(add, {"day": "2026-02-20", "counted_cash": "5.00", "counted_checks": "250.00",
                       "note": "found a bill"})
    assert DayClose.objects.get().over_short == D("5.00")
    assert b"Over $5.00" in client.get(reverse("admin:office_dayclose_changelist")).content


def test_a_transfer_is_refused_on_its_page_naming_the_fields(overpaid, clerk, client):
    client.force_login(clerk)
    page = client.post(reverse("admin:office_transfer_add"), {
        "from_account_no": overpaid.account_no, "to_account_no": overpaid.account_no, "reason": "x",
        "transferred_on": date(2026, 3, 2).isoformat()})
    assert page.status_code == 400 and b"the same account" in page.content
