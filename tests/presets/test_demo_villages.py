"""A demo village on every preset bills without exceptions: ``setup_utility PRESET --demo N`` gives accounts
whose meter sizes, categories and sprinkler supplies the preset's rates bill, read in the month before each
of the calendar's bill dates, and the demo payments pay "on time" by the preset's own late rule."""

from datetime import date

import pytest
from django.core.management import call_command

from accounts.models import Account
from billing.models import Bill, BillingException, LedgerEntry, Utility
from billing.ordinance import ordinance_on
from core.dates import add_months
from demo.payments import demo_payments_create
from tests.billing.steps import run
from tests.presets.test_contract import PRESETS

pytestmark = pytest.mark.django_db
AS_OF = date(2026, 11, 30)


@pytest.mark.citation("demo")
@pytest.mark.parametrize("code", PRESETS)
def test_a_demo_village_bills_a_year_without_exceptions(code):
    call_command("setup_utility", code, "--demo", "120", "--date", AS_OF.isoformat(), stdout=open("/dev/null", "w"))
    utility = Utility.objects.get()
    assert utility.preset == code and utility.is_demo_site
    town = utility.office_address.splitlines()[-1]
    assert Account.objects.filter(owner__mailing_address__endswith=town).exists()
    calendar = ordinance_on(AS_OF).calendar
    firsts = [add_months(date(2025, 12, 1), n) for n in range(12)]
    for day in firsts:
        run("run_billing", "--date", day.isoformat())
    assert not BillingException.objects.exists(), list(BillingException.objects.values_list("detail", flat=True)[:5])
    billed = [day for day in firsts if calendar.due_books(day) or calendar.due_frequencies(day)]
    assert set(Bill.objects.values_list("bill_date", flat=True)) <= set(billed)
    for account in Account.objects.all():
        frequency = calendar.frequency_for(account.installations.get().meter.size)
        due = [day for day in billed if calendar.is_due(book=account.book, frequency=frequency, on=day)]
        assert sorted(Bill.objects.filter(account=account).values_list("bill_date", flat=True)) == due, account
    assert demo_payments_create(as_of=AS_OF) > 0
    run("assess_penalties", "--date", AS_OF.isoformat())
    assert LedgerEntry.objects.filter(kind="payment").exists()
