"""Fees charged, not only quoted: Mineola's fee rules (§ 45.28), the pending charge, and the next bill carrying
it as a ``fee`` line — on the ledger, in the statement, on the PDF and in the portal; by command, admin and API.

Dollars are written out by hand from docs/ordinances.md: the worked example's bill is $186.13 (62,500 gal on
2026-02-01), so with the $50.00 connect charge it is $236.13.
"""

import html
import io
import shutil
import subprocess
from datetime import date
from decimal import Decimal as D

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.management import CommandError, call_command
from django.db import IntegrityError, connection, transaction
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from rest_framework.test import APIClient

from accounts.models import Account, PortalLink
from billing.fees import FEE_RULES, fee_in_force, fee_quote
from billing.ledger.posting import bill_source, charge_source
from billing.models import Bill, BillLine, Fee, LedgerEntry, PendingCharge
from billing.runs.issue import bills_plan
from billing.services.adjustments import bill_void
from billing.services.bill_pdfs import bill_pdf_bytes
from billing.services.charges import charge_cancel, charge_create
from billing.signals import charge_posted
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run, statement
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db

FEB_1, AUG_1 = date(2026, 2, 1), date(2026, 8, 1)


def quote(code, **facts):
    return fee_quote(fee_in_force(code=code, on=date(2026, 1, 20)), **facts)


def refusal(code, **facts) -> tuple[str, str]:
    with pytest.raises(ApplicationError) as refused:
        quote(code, **facts)
    (error,) = refused.value.errors
    return error.field, error.message


# --- the rules ---------------------------------------------------------------------------------------

@pytest.mark.citation("§ 45.28 A(3)")
def test_connect_and_disconnect_charges_are_fifty_dollars(mineola):
    assert quote("connect") == D("50.00")
    assert quote("disconnect") == D("50.00")


@pytest.mark.citation("§ 45.28 A(3)")
def test_a_flat_fee_takes_no_amount_base_or_size(mineola):
    with pytest.raises(ApplicationError) as refused:
        quote("connect", amount=D("60.00"), size="2")
    assert {e.field for e in refused.value.errors} == {"amount", "size"}
    assert all("§ 45.28 A(3)" in e.message for e in refused.value.errors)


@pytest.mark.citation("§ 45.28 B")
def test_construction_water_is_pro_rata_on_the_cost(mineola):
    assert quote("construction", base=D("250000")) == D("375.00")
    assert quote("construction", base=D("1234567")) == D("1851.85")  # 1,851.8505 half-up
    assert quote("construction", base=D("1000")) == D("1.50")


@pytest.mark.citation("§ 45.28 B")
def test_construction_water_needs_a_base(mineola):
    field, message = refusal("construction")
    assert field == "base" and "§ 45.28 B" in message
    field, message = refusal("construction", base=D("1.00"))  # $0.0015 rounds to nothing
    assert field == "base" and "$0.00" in message


@pytest.mark.citation("§ 45.28 C(1)")
@pytest.mark.parametrize("size,amount", [("2", "100.00"), ("3", "125.00"), ("4", "175.00"), ("5", "250.00"),
                                         ("6", "300.00"), ("8", "500.00"), ('8"', "500.00"), ("4 in", "175.00")])
def test_sprinkler_service_charge_by_supply_size(mineola, size, amount):
    assert quote("sprinkler", size=size) == D(amount)


@pytest.mark.citation("§ 45.28 C(1)")
@pytest.mark.parametrize("size", ["7", "1 1/2", "10"])
def test_a_sprinkler_size_the_code_does_not_list_is_refused_naming_the_section(mineola, size):
    field, message = refusal("sprinkler", size=size)
    assert field == "size" and "§ 45.28 C(1)" in message and "has no charge for a" in message
    assert '2", 3", 4", 5", 6", 8"' in message


@pytest.mark.citation("§ 45.28 C(1)")
@pytest.mark.parametrize("size", [None, "", "large", "-2", "0"])
def test_a_sprinkler_charge_needs_a_size_in_inches(mineola, size):
    field, message = refusal("sprinkler", size=size)
    assert field == "size" and "§ 45.28 C(1)" in message


@pytest.mark.citation("§ 45.28 D")
def test_tank_wagon_is_twenty_five_dollars_words_over_figures(mineola):
    assert quote("tank_wagon") == D("25.00")


def test_the_rule_kinds_are_registered_and_a_clerk_amount_rule_takes_the_clerks_amount():
    assert FEE_RULES.names() == ["base_plus_size", "by_size", "clerk", "deposit", "flat", "meter_test", "pro_rata"]
    rule = FEE_RULES.build("clerk", {"code": "inspection", "citation": "§ 1", "description": "Inspection"})
    assert rule.quote(amount=D("75.00")) == D("75.00")
    with pytest.raises(ApplicationError, match="§ 1"):
        rule.quote()
    with pytest.raises(ApplicationError, match="at most \\$999,999.99"):
        rule.quote(amount=D("1000000.00"))
    with pytest.raises(ApplicationError, match="unknown fee rule 'tiered'"):
        FEE_RULES.build("tiered", {})


def test_the_preset_installs_each_fee_with_its_rule(mineola):
    rules = {fee.code: fee.rule for fee in Fee.objects.all()}
    assert rules == {"connect": "flat", "disconnect": "flat", "construction": "pro_rata", "sprinkler": "by_size",
                     "tank_wagon": "flat"}
    sprinkler = fee_in_force(code="sprinkler", on=date(2026, 1, 1))
    assert sprinkler.by_size == {"2": "100.00", "3": "125.00", "4": "175.00", "5": "250.00", "6": "300.00",
                                 "8": "500.00"}


# --- charging: the command, and what is refused ---------------------------------------------------------

def charge(*args) -> str:
    out = io.StringIO()
    call_command("charge_fee", *args, stdout=out)
    return out.getvalue()


def refused(*args) -> str:
    with pytest.raises(CommandError) as error:
        charge(*args)
    assert PendingCharge.objects.count() == 0, "nothing is saved when a charge is refused"
    return str(error.value)


@pytest.fixture
def worked(mineola):
    """docs/ordinances.md's worked example: read 1,000,000 gal on 2025-07-10 and 1,062,500 on 2026-01-12."""
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    return account, meter


def test_charge_fee_says_what_was_charged_and_that_it_waits_for_the_next_bill(worked):
    account, _ = worked
    out = charge(account.account_no, "construction", "--base", "250,000", "--note", "permit 26-14",
                 "--date", "2026-01-20")
    assert "Charged $375.00 to account" in out and "§ 45.28 B" in out and "next bill" in out
    pending = PendingCharge.objects.get()
    assert (pending.amount.amount, pending.quantity, pending.rate, pending.base) == (
        D("375.00"), D("250000.00"), D("0.0015"), D("250000.00"))
    assert (pending.charged_on, pending.earliest_bill_on, pending.bill, pending.note) == (
        date(2026, 1, 20), date(2026, 1, 20), None, "permit 26-14")
    assert pending.status == "pending" and not LedgerEntry.objects.filter(kind="fee").exists()


def test_a_charge_is_announced_once_committed(worked, django_capture_on_commit_callbacks):
    heard = []

    def listen(sender, *, charge_id, **kwargs):
        heard.append(charge_id)

    charge_posted.connect(listen)
    try:
        with django_capture_on_commit_callbacks(execute=False) as callbacks:
            made = charge_create(account=worked[0], code="connect", as_of=date(2026, 1, 20), actor=None)
        assert heard == []
        for callback in callbacks:
            callback()
        assert heard == [made.pk]
    finally:
        charge_posted.disconnect(listen)


def test_a_fee_by_size_is_described_with_its_size(worked):
    account, _ = worked
    charge(account.account_no, "sprinkler", "--size", '4"', "--date", "2026-01-20")
    pending = PendingCharge.objects.get()
    assert (pending.description, pending.size, pending.amount.amount) == (
        'Automatic sprinkler system, annual service charge, 4"', "4", D("175.00"))


def test_an_unknown_code_is_refused_listing_the_presets_fees(worked):
    message = refused(worked[0].account_no, "tap", "--date", "2026-01-20")
    assert "code: no fee 'tap'" in message
    assert "connect, construction, disconnect, sprinkler, tank_wagon" in message


def test_a_missing_base_is_refused_naming_the_section(worked):
    message = refused(worked[0].account_no, "construction", "--date", "2026-01-20")
    assert "base:" in message and "§ 45.28 B" in message


def test_a_bad_size_is_refused_naming_the_section(worked):
    message = refused(worked[0].account_no, "sprinkler", "--size", "7", "--date", "2026-01-20")
    assert "size:" in message and "§ 45.28 C(1)" in message


def test_bad_figures_an_unknown_or_closed_account_and_the_future_are_refused(worked):
    account, _ = worked
    assert "base:" in refused(account.account_no, "construction", "--base", "12,50", "--date", "2026-01-20")
    assert "no account 'nope'" in refused("nope", "connect", "--date", "2026-01-20")
    assert "--date" in refused(account.account_no, "connect", "--date", "2999-01-01")
    Account.objects.filter(pk=account.pk).update(status=Account.Status.CLOSED)
    assert "account_no:" in refused(account.account_no, "connect", "--date", "2026-01-20")


def test_every_refusal_is_listed_at_once(worked):
    account, _ = worked
    Account.objects.filter(pk=account.pk).update(status=Account.Status.CLOSED)
    account.refresh_from_db()
    with pytest.raises(ApplicationError) as error:
        charge_create(account=account, code="sprinkler", as_of=date(2999, 1, 1), actor=None, size="7")
    assert {e.field for e in error.value.errors} == {"account_no", "charged_on", "size"}
    assert PendingCharge.objects.count() == 0


# --- the next bill carries it, once -------------------------------------------------------------------------

def test_the_next_bill_carries_the_fee_once_end_to_end(worked, media):
    account, meter = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")

    bill = Bill.objects.get()
    pending = PendingCharge.objects.get()
    assert pending.bill == bill and pending.status == "billed"
    lines = list(bill.lines.values_list("position", "kind", "description", "citation", "quantity", "rate", "amount"))
    assert lines[-1] == (4, "fee", "Connect charge (initiation of service)", "§ 45.28 A(3)", D("1.00"),
                         D("50.000000"), D("50.00"))
    assert [line[1] for line in lines] == ["minimum", "consumption", "consumption", "fee"]
    assert bill.total.amount == D("236.13")
    ledger = {(e.kind, e.source): e.amount.amount for e in bill.ledger.all()}
    assert ledger == {("water", bill_source(bill.pk)): D("186.13"), ("fee", charge_source(pending.pk)): D("50.00")}
    fee_entry = bill.ledger.get(kind="fee")
    assert (fee_entry.posted_on, fee_entry.citation) == (FEB_1, "§ 45.28 A(3)")

    data = statement(account.account_no, "2026-02-10")
    (shown,) = data["bills"]
    assert shown["total"] == "236.13" and shown["balance"] == "236.13" and data["balance"] == "236.13"
    assert shown["lines"][-1] == {"kind": "fee", "description": "Connect charge (initiation of service)",
                                  "citation": "§ 45.28 A(3)", "quantity": "1", "rate": "50.00", "amount": "50.00"}
    assert [c for c in data["charges"] if c["kind"] == "fee"] == [], "the fee is shown once: on its bill"

    # Billing the date again, and the next billing date, carry nothing again.
    assert "1 already billed" in run("run_billing", "--date", "2026-02-01")
    read(meter, date(2026, 7, 10), 1_100_000)
    run("run_billing", "--date", "2026-08-01")
    august = Bill.objects.get(bill_date=AUG_1)
    assert not august.lines.filter(kind="fee").exists()
    assert LedgerEntry.objects.filter(kind="fee").count() == 1
    assert BillLine.objects.filter(kind="fee").count() == 1


@pytest.mark.skipif(shutil.which("pdftotext") is None, reason="pdftotext (poppler-utils) is not installed")
def test_the_fee_is_on_the_bill_pdf_with_its_citation(worked, media):
    account, _ = worked
    charge(account.account_no, "tank_wagon", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")
    text = subprocess.run(["pdftotext", "-layout", "-", "-"], input=bill_pdf_bytes(bill=Bill.objects.get()),
                          capture_output=True, check=True).stdout.decode()
    rows = text.splitlines()
    (at,) = [i for i, row in enumerate(rows) if "Water-supply tank wagon" in row]
    assert "$25.00" in rows[at] and "§ 45.28 D" in rows[at + 1]  # the line, then its citation and computation
    assert "$211.13" in text  # 186.13 + 25.00, the total due


def test_the_fee_is_on_the_portal_bill_page(worked, media):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")
    user = get_user_model().objects.create_user("fay@example.org", "fay@example.org", "pw")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:bill", kwargs={"public_id": Bill.objects.get().public_id})).content.decode()
    assert page.count("Connect charge (initiation of service)") == 1
    assert "§ 45.28 A(3)" in page and "$50.00" in page and "$236.13" in page


def test_a_charge_made_after_a_bill_date_waits_for_the_next_bill(worked):
    account, meter = worked
    charge(account.account_no, "disconnect", "--date", "2026-02-05")
    run("run_billing", "--date", "2026-02-01")  # run late, after the charge: the bill is dated before it
    assert Bill.objects.get().total.amount == D("186.13")
    assert PendingCharge.objects.get().bill is None
    read(meter, date(2026, 7, 10), 1_100_000)
    run("run_billing", "--date", "2026-08-01")
    august = Bill.objects.get(bill_date=AUG_1)
    assert august.lines.get(kind="fee").amount.amount == D("50.00")
    assert PendingCharge.objects.get().bill == august


def test_several_charges_each_their_own_line_and_entry(worked):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    charge(account.account_no, "construction", "--base", "250000", "--date", "2026-01-21")
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    assert [(line.description, line.quantity, line.rate, line.amount.amount) for line in bill.lines.filter(kind="fee")] \
        == [("Connect charge (initiation of service)", D("1.00"), D("50.000000"), D("50.00")),
            ("Water for building construction, per dollar of construction cost", D("250000.00"), D("0.001500"),
             D("375.00"))]
    assert bill.total.amount == D("611.13")
    assert sorted(e.amount.amount for e in bill.ledger.filter(kind="fee")) == [D("50.00"), D("375.00")]
    assert bill.ledger.get(kind="water").amount.amount == D("186.13")


def test_preview_shows_the_charges_without_writing(worked):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    out = run("run_billing", "--date", "2026-02-01", "--dry-run")
    assert "1 bills totalling $236.13" in out and "1 pending fee(s)" in out
    assert not Bill.objects.exists() and PendingCharge.objects.get().bill is None


def test_a_cancelled_charge_is_not_carried_and_a_billed_one_cannot_be_cancelled(worked):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    charge(account.account_no, "tank_wagon", "--date", "2026-01-20")
    connect, tank = PendingCharge.objects.order_by("id")
    with pytest.raises(ApplicationError, match="needs a reason"):
        charge_cancel(charge=connect, reason=" ", actor=None)
    charge_cancel(charge=connect, reason="charged to the wrong account", actor=None)
    run("run_billing", "--date", "2026-02-01")
    assert Bill.objects.get().total.amount == D("211.13")
    with pytest.raises(ApplicationError, match="carries the charge"):
        charge_cancel(charge=tank, reason="changed my mind", actor=None)
    with pytest.raises(ApplicationError, match="was cancelled"):
        charge_cancel(charge=connect, reason="again", actor=None)


def test_a_voided_bills_charges_go_on_the_corrected_bill(worked):
    """The void reverses the whole bill, fee included; the fee is charged again and the corrected bill carries
    it, so the account owes it once."""
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")
    first = Bill.objects.get()
    bill_void(bill=first, reason="misread meter", as_of=date(2026, 2, 10), actor=None)
    assert first.ledger.get(kind="void").amount.amount == D("-236.13")
    original, again = PendingCharge.objects.order_by("id")
    assert original.bill == first and again.bill is None and again.reissue_of == original
    assert (again.amount, again.description, again.earliest_bill_on) == (
        original.amount, original.description, original.earliest_bill_on)

    run("run_billing", "--date", "2026-02-01")
    corrected = Bill.objects.exclude(status=Bill.Status.VOID).get()
    assert corrected.total.amount == D("236.13") and corrected.lines.filter(kind="fee").count() == 1
    assert corrected.ledger.get(kind="fee").source == charge_source(again.pk)
    assert statement(account.account_no, "2026-02-20")["balance"] == "236.13"


def test_the_run_loads_the_chunks_charges_in_one_query(mineola):
    def preview_queries(count: int) -> int:
        ids = []
        for _ in range(count):
            account, meter = account_with_meter(book=1)
            read(meter, date(2026, 1, 12), 1_062_500)
            charge_create(account=account, code="connect", as_of=date(2026, 1, 20), actor=None)
            charge_create(account=account, code="tank_wagon", as_of=date(2026, 1, 20), actor=None)
            ids.append(account.pk)
        with CaptureQueriesContext(connection) as queries:
            result = bills_plan(account_ids=ids, run_on=FEB_1)
        assert (result.bills, result.charges, result.total) == (count, 2 * count, count * D("261.13"))
        return len(queries)

    assert preview_queries(1) == preview_queries(3)


def test_the_database_keeps_a_billed_charge_on_its_bill(worked):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): the trigger is PostgreSQL's")
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")
    carried = PendingCharge.objects.get()
    for change in ({"bill": None}, {"amount": D("1.00")}):
        with pytest.raises(IntegrityError, match="on a bill"), transaction.atomic():
            PendingCharge.objects.filter(pk=carried.pk).update(**change)
    with pytest.raises(IntegrityError, match="cannot be deleted"), transaction.atomic():
        PendingCharge.objects.filter(pk=carried.pk).delete()


def test_a_charge_is_billed_or_cancelled_never_both(worked):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    run("run_billing", "--date", "2026-02-01")
    with pytest.raises(IntegrityError), transaction.atomic():
        PendingCharge.objects.update(cancelled_at="2026-02-02T00:00Z", cancel_reason="late")


# --- the admin -------------------------------------------------------------------------------------------

@pytest.fixture
def clerk(worked):
    client = Client()
    client.force_login(clerk_user())
    return client


def test_clerk_charges_a_fee_from_the_account_page(clerk, worked):
    account, _ = worked
    page = clerk.get(reverse("admin:accounts_account_change", args=[account.pk])).content.decode()
    url = reverse("admin:billing_pendingcharge_charge", args=[account.pk])
    assert f'href="{url}"' in page and "Charge a fee" in page
    form = html.unescape(clerk.get(url).content.decode())
    assert "Water for building construction, per dollar of construction cost (§ 45.28 B): 0.0015 × base" in form
    assert 'by size: 2" $100.00, 3" $125.00, 4" $175.00, 5" $250.00, 6" $300.00, 8" $500.00' in form

    response = clerk.post(url, {"code": "construction", "charged_on": "2026-01-20"})
    assert response.status_code == 400 and "§ 45.28 B" in response.content.decode()
    assert PendingCharge.objects.count() == 0
    response = clerk.post(url, {"code": "sprinkler", "size": "7", "charged_on": "2026-01-20"})
    assert "§ 45.28 C(1)" in response.content.decode() and PendingCharge.objects.count() == 0

    response = clerk.post(url, {"code": "construction", "base": "$250,000", "charged_on": "2026-01-20",
                                "note": "permit 26-14"})
    assert response.status_code == 302
    assert response.url == reverse("admin:accounts_account_change", args=[account.pk])
    made = PendingCharge.objects.get()
    assert (made.amount.amount, made.created_by.username, made.note) == (D("375.00"), "clerk", "permit 26-14")
    assert "Charged $375.00" in clerk.get(response.url).content.decode()


def test_clerk_lists_and_cancels_pending_charges(clerk, worked):
    account, _ = worked
    charge(account.account_no, "connect", "--date", "2026-01-20")
    charge(account.account_no, "tank_wagon", "--date", "2026-01-20")
    connect, tank = PendingCharge.objects.order_by("id")
    changelist = reverse("admin:billing_pendingcharge_changelist")
    listed = clerk.get(changelist, {"status": "pending"}).content.decode()
    assert "Connect charge" in listed and "Water-supply tank wagon" in listed
    asked = clerk.post(changelist, {"action": "cancel", "_selected_action": [connect.pk]})
    assert "Cancel these charges" in asked.content.decode()
    clerk.post(changelist, {"action": "cancel", "_selected_action": [connect.pk], "apply": "1",
                            "reason": "wrong account"})
    connect.refresh_from_db()
    assert connect.status == "cancelled" and connect.cancel_reason == "wrong account"
    assert connect.cancelled_by.username == "clerk"
    assert "Connect charge" in clerk.get(changelist, {"status": "cancelled"}).content.decode()
    assert "Connect charge" not in clerk.get(changelist, {"status": "pending"}).content.decode()
    assert tank.pk and clerk.get(reverse("admin:billing_pendingcharge_change", args=[tank.pk])).status_code == 200


# --- the API ---------------------------------------------------------------------------------------------

@pytest.fixture
def api(worked):
    client = APIClient()
    client.force_authenticate(clerk_user())
    return client


def test_api_charges_a_fee_and_lists_the_accounts_pending_charges(api, worked):
    account, _ = worked
    url = f"/api/v1/accounts/{account.account_no}/charges/"
    response = api.post(url, {"code": "construction", "base": "250000", "charged_on": "2026-01-20"}, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert {k: body[k] for k in ("code", "kind", "amount", "quantity", "rate", "base", "citation", "status",
                                 "charged_on", "earliest_bill_on", "bill")} == {
        "code": "construction", "kind": "fee", "amount": "375.00", "quantity": "250000", "rate": "0.0015",
        "base": "250000.00", "citation": "§ 45.28 B", "status": "pending", "charged_on": "2026-01-20",
        "earliest_bill_on": "2026-01-20", "bill": None}
    assert PendingCharge.objects.get().created_by.username == "clerk"
    listed = api.get(url).json()
    assert listed["count"] == 1 and listed["results"][0]["amount"] == "375.00"
    run("run_billing", "--date", "2026-02-01")
    assert api.get(url).json()["count"] == 0
    billed = api.get(url, {"status": "billed"}).json()["results"]
    assert billed[0]["bill"] == Bill.objects.get().number


@pytest.mark.parametrize("body,field,words", [
    ({"code": "sprinkler", "size": "7"}, "size", "§ 45.28 C(1)"),
    ({"code": "construction"}, "base", "§ 45.28 B"),
    ({"code": "tap"}, "code", "connect, construction, disconnect, sprinkler, tank_wagon"),
    ({"code": "connect", "charged_on": "2999-01-01"}, "charged_on", "after today"),
    ({"code": "connect", "charged_on": "soon"}, "charged_on", "not a date"),
    ({"code": "construction", "base": "1e3"}, "base", "dollars and cents"),
    ({"base": "10"}, "code", ""),
])
def test_api_refusals_are_400_naming_the_field_and_nothing_is_saved(api, worked, body, field, words):
    response = api.post(f"/api/v1/accounts/{worked[0].account_no}/charges/", body, format="json")
    assert response.status_code == 400, response.content
    errors = response.json()["errors"]
    assert any(e["field"] == field and words in e["message"] for e in errors), errors
    assert PendingCharge.objects.count() == 0


def test_api_charges_need_the_role_and_a_known_account(api, worked):
    assert api.post("/api/v1/accounts/nope/charges/", {"code": "connect"}, format="json").status_code == 404
    assert api.get("/api/v1/accounts/nope/charges/").status_code == 404
    assert api.get(f"/api/v1/accounts/{worked[0].account_no}/charges/", {"status": "old"}).status_code == 400
    inspector = get_user_model().objects.create_user("inspector", is_staff=True)
    inspector.groups.add(Group.objects.get(name="Backflow inspector"))
    other = APIClient()
    other.force_authenticate(inspector)
    url = f"/api/v1/accounts/{worked[0].account_no}/charges/"
    assert other.get(url).status_code == 403
    assert other.post(url, {"code": "connect"}, format="json").status_code == 403


def test_api_fee_schedule_shows_each_rule_and_quotes_by_size(api):
    fees = {f["code"]: f for f in api.get("/api/v1/fees/", {"as_of": "2026-01-20"}).json()["results"]}
    assert fees["sprinkler"]["rule"] == "by_size"
    assert fees["sprinkler"]["sizes"][0] == {"size": "2", "amount": "100.00"}
    assert fees["construction"]["terms"] == "0.0015 × base" and fees["connect"]["terms"] == "$50.00"
    quoted = api.get("/api/v1/fees/", {"code": "sprinkler", "size": "8", "as_of": "2026-01-20"}).json()
    assert quoted["amount"] == "500.00"
    refused_ = api.get("/api/v1/fees/", {"code": "sprinkler", "size": "7", "as_of": "2026-01-20"})
    assert refused_.status_code == 400 and "§ 45.28 C(1)" in refused_.json()["errors"][0]["message"]
