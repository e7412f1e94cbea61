"""The clerk's counter: look an account up, take its payment with its tender, print the receipt; the day's
cash report by tender with the drawer; reversing a payment from its page; tenders on every other path.

Dollars: docs/ordinances.md's Mineola worked example, a bill of $186.13 dated 2026-02-01, due 2026-03-01.
"""

import csv
import io
import json
from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.urls import reverse

from billing.cash import cash_day, cash_day_rows
from billing.documents.receipt import receipt_facts, receipt_pdf
from billing.models import Payment, PaymentReversal
from billing.services.payments import counter_reference_propose, payment_counter_post, payment_post
from billing.services.reversals import payment_reverse
from core.commands import today
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db

D = Decimal


@pytest.fixture
def account(mineola):
    account, meter = account_with_meter(book=1, account_no="1-0001")
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account


@pytest.fixture
def clerk_user(mineola):
    return User.objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-only-9", first_name="Ann",
                                         last_name="Clerk")


@pytest.fixture
def clerk(client, clerk_user):
    client.force_login(clerk_user)
    return client


COUNTER = "admin:billing_payment_counter"


def counter_post(clerk, **fields):
    data = {"account_no": "1-0001", "amount": "50.00", "paid_on": today().isoformat(), "tender": "cash",
            "check_number": "", "reference": "", **fields}
    return clerk.post(reverse(COUNTER), data)


# --- the counter page ---------------------------------------------------------------------------------

def test_the_counter_shows_the_account_before_posting(clerk, account):
    html = clerk.get(reverse(COUNTER) + "?account=1-0001").content.decode()
    assert account.owner.name in html and account.premises.service_address in html
    # Nothing paid, no penalty assessed: the whole bill is due now, and all of it past due.
    assert '<td id="counter-due">$186.13</td>' in html and '<td id="counter-past-due">$186.13</td>' in html
    assert 'value="1-0001"' in html
    assert "No account 'nope'" in clerk.get(reverse(COUNTER) + "?account=nope").content.decode()


def test_the_counter_lookup_answers_json_while_typing(clerk, account):
    data = clerk.get(reverse("admin:billing_payment_counter_lookup") + "?account=1-0001").json()
    assert data == {"found": True, "account_no": "1-0001", "name": account.owner.name,
                    "service_address": account.premises.service_address, "amount_due": "186.13",
                    "past_due": "186.13", "due_date": None, "stop": None}
    assert clerk.get(reverse("admin:billing_payment_counter_lookup") + "?account=x").json() == {"found": False}


def test_posting_at_the_counter_proposes_a_reference_and_offers_the_receipt(clerk, account):
    stem = f"CTR-{today():%Y%m%d}-"
    response = counter_post(clerk, amount="100.00")
    payment = Payment.objects.get()
    assert (payment.reference, payment.tender, payment.source, payment.amount.amount, payment.entered_by.username) \
        == (f"{stem}1", "cash", "counter", D("100.00"), "clerk")
    page = clerk.get(response.url).content.decode()
    assert f"Posted $100.00 to account 1-0001, receipt {stem}1" in page
    assert reverse("admin:billing_payment_receipt", args=[payment.pk]) in page and "Print receipt" in page
    counter_post(clerk, amount="20.00", tender="check", check_number="5521")
    second = Payment.objects.get(reference=f"{stem}2")
    assert (second.tender, second.check_number) == ("check", "5521")
    assert counter_reference_propose(on=today()) == f"{stem}3"


def test_cash_tendered_shows_the_change_and_the_receipt_prints_both(clerk, account):
    from billing.documents.receipt import receipt_paper

    refused = counter_post(clerk, amount="50.00", tendered="40.00")
    assert refused.status_code == 200 and "$40.00 is less than the payment of $50.00" in refused.content.decode()
    refused = counter_post(clerk, amount="50.00", tender="check", check_number="9", tendered="60.00")
    assert "is for cash only" in refused.content.decode() and not Payment.objects.exists()
    response = counter_post(clerk, amount="186.13", tendered="200")
    assert "tendered $200.00, change $13.87" in clerk.get(response.url).content.decode()
    payment = Payment.objects.get()
    assert payment.tendered == D("200.00")
    assert ("Cash tendered", "$200.00") in receipt_paper(payment).table
    assert ("Change", "$13.87") in receipt_paper(payment).table


def test_a_check_needs_its_number_and_an_unknown_account_is_named_under_its_field(clerk, account):
    form = counter_post(clerk, tender="check").context["form"]
    assert form.errors["check_number"] == ["is required for a check: the number on the check"]
    form = counter_post(clerk, account_no="9-9999").context["form"]
    assert form.errors["account_no"] == ["unknown account '9-9999'"]
    form = counter_post(clerk, paid_on=(today() + timedelta(days=1)).isoformat()).context["form"]
    assert "is after today" in form.errors["paid_on"][0]
    form = counter_post(clerk, amount="-5").context["form"]
    assert "amount" in form.errors
    assert not Payment.objects.exists()


def test_the_counter_service_refuses_a_bank_file_and_posting_twice_posts_once(account):
    with pytest.raises(ApplicationError) as info:
        payment_counter_post(account_no="1-0001", amount="5.00", paid_on="2026-02-20", tender="bank_file",
                             as_of=date(2026, 2, 20), actor=None)
    assert info.value.errors[0].field == "tender"
    kwargs = {"account_no": "1-0001", "amount": "5.00", "paid_on": "2026-02-20", "tender": "card",
              "reference": "CARD-9", "as_of": date(2026, 2, 20), "actor": None}
    assert payment_counter_post(**kwargs).pk == payment_counter_post(**kwargs).pk
    assert Payment.objects.count() == 1


def test_the_payment_list_links_the_counter_and_the_cash_report(clerk, account):
    html = clerk.get(reverse("admin:billing_payment_changelist")).content.decode()
    assert reverse(COUNTER) in html and reverse("admin:billing_payment_cash") in html


def test_a_staff_member_without_the_permission_gets_403(client, account):
    user = User.objects.create_user("reader", is_staff=True)
    client.force_login(user)
    assert client.get(reverse(COUNTER)).status_code == 403
    assert client.get(reverse("admin:billing_payment_cash")).status_code == 403


# --- the receipt ---------------------------------------------------------------------------------------

def test_the_receipt_says_what_was_paid_and_the_balance_after_it(account, clerk_user):
    payment_post(account_no="1-0001", amount=D("100.00"), paid_on=date(2026, 2, 20), reference="CHK-100",
                 tender="check", check_number="100", actor=clerk_user)
    payment = Payment.objects.get()
    facts = receipt_facts(payment)
    assert (facts.number, facts.paid_on, facts.account_no, facts.amount, facts.tender, facts.balance_after,
            facts.clerk) == ("CHK-100", "Feb 20, 2026", "1-0001", "$100.00", "Check no. 100", "$86.13", "Ann Clerk")
    assert facts.utility_name == "Village of Mineola Water Department" and facts.reversed == ""
    # What it paid, as the ledger applied it: $100.00 of the $186.13 bill, nothing left over.
    bill = payment.account.bills.get()
    assert facts.applied == ((f"bill {bill.number}", "$100.00"),) and facts.left_over == ""
    assert receipt_pdf(payment).startswith(b"%PDF")


def test_the_counter_receipt_fits_a_receipt_printers_roll_and_lists_the_bills_paid(clerk, account):
    import subprocess

    counter_post(clerk, amount="200.00")
    payment = Payment.objects.get()
    facts = receipt_facts(payment)
    bill = payment.account.bills.get()
    assert facts.applied == ((f"bill {bill.number}", "$186.13"),) and facts.left_over == "$13.87"
    narrow = clerk.get(reverse("admin:billing_payment_receipt", args=[payment.pk]))
    letter = clerk.get(reverse("admin:billing_payment_receipt", args=[payment.pk]), {"size": "letter"})
    sizes = []
    for response in (narrow, letter):
        info = subprocess.run(["pdfinfo", "-"], input=response.content, capture_output=True, check=True).stdout
        sizes.append(next(line for line in info.decode().splitlines() if line.startswith("Page size")))
    assert "226.772 x 566.929 pts" in sizes[0] and "612 x 792 pts" in sizes[1]  # 80 mm × 200 mm; Letter
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=narrow.content, capture_output=True,
                          check=True).stdout.decode()
    assert f"Paid: bill {bill.number}" in text and "$186.13" in text and "Left as a credit" in text


def test_the_receipt_page_is_a_pdf(clerk, account):
    counter_post(clerk, amount="10.00")
    payment = Payment.objects.get()
    response = clerk.get(reverse("admin:billing_payment_receipt", args=[payment.pk]))
    assert response["Content-Type"] == "application/pdf" and response.content.startswith(b"%PDF")


# --- the day's cash report -----------------------------------------------------------------------------

@pytest.fixture
def day_of_payments(account, clerk_user):
    other, meter = account_with_meter(book=1, account_no="1-0002")
    on = date(2026, 2, 20)
    for kwargs in ({"reference": "CTR-1", "amount": D("40.00"), "tender": "cash"},
                   {"reference": "CTR-2", "amount": D("25.50"), "tender": "cash"},
                   {"reference": "CTR-3", "amount": D("100.00"), "tender": "check", "check_number": "311"},
                   {"reference": "CTR-4", "amount": D("30.00"), "tender": "card"}):
        payment_post(account_no="1-0001", paid_on=on, actor=clerk_user, source="counter", **kwargs)
    payment_post(account_no="1-0002", paid_on=on, reference="BANK-1", amount=D("60.00"), tender="bank_file",
                 source="import")
    payment_post(account_no="1-0002", paid_on=on, reference="MAIL-1", amount=D("15.00"), tender="check",
                 check_number="77", source="counter")
    # A check taken on the 10th comes back on the 20th; a cash payment of the day was typed twice.
    payment_post(account_no="1-0001", paid_on=date(2026, 2, 10), reference="CTR-0", amount=D("20.00"),
                 tender="check", check_number="9", source="counter")
    payment_reverse(payment=Payment.objects.get(reference="CTR-0"), reversed_on=on, reason="returned",
                    note="NSF", actor=clerk_user)
    payment_reverse(payment=Payment.objects.get(reference="CTR-2"), reversed_on=on, reason="error",
                    note="typed twice", actor=clerk_user)
    return on


def test_the_cash_report_totals_by_tender_with_the_drawer(day_of_payments):
    day = cash_day(on=day_of_payments)
    assert [(t.tender, t.count, t.total) for t in day.tenders] == [
        # cash: 40.00 + 25.50 − 25.50; checks: 100.00 + 15.00 − 20.00 (returned)
        ("cash", 3, D("40.00")), ("check", 3, D("95.00")), ("card", 1, D("30.00")), ("bank_file", 1, D("60.00"))]
    # In the drawer: the cash and checks taken at the counter that day and not handed back.
    assert (day.drawer_cash, day.drawer_checks, day.drawer) == (D("40.00"), D("115.00"), D("155.00"))
    # 40.00 + 25.50 + 100.00 + 30.00 + 60.00 + 15.00 − 20.00 − 25.50
    assert day.total == D("225.00")
    reversals = [(x.reference, x.amount, x.clerk) for x in day.lines if x.source == "reversal"]
    assert reversals == [("CTR-0", D("-20.00"), "Ann Clerk"), ("CTR-2", D("-25.50"), "Ann Clerk")]
    rows = cash_day_rows(day)
    assert rows[-1] == ["Total", "", "", "", "", "225.00", "", "8 lines"]
    assert rows[-2][5] == "155.00"


def test_the_cash_report_page_and_its_csv(clerk, day_of_payments):
    url = reverse("admin:billing_payment_cash")
    html = clerk.get(url + "?on=2026-02-20").content.decode()
    assert '<td style="text-align:right" id="cash-drawer"><strong>$155.00</strong></td>' in html
    assert '<td style="text-align:right" id="cash-total"><strong>$225.00</strong></td>' in html
    assert "−$20.00" in html and "Bank file" in html
    response = clerk.get(url + "?on=2026-02-20&format=csv")
    assert response["Content-Disposition"] == 'attachment; filename="cash-2026-02-20.csv"'
    rows = list(csv.reader(io.StringIO(response.content.decode())))
    assert rows[0] == ["reference", "account_no", "name", "tender", "check_number", "amount", "clerk", "source"]
    assert rows[-1][:6] == ["Total", "", "", "", "", "225.00"]
    assert "is after today" in clerk.get(url + "?on=2999-01-01").content.decode()


# --- reversing from the payment's page -----------------------------------------------------------------

def test_reversing_from_the_payment_page(clerk, account):
    payment_post(account_no="1-0001", amount=D("186.13"), paid_on=date(2026, 2, 20), reference="CHK-1",
                 tender="check", check_number="1")
    payment = Payment.objects.get()
    page = clerk.get(reverse("admin:billing_payment_change", args=[payment.pk])).content.decode()
    url = reverse("admin:billing_payment_reverse", args=[payment.pk])
    assert url in page and reverse("admin:billing_payment_receipt", args=[payment.pk]) in page
    form = clerk.post(url, {"reason": "returned", "reversed_on": "2026-02-10", "note": "NSF"}).context["form"]
    assert "before the payment was made" in form.errors["reversed_on"][0]
    form = clerk.post(url, {"reason": "misposted", "reversed_on": "2026-03-10", "note": "x"}).context["form"]
    assert form.errors["transfer_to_account_no"][0].startswith("is required")
    response = clerk.post(url, {"reason": "returned", "reversed_on": "2026-03-10", "note": "Bank notice: NSF"})
    assert response.status_code == 302
    reversal = PaymentReversal.objects.get()
    assert (reversal.reason, reversal.created_by.username) == ("returned", "clerk")
    page = clerk.get(response.url).content.decode()
    assert 'id="payment-reversed"' in page and url not in page
    listing = clerk.get(reverse("admin:billing_payment_changelist")).content.decode()
    assert "2026-03-10 (returned)" in listing
    assert "a payment is reversed once" in clerk.get(url).content.decode()


# --- tenders on the other paths, and the batch totals --------------------------------------------------

def test_the_batch_page_takes_a_tender_and_a_check_number(clerk, account):
    form = {"form-TOTAL_FORMS": "2", "form-INITIAL_FORMS": "0",
            "form-0-account_no": "1-0001", "form-0-amount": "100.00", "form-0-paid_on": "2026-02-10",
            "form-0-reference": "R1", "form-0-tender": "check", "form-0-check_number": "4411",
            "form-1-account_no": "1-0001", "form-1-amount": "5.00", "form-1-paid_on": "2026-02-10",
            "form-1-reference": "R2", "form-1-tender": "cash"}
    response = clerk.post(reverse("admin:billing_payment_batch"), form, follow=True)
    assert "Posted 2 payments totalling $105.00 (cash: 1 for $5.00; check: 1 for $100.00)" in \
        response.content.decode()
    assert sorted(Payment.objects.values_list("reference", "tender", "check_number")) == [
        ("R1", "check", "4411"), ("R2", "cash", "")]


def test_an_imported_file_is_a_bank_file_and_the_command_prints_the_totals(account, tmp_path):
    path = tmp_path / "bank.csv"
    path.write_text("account_no,amount,paid_on,reference\n1-0001,100.00,2026-02-10,B-1\n1-0001,86.13,2026-02-11,B-2\n",
                    encoding="utf-8")
    out = io.StringIO()
    call_command("import_payments", str(path), "--date", "2026-03-01", stdout=out)
    assert out.getvalue().strip() == (f"{path}: payments 2 created, 0 updated, 0 skipped (already recorded); "
                                      "$186.13 posted")
    assert set(Payment.objects.values_list("tender", flat=True)) == {"bank_file"}
    out = io.StringIO()
    call_command("import_payments", str(path), "--date", "2026-03-01", stdout=out)
    assert "0 created, 0 updated, 2 skipped (already recorded); $0.00 posted" in out.getvalue()


def test_the_admin_upload_says_the_dollars_posted(clerk, account):
    upload = io.BytesIO(b"account_no,amount,paid_on,reference\n1-0001,100.00,2026-02-10,B-1\n")
    upload.name = "bank.csv"
    response = clerk.post(reverse("admin:billing_payment_import"), {"file": upload, "as_of": "2026-03-01"},
                          follow=True)
    assert ("Imported bank.csv: payments 1 created, 0 updated, 0 skipped (already recorded); $100.00 posted."
            in response.content.decode())


def test_the_api_takes_an_optional_tender_and_check_number(client, account, clerk_user):
    client.force_login(clerk_user)
    url = "/api/v1/payments/"
    body = [{"account_no": "1-0001", "amount": "10.00", "paid_on": "2026-02-10", "reference": "API-1"},
            {"account_no": "1-0001", "amount": "11.00", "paid_on": "2026-02-10", "reference": "API-2",
             "tender": "card"},
            {"account_no": "1-0001", "amount": "12.00", "paid_on": "2026-02-10", "reference": "API-3",
             "tender": "check", "check_number": "808"}]
    response = client.post(url, json.dumps(body), content_type="application/json")
    assert response.status_code == 201, response.content
    assert response.json() == {"posted": 3, "skipped": 0}
    assert sorted(Payment.objects.values_list("reference", "tender", "check_number")) == [
        ("API-1", "check", ""), ("API-2", "card", ""), ("API-3", "check", "808")]
    listed = client.get(url).json()["results"]
    assert {p["reference"]: (p["tender"], p["check_number"]) for p in listed}["API-3"] == ("check", "808")
    bad = client.post(url, json.dumps({"account_no": "1-0001", "amount": "1.00", "paid_on": "2026-02-10",
                                       "reference": "API-4", "tender": "gold"}), content_type="application/json")
    assert bad.status_code == 400 and bad.json()["errors"][0]["field"] == "tender"


def test_a_file_imported_by_a_worker_says_the_dollars_posted(clerk, account, settings,
                                                            django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 50
    upload = io.BytesIO(b"account_no,amount,paid_on,reference\n1-0001,100.00,2026-02-10,B-1\n"
                        b"1-0001,86.13,2026-02-11,B-2\n")
    upload.name = "bank.csv"
    with django_capture_on_commit_callbacks(execute=True):
        response = clerk.post(reverse("admin:billing_payment_import"), {"file": upload, "as_of": "2026-03-01"})
    page = clerk.get(response.url).content.decode()
    assert "Payments 2 created, 0 updated, 0 skipped (already recorded); $186.13 posted." in page
