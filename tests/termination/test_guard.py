"""The guard (docs/ordinances.md, Mineola Article II): a shut-off order issues only when all five conditions hold;
a refusal names every condition that fails, with its citation, and nothing changes.

The lawful case: served personally on 2026-04-01 on the owner and the occupant, hearing 2026-04-16, no
request by 2026-04-11, determination to terminate by default, mailed 2026-04-20: the appeal window closes
2026-05-04, so an order may issue from 2026-05-05."""

from datetime import date

import pytest

from accounts.models import Customer
from billing.signals import payment_posted
from termination.models import Notice, TerminationCase, WorkOrder
from termination.receivers import on_payment_posted

from .steps import delinquent_account, refused, served_case, show, term, terminated_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.31", "§ 45.32", "§§ 45.33–45.34", "§ 45.35")]

CONDITIONS = {1: "§ 45.32", 2: "§ 45.32", 3: "§§ 45.33–45.34", 4: "§ 45.35", 5: "§ 45.31"}


@pytest.fixture
def no_payment_receiver():
    """Payment in full closes a case on its own; these tests take the receiver away to show the guard alone
    refuses an order for a paid case."""
    payment_posted.disconnect(dispatch_uid="termination.close_paid_cases")
    yield
    payment_posted.connect(on_payment_posted, dispatch_uid="termination.close_paid_cases")


def failed(message: str) -> list[int]:
    return [n for n in CONDITIONS if f"({n}) " in message]


def assert_refused_only(number: str, day: str, *conditions: int) -> str:
    message = refused("shutoff", number, date_=day)
    assert failed(message) == list(conditions), message
    case = TerminationCase.objects.get(number=number)
    assert case.status != "ordered" and not case.orders.exists()
    return message


def test_every_condition_holding_the_order_issues(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    assert_refused_only(number, "2026-05-04", 4)  # the last day of the appeal window
    out = term("shutoff", number, date_="2026-05-05")
    assert "Shut-off order" in out
    assert TerminationCase.objects.get(number=number).status == "ordered"
    assert WorkOrder.objects.get(case__number=number).status == "issued"
    # Asking again returns the order already issued: one order.
    term("shutoff", number, date_="2026-05-06")
    assert WorkOrder.objects.filter(case__number=number).count() == 1


def test_1_a_recipient_not_served(mineola):
    """An occupant moved in after the owner was served: the occupant must be served too (§ 45.32)."""
    account, _ = delinquent_account(occupant=False)
    number = terminated_case(account, occupant=False)
    account.occupant = Customer.objects.create(name="New Tenant", mailing_address="12 Elm St\nMineola NY 11501")
    account.save()
    message = assert_refused_only(number, "2026-05-05", 1)
    assert "the occupant has not been served" in message and "§ 45.32" in message


def test_1_a_mailed_notice_without_its_receipt(mineola):
    account, _ = delinquent_account()
    number = served_case(account)
    term("request", number, "--received-on", "2026-04-09", date_="2026-04-09")
    term("determine", number, "--outcome", "terminate", "--mailed-on", "2026-04-20", date_="2026-04-20")
    Notice.objects.filter(case__number=number, role="occupant").update(method="certified_mail", received_on=None)
    message = assert_refused_only(number, "2026-05-05", 1)
    assert "no receipt date is recorded for the notice to the occupant" in message


def test_2_a_hearing_too_soon_after_service(mineola):
    """A notice on file served 11 days before the hearing (entered before the rule was kept)."""
    account, _ = delinquent_account()
    number = terminated_case(account)
    Notice.objects.filter(case__number=number, role="occupant").update(served_on=date(2026, 4, 5),
                                                                      received_on=date(2026, 4, 5))
    message = assert_refused_only(number, "2026-05-05", 2)
    assert "served on 2026-04-05, 11 days before the hearing on 2026-04-16; at least 15 days" in message


def test_3_a_timely_request_recorded_after_a_default_determination(mineola):
    """The request arrived on 2026-04-10, in time, but reached the clerk's desk after the default
    determination: termination then needs a determination after the hearing."""
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("request", number, "--received-on", "2026-04-10", date_="2026-04-25")
    message = assert_refused_only(number, "2026-05-05", 3)
    assert "a written request arrived in time on 2026-04-10" in message


def test_3_a_determination_other_than_terminate(mineola):
    account, _ = delinquent_account()
    number = served_case(account)
    term("determine", number, "--outcome", "arrangement", "--mailed-on", "2026-04-20", date_="2026-04-20")
    message = refused("shutoff", number, date_="2026-05-05")
    assert "closed: arrangement or other action termination case cannot become shut-off ordered" in message
    assert "(3) the hearing officer has not recorded a determination to terminate" in message


def test_4_an_appeal_awaiting_the_commission(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("appeal", number, "--filed-on", "2026-04-30", "--grounds", "I was away", date_="2026-04-30")
    message = assert_refused_only(number, "2026-05-20", 4)
    assert "the appeal filed on 2026-04-30 awaits the decision of the Water Commission" in message
    term("decide", number, "--outcome", "uphold", "--hearing-on", "2026-05-20", "--notice-mailed-on", "2026-05-12",
         date_="2026-05-20")
    term("shutoff", number, date_="2026-05-21")
    assert show(number)["status"] == "ordered"


def test_4_a_reversed_appeal_dismisses_the_case(mineola):
    account, _ = delinquent_account()
    number = terminated_case(account)
    term("appeal", number, "--filed-on", "2026-04-30", "--grounds", "I was away", date_="2026-04-30")
    term("decide", number, "--outcome", "reverse", "--hearing-on", "2026-05-20", "--notice-mailed-on", "2026-05-12",
         date_="2026-05-20")
    assert show(number)["status"] == "dismissed"
    assert "(4) the Water Commission reversed the termination" in refused("shutoff", number, date_="2026-05-21")


def test_5_paid_on_the_day_of_the_order(mineola, no_payment_receiver):
    from tests.billing.steps import pay

    account, _ = delinquent_account()
    number = terminated_case(account)
    pay(account, "186.13", "2026-05-04", "CHK-1")
    message = assert_refused_only(number, "2026-05-05", 5)
    assert "(5) the delinquent amount of $186.13 is paid on 2026-05-05 (§ 45.31)" in message


def test_all_five_failing_are_named_together(mineola, no_payment_receiver):
    from tests.billing.steps import pay

    account, _ = delinquent_account()
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    case = TerminationCase.objects.get(number=number)
    # A notice on file to the owner only, mailed 10 days before the hearing, its receipt not recorded.
    Notice.objects.create(case=case, role="owner", recipient=account.owner, name=account.owner.name,
                          address=account.owner.mailing_address, method="certified_mail",
                          served_on=date(2026, 4, 6), hearing_on=date(2026, 4, 16))
    pay(account, "186.13", "2026-04-30", "CHK-2")
    message = refused("shutoff", number, date_="2026-05-05")
    assert failed(message) == [1, 2, 3, 4, 5], message
    for citation in CONDITIONS.values():
        assert citation in message
    assert "the occupant has not been served" in message and "no receipt date is recorded" in message
    assert case.orders.count() == 0
