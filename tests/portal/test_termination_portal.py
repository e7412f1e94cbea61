"""A termination case as the customer sees it in the portal: the notice box on the account page, the case page
with its grounds, bills, hearing, deadlines and papers, and the written request for the hearing made online.

The case is docs/ordinances.md's worked example (Mineola Article II): a $186.13 bill due 2026-03-01 left unpaid, the
case opened 2026-03-20, the notice served personally on the owner and the occupant on 2026-04-01 with the
hearing on 2026-04-16 — so the written request is due by 2026-04-11 (§ 45.32)."""

from datetime import date
from decimal import Decimal

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.services.payments import payment_post
from core import clock
from termination.models import CaseEvent, Notice, TerminationCase
from tests.termination.steps import delinquent_account, served_case, term, terminated_case

from .conftest import customer

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    return client


@pytest.fixture
def served(mineola, media):
    """Dora's account with the worked example's case served on her and her occupant; Dora is signed in."""
    account, _ = delinquent_account()
    number = served_case(account)
    dora = customer("dora@example.org")
    PortalLink.objects.create(user=dora, account=account)
    return {"account": account, "number": number, "client": signed_in(dora), "user": dora,
            "case": TerminationCase.objects.get(number=number)}


def case_url(number: str, name: str = "termination_case", **kwargs) -> str:
    return reverse(f"portal:{name}", kwargs={"number": number, **kwargs})


def ask(client: Client, number: str, text: str):
    return client.post(case_url(number, "termination_request"), {"text": text})


@pytest.mark.citation("§ 45.32")
def test_the_account_page_shows_the_open_case_in_a_notice_box(served):
    payment_post(account_no=served["account"].account_no, amount=Decimal("50.00"), paid_on=date(2026, 4, 5),
                 reference="CHK-9")
    page = served["client"].get(reverse("portal:account", kwargs={"public_id": served["account"].public_id}))
    text = page.content.decode()
    box = text[text.index('class="notice-box"'):text.index("</section>", text.index('class="notice-box"'))]
    assert f"Termination of water service: case {served['number']}" in box
    assert "A termination notice has been served: you may ask for a hearing in writing" in box
    # One amount stops the shut-off, named the same everywhere: what is still unpaid of the bills the case is for
    # ($186.13 when it opened; $136.13 after the $50.00 payment). The case's own amount is said once, as context.
    assert "<dt>To stop the shut-off, pay</dt><dd>$136.13</dd>" in box
    assert "<dt>The case is for</dt><dd>$186.13: the bills delinquent when it opened</dd>" in box
    assert "Paying $136.13, what is still unpaid of the bills the case is for, before service is shut off closes " \
           "the case." in box
    assert f'href="{case_url(served["number"])}"' in box and "ask for a hearing" in box
    assert "Closed termination cases" not in text


def test_closed_cases_are_listed_briefly_and_no_box_is_shown(served):
    term("dismiss", served["number"], "--reason", "opened in error", date_="2026-04-05")
    text = served["client"].get(reverse("portal:account",
                                        kwargs={"public_id": served["account"].public_id})).content.decode()
    assert 'class="notice-box"' not in text
    assert "Closed termination cases" in text and f"Case {served['number']}</a>:" in text
    assert "Dismissed on Apr 5, 2026" in text


@pytest.mark.citation("§ 45.32")
def test_the_case_page_shows_grounds_bills_hearing_deadlines_stage_papers_and_timeline(served):
    case = served["case"]
    page = served["client"].get(case_url(served["number"]))
    assert page.status_code == 200
    text = page.content.decode()
    bill = case.bills.get().bill
    for expected in (
        f"case {served['number']}", "Nonpayment</strong> (§ 45.31): Failure to pay bill", f"Bill {bill.number}",
        "$186.13",
        # Served personally on Apr 1: the request is due Apr 11, the earliest lawful hearing is Apr 16.
        "<dt>Ask for a hearing in writing by</dt><dd>Apr 11, 2026</dd>",
        "<dt>Earliest lawful hearing date</dt><dd>Apr 16, 2026</dd>",
        "<dt>Hearing</dt><dd>Apr 16, 2026</dd>", "Village Hall, 155 Washington Avenue, Mineola, New York",
        "<dt>Appeal by</dt><dd>14 days after the determination is mailed</dd>",
        "A termination notice has been served: you may ask for a hearing in writing.",
        "<dt>Next step</dt><dd>The last day to ask for a hearing in writing: Apr 11, 2026</dd>",
        "Notice to the owner,", "Notice to the occupant, Olive Occupant (PDF)",
        "Served Apr 1, 2026 by personal service; received Apr 1, 2026; hearing Apr 16, 2026",
        "Your written request", "Request a hearing",
    ):
        assert expected in text, expected
    for notice in case.notices.all():
        assert f'href="{case_url(served["number"], "termination_notice_pdf", notice_id=notice.pk)}"' in text
    assert "Notice of the determination" not in text
    # The timeline says what happened and that the village office did it, never which clerk.
    assert "Case opened for nonpayment of $186.13" in text and "<td>Village office</td>" in text
    assert "clerk (command line)" not in text


def test_another_customer_gets_404_for_every_case_url(served):
    notice = served["case"].notices.first()
    mallory = signed_in(customer("mallory@example.org"))
    number = served["number"]
    for method, url in (("get", case_url(number)), ("post", case_url(number, "termination_request")),
                        ("get", case_url(number, "termination_notice_pdf", notice_id=notice.pk)),
                        ("get", case_url(number, "termination_determination_pdf")),
                        ("get", case_url("T-2026-99999"))):
        response = getattr(mallory, method)(url, {"text": "I ask for a hearing"} if method == "post" else None)
        assert response.status_code == 404, (method, url)
    assert TerminationCase.objects.get(number=number).request_received_on is None
    anonymous = Client().get(case_url(number))
    assert anonymous.status_code == 302 and anonymous["Location"].startswith(reverse("portal:login"))


def test_a_notice_of_another_case_is_not_served_through_this_one(served, mineola):
    other_account, _ = delinquent_account(occupant=False)
    other = served_case(other_account, occupant=False)
    other_notice = Notice.objects.get(case__number=other)
    url = case_url(served["number"], "termination_notice_pdf", notice_id=other_notice.pk)
    assert served["client"].get(url).status_code == 404


def test_the_notice_pdf_is_rendered_once_stored_and_downloaded(served):
    notice = served["case"].notices.get(role="occupant")
    assert not notice.pdf  # rendered after the serving commits; not yet here
    url = case_url(served["number"], "termination_notice_pdf", notice_id=notice.pk)
    response = served["client"].get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/pdf"
    body = b"".join(response.streaming_content)
    assert body.startswith(b"%PDF")
    assert 'filename="termination-notice-' in response["Content-Disposition"]
    notice.refresh_from_db()
    assert notice.pdf and notice.pdf.read() == body
    again = b"".join(served["client"].get(url).streaming_content)
    assert again == body


@pytest.mark.citation("§ 45.32")
def test_a_request_made_online_in_time_is_recorded_with_its_timestamp(served, monkeypatch):
    monkeypatch.setattr(clock, "today", lambda: date(2026, 4, 10))
    response = ask(served["client"], served["number"], "  I ask for a hearing: the meter was misread.  ")
    assert response.status_code == 302 and response["Location"] == case_url(served["number"])
    case = TerminationCase.objects.get(number=served["number"])
    assert (case.status, case.request_received_on, case.request_via, case.request_late) == (
        "requested", date(2026, 4, 10), "portal", False)
    assert case.request_text == "I ask for a hearing: the meter was misread."
    event = CaseEvent.objects.get(case=case, kind="requested")
    assert (event.on, event.actor, event.by, event.flagged) == (date(2026, 4, 10), served["user"],
                                                                "customer online", False)
    assert event.what == "Written request for the hearing received online"
    page = served["client"].get(response["Location"]).content.decode()
    assert "Your request was received on Apr 10, 2026 at " in page  # the confirmation
    assert "It was received in time: come to the hearing on Apr 16, 2026." in page
    assert "Your written request for a hearing was received on Apr 10, 2026 at " in page
    assert "the meter was misread." in page
    assert "<td>You (online)</td>" in page
    assert "Request a hearing</button>" not in page  # asked once: the form is gone
    twice = ask(served["client"], served["number"], "Again, in case.")
    assert twice.status_code == 400
    assert "Your request for a hearing was already received on Apr 10, 2026." in twice.content.decode()
    assert CaseEvent.objects.filter(case=case, kind="requested").count() == 1


@pytest.mark.citation("§ 45.32")
def test_a_late_request_is_accepted_flagged_and_said_to_be_late(served):
    # The window closed on Apr 11 with no request; the customer writes on Dec 1 (today).
    term("deadlines", date_="2026-04-12")
    assert TerminationCase.objects.get(number=served["number"]).status == "no_request"
    response = ask(served["client"], served["number"], "I was in hospital in April; please hear me.")
    assert response.status_code == 302
    case = TerminationCase.objects.get(number=served["number"])
    assert case.status == "requested" and case.request_late and case.request_received_on == clock.today()
    assert CaseEvent.objects.get(case=case, kind="requested").flagged
    page = served["client"].get(case_url(served["number"])).content.decode()
    assert ("It was received after the deadline of Apr 11, 2026 to ask for a hearing: it has been accepted and "
            "will be put before the hearing officer designated by the Water Commission") in page


def test_an_empty_request_is_refused_with_a_message(served):
    response = ask(served["client"], served["number"], "   ")
    assert response.status_code == 400
    text = response.content.decode()
    assert "Write your request for a hearing before sending it." in text and 'class="field-error"' in text
    assert "Request a hearing</button>" in text
    assert TerminationCase.objects.get(number=served["number"]).request_received_on is None


def test_a_request_past_the_longest_is_refused_as_a_form_error(served):
    response = ask(served["client"], served["number"], "x" * 5001)
    assert response.status_code == 400 and "at most 5000 characters" in response.content.decode()
    assert TerminationCase.objects.get(number=served["number"]).request_received_on is None


def test_a_determined_case_offers_no_request_and_refuses_a_posted_one(mineola, media):
    account, _ = delinquent_account()
    number = terminated_case(account)
    erin = customer("erin@example.org")
    PortalLink.objects.create(user=erin, account=account)
    client = signed_in(erin)
    page = client.get(case_url(number)).content.decode()
    assert "The hearing officer decided to terminate service: you may appeal." in page
    assert "Request a hearing</button>" not in page and "No hearing was asked for" in page
    assert f'href="{case_url(number, "termination_determination_pdf")}"' in page
    assert "<dt>Appeal by</dt><dd>May 4, 2026</dd>" in page
    response = ask(client, number, "I ask for a hearing")
    assert response.status_code == 400
    refused = response.content.decode()
    assert ("A hearing can no longer be asked for online: the hearing officer decided to terminate service: you "
            "may appeal. Call or write to the water office.") in refused and "Request a hearing</button>" not in refused
    assert TerminationCase.objects.get(number=number).request_received_on is None
    pdf = client.get(case_url(number, "termination_determination_pdf"))
    assert pdf.status_code == 200 and b"".join(pdf.streaming_content).startswith(b"%PDF")


def test_the_request_form_needs_a_csrf_token_and_a_post(served):
    client = Client(enforce_csrf_checks=True)
    client.force_login(served["user"], backend="django.contrib.auth.backends.ModelBackend")
    assert client.post(case_url(served["number"], "termination_request"), {"text": "hear me"}).status_code == 403
    assert served["client"].get(case_url(served["number"], "termination_request")).status_code == 405
    assert TerminationCase.objects.get(number=served["number"]).request_received_on is None


def test_requests_are_rate_limited(served, monkeypatch):
    from portal import views

    monkeypatch.setattr(views, "HEARING_REQUEST_POSTS", 2)
    for _ in range(2):
        assert ask(served["client"], served["number"], "").status_code == 400
    response = ask(served["client"], served["number"], "I ask for a hearing")
    assert response.status_code == 429 and "Too many tries" in response.content.decode()
    assert TerminationCase.objects.get(number=served["number"]).request_received_on is None


def test_a_plan_in_good_standing_says_it_holds_the_shut_off_and_nothing_is_red(served):
    from arrears.services import plan_create

    account = served["account"]
    clock_day = date(2026, 4, 10)
    plan_create(account=account, total=Decimal("186.13"), down_payment=Decimal("50.00"), down_due_on=clock_day,
                installments=3, first_due_on=date(2026, 5, 1), as_of=clock_day, actor=None)
    payment_post(account_no=account.account_no, amount=Decimal("50.00"), paid_on=clock_day, reference="DOWN")
    from unittest import mock

    with mock.patch("django.utils.timezone.localdate", return_value=clock_day):
        page = served["client"].get(reverse("portal:account", kwargs={"public_id": account.public_id}))
    page = page.content.decode()
    assert "Your payment plan is in good standing: while you keep it, service is not shut off." in page
    assert "Past due, in your payment plan" in page and "Past due, pay now" not in page
