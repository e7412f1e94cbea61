"""Demo autopay, so a trainee can work the bank's side of autopay with test payments (``TEST_PAYMENTS``): a few
demo accounts enrolled, each under the notice its last bill sent (on the bill's day, as the run that issued it
sends it); one of them debited in a file made three days ago, and the bank's returns file for that debit
(insufficient funds, R01) written where the demo says, for the clerk to read; the others due in today's file,
which the clerk prepares and a supervisor approves.

Nothing here runs without the bank key and the village's bank configured (the test ones ``TEST_PAYMENTS`` gives)."""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from pathlib import Path

from django.utils import timezone

from accounts.models import Account
from billing.models import Bill
from billing.selectors import account_amounts_due
from core.errors import ApplicationError
from remittance.autopay import ach_export, autopay_enrol, autopay_notices_send, originator
from remittance.models import AutopayDebit, AutopayNotice
from remittance.nacha import Originator
from remittance.vault import vault_ready

ROUTING = "011000015"  # a routing number with a valid check digit (the demo's customers' bank: made up)
ENROLLED = 4


@dataclass(frozen=True)
class DemoAutopay:
    enrolled: list[str]
    returns_path: Path | None
    due_today: int


def demo_autopay_create(*, as_of: date, folder: Path) -> DemoAutopay | None:
    """Enrol a few owing demo accounts; make a file three days ago for the first and write its returns file in
    ``folder``. None when autopay is not set up here."""
    if not vault_ready():
        return None
    try:
        origin = originator()
    except ApplicationError:
        return None
    bills = list(Bill.objects.filter(status=Bill.Status.ISSUED, due_date__lte=as_of - timedelta(days=5),
                                     bill_date__gte=as_of - timedelta(days=70),
                                     account__status=Account.Status.ACTIVE)
                 .select_related("account__owner").order_by("-bill_date", "account__account_no"))
    owed = account_amounts_due(account_ids=[b.account_id for b in bills], as_of=as_of)
    chosen, seen = [], set()
    for bill in bills:
        if bill.account_id in seen or owed[bill.account_id].amount <= 0:
            continue
        seen.add(bill.account_id)
        chosen.append(bill)
        if len(chosen) == ENROLLED:
            break
    if not chosen:
        return None
    first, *others = chosen
    _enrol(first, number=1)
    earlier = as_of - timedelta(days=3)
    made = ach_export(on=earlier).file
    returns_path = None
    if made is not None:
        folder.mkdir(parents=True, exist_ok=True)
        returns_path = folder / "ach-returns.txt"
        returns_path.write_text(_returns_file(list(made.debits.all()), origin=origin, on=as_of), encoding="ascii")
    for number, bill in enumerate(others, start=2):
        _enrol(bill, number=number)
    return DemoAutopay(enrolled=[b.account.account_no for b in chosen], returns_path=returns_path,
                       due_today=len(others))


def _enrol(bill: Bill, *, number: int) -> None:
    """The account enrolled, and its bill's notice sent on the bill's day (as the run that issued it sends it)."""
    account = bill.account
    enrolment = autopay_enrol(account=account, holder_name=account.owner.name, routing=ROUTING,
                              account_number=f"{100200300 + number}", account_type="checking",
                              email=account.owner.email or f"autopay{number}@example.org", agreed=True,
                              ip_address="127.0.0.1")
    autopay_notices_send([bill.pk])
    AutopayNotice.objects.filter(enrolment=enrolment, bill=bill).update(
        sent_at=timezone.make_aware(datetime.combine(bill.bill_date, time(18))))


def _returns_file(debits: list[AutopayDebit], *, origin: Originator, on: date) -> str:
    """The bank's returns file: each debit sent back for insufficient funds (R01), in NACHA's layout."""
    day = on.strftime("%y%m%d")
    odfi8 = origin.odfi_routing[:8]
    records = ["101 " + origin.odfi_routing + origin.company_id.rjust(10)[:10] + day + "1200A094101"
               + origin.odfi_name.upper().ljust(23)[:23] + origin.company_name.upper().ljust(23)[:23] + " " * 8,
               "5225" + origin.company_name.upper().ljust(16)[:16] + " " * 20 + origin.company_id.rjust(10)[:10]
               + "PPDRETURN    " + day + day + "   1" + odfi8 + "0000001"]
    entry_hash = cents = 0
    for sequence, debit in enumerate(debits, start=1):
        trace = odfi8 + f"{sequence:07d}"
        amount = int(debit.amount.amount * 100)
        routing = debit.enrolment.routing_number
        entry_hash += int(routing[:8])
        cents += amount
        records.append("626" + routing + debit.enrolment.account_last4.ljust(17) + f"{amount:010d}"
                       + debit.account.account_no.ljust(15)[:15] + debit.enrolment.holder_name.upper().ljust(22)[:22]
                       + "  1" + trace)
        records.append("799R01" + debit.trace_number + " " * 6 + routing[:8] + " " * 44 + trace)
    count = 2 * len(debits)
    records.append("8225" + f"{count:06d}" + f"{entry_hash % 10**10:010d}" + f"{cents:012d}" + "0" * 12
                   + origin.company_id.rjust(10)[:10] + " " * 25 + odfi8 + "0000001")
    blocks = -(-(len(records) + 1) // 10)
    records.append("9000001" + f"{blocks:06d}" + f"{count:08d}" + f"{entry_hash % 10**10:010d}" + f"{cents:012d}"
                   + "0" * 12 + " " * 39)
    records += ["9" * 94] * (blocks * 10 - len(records))
    return "\n".join(records) + "\n"
