"""Steps the termination tests take through the ``termination`` command, as a clerk would."""

import io
import json
from datetime import date

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from accounts.models import Customer
from billing.models import Bill
from tests.billing.steps import account_with_meter, read, run


def term(*args, date_: str) -> str:
    out = io.StringIO()
    call_command("termination", *args, "--date", date_, stdout=out)
    return out.getvalue().strip()


def refused(*args, date_: str) -> str:
    with pytest.raises(CommandError) as info:
        term(*args, date_=date_)
    return str(info.value)


def show(number: str, *, date_: str = "2026-11-30") -> dict:
    return json.loads(term("show", number, "--json", date_=date_))


def delinquent_account(*, occupant: bool = True):
    """A Mineola account billed on 2026-02-01 (due 2026-03-01), unpaid: delinquent from 2026-03-02. With an
    occupant who is not the owner, both are recipients."""
    account, meter = account_with_meter(book=1)
    if occupant:
        account.occupant = Customer.objects.create(name="Olive Occupant", mailing_address="12 Elm St\nMineola NY 11501")
        account.save()
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account, Bill.objects.get(account=account)


def served_case(account, *, hearing_on="2026-04-16", occupant=True) -> str:
    """A nonpayment case opened 2026-03-20 and served personally on 2026-04-01 on every recipient."""
    number = term("open", account.account_no, "--grounds", "nonpayment", date_="2026-03-20")
    for role in (("owner", "occupant") if occupant else ("owner",)):
        term("serve", number, "--to", role, "--method", "personal", "--served-on", "2026-04-01",
             "--hearing-on", hearing_on, date_="2026-04-01")
    return number


def terminated_case(account, *, occupant=True) -> str:
    """Served 2026-04-01, no request, default determination to terminate on the hearing date, mailed
    2026-04-20: the appeal window closes 2026-05-04."""
    number = served_case(account, occupant=occupant)
    term("determine", number, "--outcome", "terminate", "--mailed-on", "2026-04-20", date_="2026-04-20")
    return number
