"""The termination pages of the admin: each step's button leads to a form that calls one service and shows a
refusal under the field it names; the buttons follow the case's status and the user's permissions; the board,
the delinquency list, the papers and the interruption log.

Cases are set up through the ``termination`` command (tests/termination/steps.py): a Mineola account billed
2026-02-01, due 2026-03-01, unpaid $186.13; served personally 2026-04-01 with the hearing 2026-04-16."""

import re
from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.urls import reverse

from core.dates import fmt_day
from termination.models import Interruption, Notice, TerminationCase, WorkOrder

from .steps import delinquent_account, served_case, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.32", "§ 45.35")]

# What a clerk does on cases (the Clerk group's termination rows): open, step through, log interruptions.
CLERK_TERMINATION = ["termination.view_terminationcase", "termination.add_terminationcase",
                     "termination.change_terminationcase", "termination.view_notice", "termination.view_casebill",
                     "termination.view_workorder", "termination.view_caseevent", "termination.view_interruption",
                     "termination.add_interruption"]


def staff(group: str, username: str, *perms: str):
    user = get_user_model().objects.create_user(username, password="x", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    for name in perms:
        app_label, codename = name.split(".")
        user.user_permissions.add(Permission.objects.get(content_type__app_label=app_label, codename=codename))
    return get_user_model().objects.get(pk=user.pk)


@pytest.fixture
def clerk(client, mineola):
    client.force_login(staff("Clerk", "clerk", *CLERK_TERMINATION))
    return client


@pytest.fixture
def officer(client, mineola):
    client.force_login(staff("Hearing officer", "officer"))
    return client


@pytest.fixture
def supervisor(client, mineola):
    client.force_login(staff("Supervisor", "supervisor", *CLERK_TERMINATION))
    return client


def case_of(number: str) -> TerminationCase:
    return TerminationCase.objects.get(number=number)


def url(name: str, case: TerminationCase, *args) -> str:
    return reverse(f"admin:termination_terminationcase_{name}", args=[case.pk, *args])


def errors(response) -> dict:
    """A refused form's errors: the page answers 400, with the form again and nothing recorded."""
    assert response.status_code == 400, response.status_code
    return response.context["form"].errors


def buttons(client, case: TerminationCase) -> list[str]:
    page = client.get(reverse("admin:termination_terminationcase_change", args=[case.pk]))
    assert page.status_code == 200
    return [label for label, _ in page.context["page_buttons"]]


# --- the list and the case page -----------------------------------------------------------------------------

def test_the_list_shows_each_case_with_its_next_step_and_flags_a_late_request(clerk):
    account, _ = delinquent_account()
    number = served_case(account)
    term("request", number, "--received-on", "2026-04-12", date_="2026-04-12")  # a day after the window closed
    page = clerk.get(reverse("admin:termination_terminationcase_changelist"))
    html = page.content.decode()
    assert number in html and account.account_no in html and "$186.13" in html
    assert "hold the hearing and record the determination" in html
    assert 'alt="True"' in html  # the flagged column
    found = clerk.get(reverse("admin:termination_terminationcase_changelist"), {"q": account.owner.name})
    assert number in found.content.decode()


def test_the_case_page_is_read_only_with_the_buttons_of_its_status(clerk):
    account, _ = delinquent_account()
    case = case_of(served_case(account))
    page = clerk.get(reverse("admin:termination_terminationcase_change", args=[case.pk]))
    html = page.content.decode()
    assert 'name="_save"' not in html
    for heading in ("Grounds", "Notices served", "Bills delinquent when the case was opened", "Hearing",
                    "Determination", "Appeal", "Timeline", "Status history"):
        assert heading in html, heading
    headings = [re.sub(r"\s+", " ", h).strip() for h in re.findall(r"<h2[^>]*>(.*?)</h2>", html, re.S)]
    assert headings[1:] == ["Grounds", "Notices served", "Bills delinquent when the case was opened", "Hearing",
                            "Determination", "Appeal", "Work orders", "Timeline", "Status history"]
    assert "Notice served on the owner" in html and "request window closes" in html
    assert "Apr 11, 2026 (overdue)" in html  # no nightly job has moved it on in this test
    # A clerk serves, records a request and dismisses; the determination and the shut-off are not theirs.
    assert buttons(clerk, case) == ["Serve notice", "Record hearing request", "Dismiss"]


# --- opening ----------------------------------------------------------------------------------------------

def test_opening_a_case_calls_case_open_and_refuses_naming_the_field(clerk):
    account, _ = delinquent_account()
    add = reverse("admin:termination_terminationcase_add")
    assert clerk.get(add).status_code == 200
    refused = clerk.post(add, {"account_no": "9-99999", "grounds": "nonpayment", "opened_on": "2026-03-20"})
    assert "no account '9-99999'" in errors(refused)["account_no"][0]
    refused = clerk.post(add, {"account_no": account.account_no, "grounds": "nonpayment", "opened_on": "2026-03-01"})
    assert "nothing delinquent on 2026-03-01" in errors(refused)["grounds"][0]
    refused = clerk.post(add, {"account_no": account.account_no, "grounds": "violation", "opened_on": "2026-03-20"})
    assert "names the section violated" in errors(refused)["section"][0]
    refused = clerk.post(add, {"account_no": account.account_no, "grounds": "nonpayment", "opened_on": "2027-03-20"})
    assert "after today" in errors(refused)["opened_on"][0]
    assert not TerminationCase.objects.exists()
    opened = clerk.post(add, {"account_no": account.account_no, "grounds": "nonpayment", "opened_on": "2026-03-20"})
    case = TerminationCase.objects.get()
    assert opened.status_code == 302 and opened["Location"].endswith(f"/{case.pk}/change/")
    assert str(case.amount_delinquent) == "186.13" and case.opened_on == date(2026, 3, 20)


def test_the_delinquency_list_opens_cases_for_the_selected_accounts(clerk):
    first, _ = delinquent_account()
    second, _ = delinquent_account(occupant=False)
    listing = reverse("admin:termination_terminationcase_delinquent")
    page = clerk.get(listing, {"as_of": "2026-03-20"}).content.decode()
    assert f'value="{first.account_no}"' in page and f'value="{second.account_no}"' in page
    assert "Open cases for the selected accounts" in page
    assert first.account_no not in clerk.get(listing, {"as_of": "2026-03-01"}).content.decode()
    done = clerk.post(listing, {"as_of": "2026-03-20", "account_no": [first.account_no]}, follow=True)
    html = done.content.decode()
    case = TerminationCase.objects.get(account=first)
    assert f"Case <a href=\"/admin/termination/terminationcase/{case.pk}/change/\">{case.number}</a> opened" in html
    assert not TerminationCase.objects.filter(account=second).exists()
    # The same account again: refused with the reason, the other opened.
    done = clerk.post(listing, {"as_of": "2026-03-20", "account_no": [first.account_no, second.account_no]},
                      follow=True)
    html = done.content.decode()
    assert f"{first.account_no}: not opened: account {first.account_no} already has case {case.number}" in html
    assert TerminationCase.objects.filter(account=second).count() == 1


def test_the_delinquency_list_heads_each_column_with_what_it_holds(clerk):
    """Read column by column: the heading over each cell names what the cell holds, whatever the sort."""
    account, _ = delinquent_account()
    listing = reverse("admin:termination_terminationcase_delinquent")
    for sort in ("account", "amount", "since"):
        page = clerk.get(listing, {"as_of": "2026-03-20", "sort": sort})
        html, rows = page.content.decode(), page.context["rows"]
        start = html.index('<table id="delinquent-accounts">')
        table = html[start:html.index("</table>", start)]
        heads = [re.sub(r"<[^>]+>|[▲▼]", "", h).strip()
                 for h in re.findall(r"<th[^>]*>(.*?)</th>", table, re.S)]
        row = re.search(r"<tbody>(.*?)</tbody>", table, re.S).group(1)
        cells = [re.sub(r"<[^>]+>", " ", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        assert len(heads) == len(cells)
        column = dict(zip(heads, cells, strict=True))
        assert column["Account"] == account.account_no
        assert column["Amount"] == "$186.13"
        assert column["Delinquent since"] == fmt_day(min(b.delinquent_from for b in rows[0].bills))
        assert column["Service address"] == account.premises.service_address
        assert "due" in column["Bills"] and column["Case"] == "—"


def test_the_delinquency_list_narrowed_ordered_and_paged(clerk, monkeypatch):
    """By book, by a least amount, with or without a case; ordered by the amount; a page at a time."""
    from termination.admin.cases import DelinquentListForm

    first, _ = delinquent_account()
    second, _ = delinquent_account(occupant=False)
    Account = type(first)
    Account.objects.filter(pk=second.pk).update(book=2)
    listing = reverse("admin:termination_terminationcase_delinquent")
    page = clerk.get(listing, {"as_of": "2026-03-20", "book": "2"})
    html = page.content.decode()
    assert f'value="{second.account_no}"' in html and f'value="{first.account_no}"' not in html
    assert "1 account, $186.13</strong> of the 2 listed" in html
    term("open", first.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    without = clerk.get(listing, {"as_of": "2026-03-20", "case": "none"}).context["rows"]
    assert [d.account_no for d in without] == [second.account_no]
    assert len(clerk.get(listing, {"as_of": "2026-03-20", "minimum": "200"}).context["rows"]) == 0
    ordered = clerk.get(listing, {"as_of": "2026-03-20", "sort": "account", "dir": "desc"})
    assert [d.account_no for d in ordered.context["rows"]] == sorted([first.account_no, second.account_no],
                                                                      reverse=True)
    assert 'aria-sort="descending"' in ordered.content.decode()
    monkeypatch.setattr(DelinquentListForm, "PAGE_ROWS", 1)
    paged = clerk.get(listing, {"as_of": "2026-03-20"})
    assert len(paged.context["rows"]) == 1 and "Page 1 of 2" in paged.content.decode()
    refused = clerk.get(listing, {"as_of": "2026-03-20", "book": "x"})
    assert refused.status_code == 200 and "Enter a whole number." in refused.content.decode()


# --- each step's form ---------------------------------------------------------------------------------------

def test_serve_notice_refuses_a_hearing_too_soon_naming_the_date_then_serves(clerk):
    account, _ = delinquent_account()
    case = case_of(term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20"))
    assert clerk.get(url("serve", case)).status_code == 200
    form = {"role": "owner", "method": "personal", "served_on": "2026-04-01", "hearing_on": "2026-04-15",
            "hearing_time": "10:00", "hearing_place": "Village Hall"}
    refused = errors(clerk.post(url("serve", case), form))
    assert "§ 45.32" in refused["hearing_on"][0] and "earliest lawful hearing date is 2026-04-16" in refused["hearing_on"][0]
    refused = errors(clerk.post(url("serve", case), {**form, "method": "telegram"}))
    assert "method" in refused
    assert not case.notices.exists()
    done = clerk.post(url("serve", case), {**form, "hearing_on": "2026-04-16"})
    assert done.status_code == 302
    notice = case.notices.get()
    assert (notice.role, notice.served_on, notice.received_on) == ("owner", date(2026, 4, 1), date(2026, 4, 1))
    case.refresh_from_db()
    assert case.status == "noticed" and case.hearing_place == "Village Hall"
    # The occupant is a recipient too: the button stays while the case is before its determination.
    assert "Serve notice" in buttons(clerk, case)


def test_record_receipt_of_a_mailed_notice(clerk):
    account, _ = delinquent_account(occupant=False)
    case = case_of(term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20"))
    term("serve", case.number, "--to", "owner", "--method", "certified_mail", "--served-on", "2026-04-01",
         "--hearing-on", "2026-04-20", "--article-number", "7019 0700 0000 1234 5678", date_="2026-04-01")
    notice = case.notices.get()
    assert "Record receipt" in buttons(clerk, case)
    refused = errors(clerk.post(url("receipt", case), {"notice": notice.pk, "received_on": "2026-03-30"}))
    assert "before service on 2026-04-01" in refused["received_on"][0]
    assert clerk.post(url("receipt", case), {"notice": notice.pk, "received_on": "2026-04-04"}).status_code == 302
    notice.refresh_from_db()
    assert notice.received_on == date(2026, 4, 4)
    assert "Record receipt" not in buttons(clerk, case)


def test_record_hearing_request_then_the_officer_holds_the_hearing_and_determines(clerk, client):
    account, _ = delinquent_account()
    case = case_of(served_case(account))
    refused = errors(clerk.post(url("request", case), {"received_on": "2027-04-10"}))
    assert "after today" in refused["received_on"][0]
    assert clerk.post(url("request", case), {"received_on": "2026-04-10", "text": "I dispute the bill"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "requested" and case.request_text == "I dispute the bill" and not case.request_late
    # A clerk records no determination: no button, and the page itself is refused.
    assert "Record determination" not in buttons(clerk, case)
    assert clerk.get(url("determine", case)).status_code == 403
    assert clerk.post(url("determine", case), {"outcome": "terminate", "determined_on": "2026-04-16",
                                               "mailed_on": "2026-04-16"}).status_code == 403

    client.force_login(staff("Hearing officer", "officer"))
    assert buttons(client, case) == ["Hearing and determination", "Record determination"]
    refused = errors(client.post(url("determine", case), {"outcome": "terminate", "determined_on": "2026-04-15",
                                                          "mailed_on": "2026-04-16"}))
    assert "the hearing is on 2026-04-16" in refused["determined_on"][0]
    assert "2026-04-16 is after 2026-04-15; record the mailing once done" in refused["mailed_on"][0]
    assert client.post(url("hearing", case), {"held_on": "2026-04-16", "attendance": "the owner",
                                              "evidence_notes": "the bill is unpaid", "outcome": "terminate",
                                              "mailed_on": "2026-04-16"}).status_code == 302
    case.refresh_from_db()
    assert (case.status, case.outcome, case.by_default, case.attendance) == ("determined", "terminate", False,
                                                                             "the owner")
    # The hearing officer issues no shut-off order.
    assert "Issue shut-off order" not in buttons(client, case)
    assert client.get(url("shutoff", case)).status_code == 403
    assert client.post(url("shutoff", case), {"issued_on": "2026-05-05"}).status_code == 403
    assert not WorkOrder.objects.exists()


def test_the_hearing_officers_docket_and_one_date_rule_for_the_hearing_and_its_determination(clerk, client):
    """The docket lists the case by its hearing date with the earliest lawful one and the notices served; a hearing
    "held" before the hearing date is refused on the same rule the determination keeps, and nothing is recorded;
    on the day, the hearing and the determination are recorded on one page."""
    from termination.models import CaseEvent

    account, _ = delinquent_account(occupant=False)
    case = case_of(served_case(account, occupant=False))
    clerk.post(url("request", case), {"received_on": "2026-04-10", "text": "I dispute the bill"})
    client.force_login(staff("Hearing officer", "officer"))
    assert "Hearing docket" in client.get(reverse("admin:termination_terminationcase_changelist")).content.decode()
    docket = client.get(reverse("admin:termination_terminationcase_docket"))
    html = docket.content.decode()
    assert docket.status_code == 200 and case.number in html
    row = html[html.index(case.number) - 400:html.index(case.number) + 1500]
    assert "Apr 16, 2026" in row and "Owner: personal service, Apr 1, 2026" in row and "Apr 10, 2026" in row
    [(shown, earliest)] = [(r["case"], r["deadlines"].hearing_earliest) for r in docket.context["rows"]]
    assert shown == case and earliest is not None and earliest <= case.hearing_on
    assert f'{url("hearing", case)}?held_on=' in html
    early = errors(client.post(url("hearing", case), {"held_on": "2026-04-06", "attendance": "the owner",
                                                      "outcome": "terminate", "mailed_on": "2026-04-06"}))
    assert "the hearing is on 2026-04-16" in early["held_on"][0]
    case.refresh_from_db()
    assert case.attendance == "" and not CaseEvent.objects.filter(case=case, kind="hearing").exists()
    done = client.post(url("hearing", case), {"held_on": "2026-04-16", "attendance": "the owner",
                                              "evidence_notes": "the bill is unpaid", "outcome": "arrangement",
                                              "mailed_on": "2026-04-16", "notes": "pays by June"}, follow=True)
    assert done.status_code == 200, done.context["form"].errors
    assert "Hearing held and determination recorded on Apr 16, 2026: " in done.content.decode()
    case.refresh_from_db()
    assert (case.status, case.determined_on, case.attendance) == ("resolved", date(2026, 4, 16), "the owner")
    assert case.number not in client.get(reverse("admin:termination_terminationcase_docket")).content.decode()
    # The clerk reads the docket but records nothing from it.
    page = clerk.get(reverse("admin:termination_terminationcase_docket"))
    assert page.status_code == 200


def test_appeal_and_the_commissions_decision(clerk, client):
    account, _ = delinquent_account()
    case = case_of(terminated_case(account))
    assert "Record appeal" in buttons(clerk, case)
    refused = errors(clerk.post(url("appeal", case), {"filed_on": "2026-05-01", "grounds": ""}))
    assert "grounds" in refused
    refused = errors(clerk.post(url("appeal", case), {"filed_on": "2026-04-19", "grounds": "I paid"}))
    assert "before the determination was mailed (2026-04-20)" in refused["filed_on"][0]
    assert clerk.post(url("appeal", case), {"filed_on": "2026-05-01", "grounds": "I paid part"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "appealed" and case.appeal_grounds == "I paid part"

    client.force_login(staff("Hearing officer", "officer"))
    assert buttons(client, case) == ["Commission decision"]
    refused = errors(client.post(url("decide", case), {"outcome": "uphold", "hearing_on": "2026-05-14",
                                                       "notice_mailed_on": "2026-05-10", "decided_on": "2026-05-20"}))
    assert "earliest lawful date is 2026-05-15" in refused["hearing_on"][0]
    assert client.post(url("decide", case), {"outcome": "uphold", "hearing_on": "2026-05-15",
                                             "notice_mailed_on": "2026-05-10", "decided_on": "2026-05-15"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "final" and case.decision == "uphold"


def test_the_shutoff_page_shows_the_guards_refusals_before_and_after_pressing(supervisor):
    account, _ = delinquent_account()
    case = case_of(terminated_case(account))  # determination mailed 2026-04-20: appeal window to 2026-05-04
    assert "Issue shut-off order" in buttons(supervisor, case)
    # Today every condition holds; the clerk checks the conditions on another day before pressing.
    assert supervisor.get(url("shutoff", case)).context["refusals"] == []
    page = supervisor.get(url("shutoff", case), {"issued_on": "2026-05-01"})
    assert "(4) the appeal window is open until 2026-05-04" in page.content.decode()
    assert 'name="issued_on" value="2026-05-01"' in page.content.decode()
    assert page.context["refusals"] and all(m.startswith("(") for m in page.context["refusals"])
    refused = supervisor.post(url("shutoff", case), {"issued_on": "2026-05-04"})
    assert any("(4) the appeal window is open until 2026-05-04" in e for e in errors(refused)["__all__"])
    assert "the earliest order is 2026-05-05" in refused.content.decode()
    case.refresh_from_db()
    assert case.status == "determined" and not WorkOrder.objects.exists()
    # On the first day after the window the guard holds and the order issues; its paper prints.
    assert supervisor.get(url("shutoff", case), {"issued_on": "2026-05-05"}).status_code == 200
    assert supervisor.post(url("shutoff", case), {"issued_on": "2026-05-05"}).status_code == 302
    case.refresh_from_db()
    order = WorkOrder.objects.get()
    assert case.status == "ordered" and order.issued_on == date(2026, 5, 5)
    page = supervisor.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert url("work_order_pdf", case, order.pk) in page and "Print work order" in page
    paper = supervisor.get(url("work_order_pdf", case, order.pk))
    assert paper["Content-Type"] == "application/pdf" and paper.content.startswith(b"%PDF")


def test_a_case_paid_in_full_offers_no_step(supervisor, django_capture_on_commit_callbacks):
    from billing.services.payments import payment_post

    account, bill = delinquent_account()
    case = case_of(terminated_case(account))
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=bill.total.amount, paid_on=date(2026, 4, 25),
                     reference="CHK-1")
    case.refresh_from_db()
    assert case.status == "paid"  # payment in full before the shut-off closes the case
    assert buttons(supervisor, case) == []
    moved = supervisor.get(url("shutoff", case))
    assert moved.status_code == 302 and moved["Location"].endswith(f"/{case.pk}/change/")


def test_carried_out_restore_and_their_refusals(supervisor):
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("shutoff", number, date_="2026-05-05")
    case = case_of(number)
    assert buttons(supervisor, case) == ["Record appeal", "Shut-off carried out"]
    refused = errors(supervisor.post(url("carried_out", case), {"done_on": "2026-05-04"}))
    assert "before the order was issued on 2026-05-05" in refused["done_on"][0]
    assert supervisor.post(url("carried_out", case), {"done_on": "2026-05-06"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "shut_off"
    assert buttons(supervisor, case) == ["Restore service"]
    page = supervisor.get(url("restore", case)).content.decode()
    assert "What keeps service from being restored" in page and "is still owed on" in page
    refused = errors(supervisor.post(url("restore", case), {"restored_on": "2026-05-07"}))
    assert any("is still owed on 2026-05-07" in e for e in refused["__all__"])
    case.refresh_from_db()
    assert case.status == "shut_off"


def test_dismiss_needs_a_reason(clerk):
    account, _ = delinquent_account()
    case = case_of(served_case(account))
    refused = errors(clerk.post(url("dismiss", case), {"dismissed_on": "2026-04-05", "reason": ""}))
    assert "reason" in refused
    assert clerk.post(url("dismiss", case), {"dismissed_on": "2026-04-05", "reason": "opened in error"}).status_code == 302
    case.refresh_from_db()
    assert case.status == "dismissed" and case.closed_on == date(2026, 4, 5)
    assert buttons(clerk, case) == []


def test_a_step_not_open_to_the_status_is_turned_away_with_a_message(clerk):
    account, _ = delinquent_account()
    case = case_of(term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20"))
    response = clerk.post(url("request", case), {"received_on": "2026-04-10"}, follow=True)
    assert "is not a step for case" in response.content.decode()
    case.refresh_from_db()
    assert case.request_received_on is None


# --- board, papers, timeline, interruptions -------------------------------------------------------------------

def test_the_board_lists_active_cases_by_stage_with_overdue_dates_marked(clerk):
    opened = case_of(term("open", delinquent_account()[0].account_no, "--grounds", "nonpayment", date_="2026-03-20"))
    served = case_of(served_case(delinquent_account()[0]))
    determined = case_of(terminated_case(delinquent_account()[0]))
    dismissed = case_of(served_case(delinquent_account()[0]))
    term("dismiss", dismissed.number, "--reason", "error", date_="2026-04-02")
    page = clerk.get(reverse("admin:termination_terminationcase_board"), {"as_of": "2026-04-25"})
    stages = [(status, [case.number for case, _, _ in rows]) for status, _, rows in page.context["stages"]]
    assert stages == [("open", [opened.number]), ("noticed", [served.number]), ("determined", [determined.number])]
    html = page.content.decode()
    assert html.index("Open: notice to serve") < html.index("Notice served: request window open") \
        < html.index("Termination determined: appeal window open")
    assert dismissed.number not in html
    # The request window of the served case closed on 2026-04-11: overdue on 2026-04-25; the appeal window is not.
    marks = {case.number: overdue for _, _, rows in page.context["stages"] for case, _, overdue in rows}
    assert marks == {opened.number: False, served.number: True, determined.number: False}
    assert "Apr 11, 2026 (overdue)" in html
    # Linked from the list and from the admin's index.
    board = reverse("admin:termination_terminationcase_board")
    assert board in clerk.get(reverse("admin:termination_terminationcase_changelist")).content.decode()
    assert board in clerk.get(reverse("admin:index")).content.decode()


def test_notice_and_determination_papers_and_the_printable_timeline(clerk):
    account, _ = delinquent_account(occupant=False)
    case = case_of(terminated_case(account, occupant=False))
    notice = Notice.objects.get(case=case)
    assert not notice.pdf
    paper = clerk.get(url("notice_pdf", case, notice.pk))
    assert paper["Content-Type"] == "application/pdf" and b"".join(paper.streaming_content).startswith(b"%PDF")
    notice.refresh_from_db()
    assert notice.pdf  # rendered once and stored
    page = clerk.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert url("notice_pdf", case, notice.pk) in page and url("determination_pdf", case) in page
    paper = clerk.get(url("determination_pdf", case))
    assert b"".join(paper.streaming_content).startswith(b"%PDF")
    timeline = clerk.get(url("timeline", case)).content.decode()
    assert "Case opened for nonpayment" in timeline and "Determination: terminate service" in timeline


def test_an_interruption_is_logged_never_as_a_case(clerk):
    account, _ = delinquent_account()
    add = reverse("admin:termination_interruption_add")
    page = clerk.get(add)
    assert [k for k, _ in page.context["form"].fields["kind"].choices] == ["emergency", "repairs", "shortage"]
    refused = errors(clerk.post(add, {"account_no": account.account_no, "kind": "repairs", "started_on": "2026-06-02",
                                      "ended_on": "2026-06-01", "reason": "main break"}))
    assert "before the start on 2026-06-02" in refused["ended_on"][0]
    refused = errors(clerk.post(add, {"account_no": account.account_no, "kind": "whim", "started_on": "2026-06-02",
                                      "reason": "main break"}))
    assert "kind" in refused
    assert clerk.post(add, {"account_no": account.account_no, "kind": "repairs", "started_on": "2026-06-02",
                            "ended_on": "2026-06-03", "reason": "main break"}).status_code == 302
    entry = Interruption.objects.get()
    assert (entry.kind, entry.citation, entry.reason) == ("repairs", "§ 45.31", "main break")
    assert not TerminationCase.objects.exists() and not WorkOrder.objects.exists()
    assert account.account_no in clerk.get(reverse("admin:termination_interruption_changelist")).content.decode()


def test_the_account_page_lists_its_termination_cases(mineola, admin_client):
    account, _ = delinquent_account()
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    page = admin_client.get(reverse("admin:accounts_account_change", args=[account.pk]))
    assert page.status_code == 200
    case = TerminationCase.objects.get(number=number)
    assert reverse("admin:termination_terminationcase_change", args=[case.pk]) in page.content.decode()
    assert number in page.content.decode()


def test_the_delinquency_list_states_the_presets_rule(mineola, admin_client):
    delinquent_account()
    page = admin_client.get(reverse("admin:termination_terminationcase_delinquent") + "?as_of=2026-03-05")
    assert "under § 45.31 (a bill unpaid after its due date)" in page.content.decode()


@pytest.mark.citation("§ 45.32")
def test_every_yes_no_on_the_case_page_reads_true_to_its_label(clerk):
    """A timely request is shown as on time, never beside "received after the request window closed" with a ✖."""
    account, _ = delinquent_account()
    case = case_of(served_case(account))
    assert clerk.post(url("request", case), {"received_on": "2026-04-10", "text": "I dispute the bill"}).status_code == 302
    page = clerk.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert "On time: received within the request window" in page
    assert "No appeal filed" in page
    assert "Received after the request window closed" not in page
    assert "icon-no.svg" not in page and "icon-yes.svg" not in page
    case.refresh_from_db()
    TerminationCase.objects.filter(pk=case.pk).update(request_late=True)
    page = clerk.get(reverse("admin:termination_terminationcase_change", args=[case.pk])).content.decode()
    assert "Late: received after the request window closed (accepted and flagged)" in page
    assert "Yes: the request for a hearing came after its window closed" in page
