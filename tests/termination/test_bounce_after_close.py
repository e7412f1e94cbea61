"""A check that bounces after its account closed reopens no termination case (there is no service to shut off): what
it paid is owed again on the closed account's final balance, the relevy takes it, and the clerk sees the case flagged
(docs/architecture.md, event table)."""

from datetime import date
from decimal import Decimal

import pytest

from accounts.services import account_close
from billing.balances import balances
from billing.models import Payment
from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from reports.selectors import relevy
from termination.models import CaseEvent, TerminationCase
from tests.termination.steps import delinquent_account, served_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: a returned payment reopens its case")]


def test_a_bounce_after_closing_goes_to_the_final_balance_never_a_case(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account(occupant=False)
    case = TerminationCase.objects.get(number=served_case(account, occupant=False))
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=Decimal("186.13"), paid_on=date(2026, 4, 5),
                     reference="CHK-186")
    case.refresh_from_db()
    assert case.status == "paid"
    with django_capture_on_commit_callbacks(execute=True):
        account_close(account=account, on=date(2026, 4, 10), actor=None, reason="owner sold the house")
    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="CHK-186"), reason="returned", note="NSF",
                        reversed_on=date(2026, 4, 14), actor=None)
    case.refresh_from_db()
    assert case.status == "paid"  # not reopened: a closed account has no service to shut off
    event = CaseEvent.objects.get(case=case, kind="closed_owed")
    assert event.flagged and "after the account closed: $186.13 of the delinquent amount is owed again on the " \
                             "closed account's final balance" in event.what
    assert balances([account.pk], through=date(2026, 4, 14))[account.pk].balance >= Decimal("186.13")
    rows = {row.account_no: row for row in relevy(levy_on=date(2026, 10, 1)).rows}
    assert rows[account.account_no].charges >= Decimal("186.13")
