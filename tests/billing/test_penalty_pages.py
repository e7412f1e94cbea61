"""Penalties in the clerk's office: the preview of a night's assessment (what it would post, unwritten), the
register of penalties posted (corrections netted, waivers marked) and the waiver pages.

The Mineola worked example (docs/ordinances.md, § 45.29 E): $186.13 billed 2026-02-01, due 2026-03-01; unpaid:
2026-03-02 penalty $9.31, 2026-04-02 +$1.86, 2026-05-02 +$1.86.
"""

from datetime import date, timedelta
from decimal import Decimal

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.urls import reverse

from billing.models import LedgerEntry, PenaltyWaiver
from billing.penalties.selectors import penalties_preview, penalty_register, preview_totals
from billing.services.waivers import penalty_waiver_request
from core.clock import today
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, read, run

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.29 E")]

PREVIEW = reverse("admin:billing_penalties_preview")
REGISTER = reverse("admin:billing_penalties_register")
WAIVERS = reverse("admin:billing_penaltywaiver_changelist")


def staff(group: str, username: str):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return get_user_model().objects.get(pk=user.pk)


def billed_account():
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account


def assess(on: date) -> str:
    return run("assess_penalties", "--date", on.isoformat())


def late_charges() -> list[tuple]:
    return sorted((e.account.account_no, e.kind, e.posted_on, e.amount.amount, e.citation, e.description)
                  for e in LedgerEntry.objects.filter(kind__in=("penalty", "penalty_correction"))
                  .select_related("account"))


def limit(amount: str) -> None:
    from tests.ordinance_steps import section_set

    section_set("penalty", waiver_approval_above=amount)


# --- The preview -----------------------------------------------------------------------------------------

def test_the_preview_is_what_the_assessment_then_posts_and_writes_nothing(mineola):
    account = billed_account()
    billed_account()  # a second account owing the same
    before = LedgerEntry.objects.count()
    rows = penalties_preview(as_of=date(2026, 5, 10))
    assert LedgerEntry.objects.count() == before
    assert [(r.day, r.kind, r.amount, r.citation, r.correction) for r in rows if r.account_no == account.account_no] \
        == [(date(2026, 3, 2), "penalty", Decimal("9.31"), "§ 45.29 E", False),
            (date(2026, 4, 2), "penalty", Decimal("1.86"), "§ 45.29 E", False),
            (date(2026, 5, 2), "penalty", Decimal("1.86"), "§ 45.29 E", False)]
    totals = preview_totals(rows)
    assert (totals.count, totals.charged, totals.corrections) == (6, Decimal("26.06"), 0)
    assert rows[0].owner == account.owner.name and rows[0].bill_number.startswith("202602")

    assess(date(2026, 5, 10))
    assert late_charges() == sorted((r.account_no, r.kind, r.day, r.amount, r.citation, r.description) for r in rows)
    assert penalties_preview(as_of=date(2026, 5, 10)) == []


def test_the_preview_shows_the_correction_an_approved_waiver_makes(mineola):
    account = billed_account()
    assess(date(2026, 3, 5))
    entry = LedgerEntry.objects.get(kind="penalty")
    # A waiver approved while the account was not yet reconciled (as when it was recorded by another path).
    PenaltyWaiver.objects.create(entry=entry, account=account, bill=entry.bill, amount=entry.amount,
                                 reason="bank error", status="approved", decided_at="2026-03-05T12:00Z")
    rows = penalties_preview(as_of=date(2026, 3, 5))
    assert [(r.day, r.kind, r.amount, r.correction) for r in rows] == [
        (date(2026, 3, 2), "penalty", Decimal("-9.31"), True)]
    assert rows[0].description.endswith("waived: bank error")
    assess(date(2026, 3, 5))
    assert LedgerEntry.objects.get(kind="penalty_correction").amount.amount == Decimal("-9.31")
    assert penalties_preview(as_of=date(2026, 3, 5)) == []


def test_the_preview_plans_up_to_31_days_ahead_and_no_further(mineola):
    penalties_preview(as_of=today() + timedelta(days=31))
    with pytest.raises(ApplicationError, match="more than 31 days ahead") as refused:
        penalties_preview(as_of=today() + timedelta(days=32))
    assert refused.value.errors[0].field == "on"


def test_the_preview_page_says_which_day_it_computes_with_totals_and_a_csv(client, mineola):
    billed_account()
    client.force_login(staff("Clerk", "clerk"))
    page = client.get(PREVIEW, {"on": "2026-05-10"}).content.decode()
    assert "Sunday, May 10, 2026" in page and "assess_penalties --date 2026-05-10" in page
    assert "3 late charges" in page and "$13.03" in page
    today_page = client.get(PREVIEW).content.decode()
    assert "today: what tonight" in today_page
    csv = client.get(PREVIEW, {"on": "2026-05-10", "format": "csv"})
    assert csv["Content-Type"].startswith("text/csv")
    lines = csv.content.decode().splitlines()
    assert lines[0].startswith("account_no,owner,bill,day,kind")
    assert len(lines) == 4 and ",2026-03-02,penalty,,9.31,§ 45.29 E," in lines[1]
    too_far = client.get(PREVIEW, {"on": (today() + timedelta(days=40)).isoformat()})
    assert too_far.status_code == 200 and "more than 31 days ahead" in too_far.content.decode()
    assert LedgerEntry.objects.filter(kind="penalty").count() == 0


def test_a_long_preview_is_shown_a_page_at_a_time_with_the_whole_totals(client, mineola, monkeypatch):
    from billing.admin import penalties as admin_penalties

    monkeypatch.setattr(admin_penalties, "PREVIEW_PAGE_ROWS", 2)
    billed_account()
    client.force_login(staff("Clerk", "clerk"))
    first = client.get(PREVIEW, {"on": "2026-05-10"}).content.decode()
    assert "Rows 1–2 of 3." in first and "3 late charges" in first and "$13.03" in first
    assert "9.31" in first and "May 2, 2026" not in first and "page=2" in first
    second = client.get(PREVIEW, {"on": "2026-05-10", "page": "2"}).content.decode()
    assert "Rows 3–3 of 3." in second and "May 2, 2026" in second and "3 late charges" in second
    assert client.get(PREVIEW, {"on": "2026-05-10", "page": "x"}).status_code == 200


def test_the_penalty_pages_need_the_ledger_permission(client, mineola):
    client.force_login(get_user_model().objects.create_user("nobody", password="x", is_staff=True))
    assert client.get(PREVIEW).status_code == 403
    assert client.get(REGISTER).status_code == 403


# --- The register ----------------------------------------------------------------------------------------

def test_the_register_nets_corrections_marks_waivers_and_totals_by_kind_and_citation(mineola):
    clerk = staff("Clerk", "clerk")
    account = billed_account()
    assess(date(2026, 5, 10))
    first = LedgerEntry.objects.get(kind="penalty", posted_on=date(2026, 3, 2))
    penalty_waiver_request(entry=first, reason="bank error", actor=clerk, as_of=date(2026, 5, 10))
    register = penalty_register(start=date(2026, 3, 1), end=date(2026, 5, 31))
    assert [(r.day, r.charged, r.corrected, r.net, r.waiver_status) for r in register.rows] == [
        (date(2026, 3, 2), Decimal("9.31"), Decimal("-9.31"), Decimal("0.00"), "approved"),
        (date(2026, 4, 2), Decimal("1.86"), Decimal("0"), Decimal("1.86"), ""),
        (date(2026, 5, 2), Decimal("1.86"), Decimal("0"), Decimal("1.86"), "")]
    assert register.rows[0].corrections[0][1].endswith("waived: bank error")
    assert register.rows[0].account_no == account.account_no
    assert not register.rows[0].waivable and register.rows[1].waivable
    [total] = register.totals
    assert (total.kind, total.citation, total.count, total.charged, total.corrected, total.net, total.waived) == (
        "penalty", "§ 45.29 E", 3, Decimal("13.03"), Decimal("-9.31"), Decimal("3.72"), 1)
    assert [r.day for r in penalty_register(start=date(2026, 4, 1), end=date(2026, 4, 30)).rows] == [date(2026, 4, 2)]
    with pytest.raises(ApplicationError, match="before") as refused:
        penalty_register(start=date(2026, 5, 1), end=date(2026, 4, 1))
    assert refused.value.errors[0].field == "to"


def test_the_register_page_with_its_csv_and_waive_links(client, mineola):
    billed_account()
    assess(date(2026, 5, 10))
    client.force_login(staff("Clerk", "clerk"))
    page = client.get(REGISTER, {"from": "2026-03-01", "to": "2026-05-31"}).content.decode()
    assert "3 charges: charged $13.03" in page and "§ 45.29 E" in page
    assert page.count(">Waive</a>") == 3
    csv = client.get(REGISTER, {"from": "2026-03-01", "to": "2026-05-31", "format": "csv"}).content.decode()
    lines = csv.splitlines()
    assert lines[0] == "account_no,owner,bill,day,kind,citation,description,charged,corrected,net,waiver,corrections"
    assert len(lines) == 4
    bad = client.get(REGISTER, {"from": "2026-05-01", "to": "2026-04-01"})
    assert bad.status_code == 200 and "is before" in bad.content.decode()
    assert client.get(REGISTER, {"from": "nonsense", "to": ""}).status_code == 200


# --- Waiving from the register, deciding on the waivers' list ------------------------------------------

def test_waiving_at_once_from_the_register_says_why(client, mineola):
    billed_account()
    assess(date(2026, 5, 10))
    client.force_login(staff("Clerk", "clerk"))
    first = LedgerEntry.objects.get(kind="penalty", posted_on=date(2026, 3, 2))
    url = reverse("admin:billing_penalty_waive", args=[first.pk])
    assert "office policy" in client.get(url).content.decode().lower()
    empty = client.post(url, {"reason": " "})
    assert empty.status_code == 200 and not PenaltyWaiver.objects.exists()
    response = client.post(url, {"reason": "bank error"}, follow=True)
    page = response.content.decode()
    assert "Waived at once" in page and "$25.00" in page and "office policy" in page
    assert PenaltyWaiver.objects.get().status == "approved"
    assert LedgerEntry.objects.get(kind="penalty_correction").amount.amount == Decimal("-9.31")
    again = client.post(url, {"reason": "again"})
    assert again.status_code == 200 and "nothing is left to waive" in again.content.decode()


def test_above_the_limit_it_waits_and_a_supervisor_approves_on_the_waivers_list(client, mineola):
    limit("5.00")
    billed_account()
    assess(date(2026, 5, 10))
    client.force_login(staff("Clerk", "clerk"))
    first = LedgerEntry.objects.get(kind="penalty", posted_on=date(2026, 3, 2))
    page = client.post(reverse("admin:billing_penalty_waive", args=[first.pk]), {"reason": "hospital stay"},
                       follow=True).content.decode()
    assert "Waits for a supervisor" in page and "$5.00" in page and "office policy" in page
    waiver = PenaltyWaiver.objects.get()
    assert waiver.status == "pending"
    listing = client.get(WAIVERS).content.decode()
    assert "hospital stay" in listing and "Approve the selected" not in listing  # a clerk does not decide
    denied = client.post(WAIVERS, {"action": "approve", "_selected_action": [waiver.pk], "apply": "1"})
    assert PenaltyWaiver.objects.get().status == "pending" and denied.status_code in (200, 302)

    client.force_login(staff("Supervisor", "supervisor"))
    listing = client.get(WAIVERS, {"status__exact": "pending"}).content.decode()
    assert "Approve the selected" in listing and "Refuse the selected" in listing
    form = client.post(WAIVERS, {"action": "refuse", "_selected_action": [waiver.pk]})
    assert "note" in form.content.decode()
    no_note = client.post(WAIVERS, {"action": "refuse", "_selected_action": [waiver.pk], "apply": "1", "note": ""})
    assert no_note.status_code == 200 and PenaltyWaiver.objects.get().status == "pending"
    done = client.post(WAIVERS, {"action": "approve", "_selected_action": [waiver.pk], "apply": "1",
                                 "note": "letter on file"}, follow=True).content.decode()
    assert "is approved" in done
    assert PenaltyWaiver.objects.get().status == "approved"
    assert LedgerEntry.objects.get(kind="penalty_correction").amount.amount == Decimal("-9.31")
    assert client.get(reverse("admin:billing_penaltywaiver_change", args=[waiver.pk])).status_code == 200
