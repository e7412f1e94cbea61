"""Sample bank files for a demo or training site, made from the demo's own accounts when asked for, so a trainee
reads each kind of file from the page that reads it (a download link there): the bank's lockbox detail file, its BAI2
report and the ACH returns file the demo's autopay made (``demo.autopay``).

The lockbox file pays the three oldest unpaid bills in full, each with its stub's scan line as the bill prints it, and
has one check with no stub, which goes to the exceptions queue. The BAI2 report of the same day credits that lockbox
deposit (type 115) and one customer's bank bill-pay payment naming their account (type 195), so the deposits
reconciliation has both to tie."""

from datetime import date
from decimal import Decimal
from pathlib import Path

from django.conf import settings

from billing.balances import balances
from billing.models import Bill, Payment
from remittance.lockbox import LOCKBOX_LAYOUT
from remittance.models import PaymentException

LOCKBOX_CHECKS = 3
UNMATCHED_CHECK = Decimal("40.00")  # a check whose envelope had no stub: the exceptions queue's
BILL_PAY = Decimal("25.00")


def _unpaid_bills(*, as_of: date, count: int, newest: bool = False) -> list[tuple[Bill, Decimal]]:
    """The oldest (or newest) issued bills with something still unpaid on them, one per account."""
    order = ("-bill_date", "-number") if newest else ("bill_date", "number")
    candidates = list(Bill.objects.filter(status=Bill.Status.ISSUED, bill_date__lte=as_of)
                      .select_related("account").order_by(*order)[:200])
    states = balances({bill.account_id for bill in candidates}, through=as_of)
    out, seen = [], set()
    for bill in candidates:
        if bill.account_id in seen:
            continue
        standing = states[bill.account_id].on_bills().get(bill.pk)
        unpaid = sum(standing.unpaid.values(), Decimal("0")) if standing is not None else Decimal("0")
        if unpaid > 0:
            out.append((bill, unpaid))
            seen.add(bill.account_id)
        if len(out) == count:
            break
    return out


def sample_lockbox(*, as_of: date) -> str:
    rows = [",".join(LOCKBOX_LAYOUT.required)]
    for item, (bill, unpaid) in enumerate(_unpaid_bills(as_of=as_of, count=LOCKBOX_CHECKS), start=1):
        cents = int(unpaid * 100)
        rows.append(f"{as_of},1,{item},{unpaid:.2f},{1000 + item},"
                    f"{bill.account.account_no}  {bill.number}  {cents:010d}  {cents:010d}")
    rows.append(f"{as_of},1,{len(rows)},{UNMATCHED_CHECK:.2f},{1000 + len(rows)},")
    return "\n".join(rows) + "\n"


def _lockbox_total(*, as_of: date) -> Decimal:
    """The day's lockbox deposit: the checks read from the day's lockbox file, or (none read yet) the sample's."""
    read = [*Payment.objects.filter(source="lockbox", paid_on=as_of).values_list("amount", flat=True),
            *PaymentException.objects.filter(source="lockbox", received_on=as_of).values_list("amount", flat=True)]
    if read:
        return sum((Decimal(amount) for amount in read), Decimal("0"))
    return sum((unpaid for _, unpaid in _unpaid_bills(as_of=as_of, count=LOCKBOX_CHECKS)), UNMATCHED_CHECK)


def bai2_report(day: date, credits: list[tuple[str, int, str, str]]) -> str:
    """A one-account BAI2 previous-day report for ``day`` of ``credits`` (type code, cents, bank reference, text),
    its control totals and record counts right."""
    details = [f"16,{code},{cents},0,{ref},,{text}/" for code, cents, ref, text in credits]
    total = sum(cents for _, cents, _, _ in credits)
    account = ["03,123456789,USD/", *details, f"49,{total},{len(details) + 2}/"]
    group = [f"02,VILLAGE,021000021,1,{day:%y%m%d},,USD,2/", *account, f"98,{total},1,{len(account) + 2}/"]
    return "\n".join([f"01,021000021,VILLAGE,{day:%y%m%d},0800,1,,,2/", *group,
                      f"99,{total},1,{len(group) + 2}/"]) + "\n"


def sample_bai2(*, as_of: date) -> str:
    """The bank's previous-day report for ``as_of``: the lockbox deposit and one bill-pay credit, totals right."""
    credits = [("115", int(_lockbox_total(as_of=as_of) * 100), "LBX1", "LOCKBOX DEPOSIT")]
    payer = _unpaid_bills(as_of=as_of, count=1, newest=True)  # the lockbox's are the oldest
    if payer:
        credits.append(("195", int(BILL_PAY * 100), "BP0001", f"BILL PAY {payer[0][0].account.account_no}"))
    return bai2_report(as_of, credits)


def sample_returns() -> str:
    """The returns file the demo wrote for its autopay file (empty when the demo made no debit file)."""
    path = Path(settings.MEDIA_ROOT) / "demo-files" / "ach-returns.txt"
    return path.read_text(encoding="ascii") if path.exists() else ""


SAMPLES = {"lockbox": ("lockbox-sample.csv", "text/csv"), "bai2": ("bai2-sample.txt", "text/plain"),
           "returns": ("ach-returns-sample.txt", "text/plain")}
