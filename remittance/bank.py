"""The bank's side: its BAI2 report of the village account's credits, and each day's deposits reconciled with the
payments posted.

Design overview:

* **BAI2** (read with the ``bai2`` library, its control totals checked): each credit becomes a ``BankDeposit``
  with its channel — a lockbox deposit (type 115), a payout of the payment processor (a credit whose text names
  it), the settlement of an autopay debit file (another ACH credit: 142, 165, 166, 169), a counter deposit (301),
  or other. Reading the same report again adds nothing (each credit's key is unique).
* **Reconciliation** (``deposits_reconcile``), for one day: what each channel should have brought in against
  what the bank says it did — the lockbox's checks (those posted and those in the exceptions queue), the debit
  files settling that day, the counter's cash and checks posted that day, and the processor's payouts (each
  payout's charges, as the processor lists them, matched to the online payments posted, less its fees) — with
  every difference and every credit that belongs to no channel.
"""

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal

from django.db import transaction

from billing.models import Payment
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars

from .models import AchFile, BankDeposit, OnlinePayment, PaymentException

CENTS = Decimal(100)
LOCKBOX_TYPES = {"115"}
ACH_TYPES = {"142", "165", "166", "169"}
COUNTER_TYPES = {"301"}
PROCESSOR_WORDS = ("STRIPE",)


def _channel(type_code: str, words: str) -> str:
    if type_code in LOCKBOX_TYPES:
        return BankDeposit.Channel.LOCKBOX
    if any(w in words.upper() for w in PROCESSOR_WORDS):
        return BankDeposit.Channel.PROCESSOR
    if type_code in ACH_TYPES:
        return BankDeposit.Channel.AUTOPAY
    if type_code in COUNTER_TYPES:
        return BankDeposit.Channel.COUNTER
    return BankDeposit.Channel.OTHER


@dataclass(frozen=True)
class BankImported:
    added: int
    skipped: int

    def __str__(self) -> str:
        return f"{self.added} credit(s) added, {self.skipped} already read"


def bai2_import(text: str) -> BankImported:
    """Read a BAI2 report's credits; a report that is not one, or whose control totals do not add up, is refused."""
    from bai2 import bai2
    from bai2.constants import TypeCodeTransaction

    try:
        report = bai2.parse_from_string(text, check_integrity=True)
    except Exception as exc:  # noqa: BLE001 - the library raises its own errors and ValueErrors
        raise ApplicationError(f"not a BAI2 report the bank's totals agree with: {exc}", field="file") from None
    rows, seen = [], Counter()
    for group in report.children:
        posted_on = group.header.as_of_date
        for account in group.children:
            number = str(account.header.customer_account_number or "")
            for detail in account.children:
                if detail.type_code is None or detail.type_code.transaction != TypeCodeTransaction.credit:
                    continue
                amount = Decimal(int(detail.amount or 0)) / CENTS
                words = " ".join(str(w) for w in (detail.customer_reference, detail.text) if w)
                identity = (posted_on.isoformat(), number, detail.type_code.code, detail.bank_reference or "",
                            detail.customer_reference or "", f"{amount:.2f}")
                seen[identity] += 1
                rows.append(BankDeposit(
                    posted_on=posted_on, bank_account=number[:40], type_code=detail.type_code.code,
                    description=(detail.type_code.description or "")[:80], amount=amount,
                    bank_reference=(detail.bank_reference or "")[:80],
                    customer_reference=(detail.customer_reference or "")[:80], text=(detail.text or "")[:200],
                    channel=_channel(detail.type_code.code, words), key="|".join((*identity, str(seen[identity])))))
    with transaction.atomic():
        known = set(BankDeposit.objects.filter(key__in=[r.key for r in rows]).values_list("key", flat=True))
        fresh = [r for r in rows if r.key not in known]
        BankDeposit.objects.bulk_create(fresh)
    return BankImported(added=len(fresh), skipped=len(rows) - len(fresh))


@dataclass(frozen=True)
class ChannelLine:
    channel: str
    label: str
    expected: Decimal
    deposited: Decimal
    detail: str

    @property
    def difference(self) -> Decimal:
        return self.deposited - self.expected


@dataclass
class DepositsReconciled:
    on: date
    lines: list[ChannelLine] = field(default_factory=list)
    unmatched: list[BankDeposit] = field(default_factory=list)  # credits of no channel of ours
    notes: list[str] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return not self.unmatched and all(line.difference == ZERO for line in self.lines)


def _sum(values) -> Decimal:
    return sum((Decimal(v) for v in values), ZERO)


def deposits_reconcile(*, on: date, processor=None) -> DepositsReconciled:
    """The day's deposits against the payments posted, by channel."""
    deposits: dict[str, list[BankDeposit]] = defaultdict(list)
    for deposit in BankDeposit.objects.filter(posted_on=on):
        deposits[deposit.channel].append(deposit)
    result = DepositsReconciled(on=on)

    def deposited(channel: str) -> Decimal:
        return _sum(d.amount.amount for d in deposits[channel])

    posted = _sum(Payment.objects.filter(source="lockbox", paid_on=on, reference__startswith="LBX-")
                  .values_list("amount", flat=True))
    queued = list(PaymentException.objects.filter(source="lockbox", received_on=on, payment__isnull=True)
                  .values_list("amount", flat=True))
    result.lines.append(ChannelLine("lockbox", "Lockbox: the checks read that day", posted + _sum(queued),
                                    deposited("lockbox"), f"{len(queued)} of them in the exceptions queue or sent "
                                                          "back" if queued else ""))
    files = list(AchFile.objects.filter(effective_on=on))
    returned = _sum(d.amount.amount for f in files for d in f.debits.exclude(returned_code=""))
    result.lines.append(ChannelLine("autopay", "Autopay: the debit files settling that day",
                                    _sum(f.total.amount for f in files), deposited("autopay"),
                                    f"{len(files)} file(s)" + (f"; {fmt_dollars(returned)} returned since (the "
                                                               "bank debits returns apart)" if returned else "")))
    counter = Payment.objects.filter(source="counter", paid_on=on, tender__in=[Payment.Tender.CASH,
                                                                                 Payment.Tender.CHECK])
    result.lines.append(ChannelLine("counter", "Counter: the cash and checks taken that day",
                                    _sum(counter.values_list("amount", flat=True)), deposited("counter"),
                                    f"{counter.count()} payment(s)"))
    if deposits["processor"] or processor is not None:
        result.lines.append(_processor_line(on, deposits["processor"], processor, result.notes))
    result.unmatched = deposits["other"]
    return result


def _processor_line(on: date, deposits: list[BankDeposit], processor, notes: list[str]) -> ChannelLine:
    """The processor's payouts arriving that day: their charges matched to our online payments, less its fees."""
    if processor is None:
        notes.append("No payment processor is configured here to list its payouts: the processor's deposits are "
                     "shown, not matched.")
        return ChannelLine("processor", "Processor payouts", ZERO, _sum(d.amount.amount for d in deposits),
                           "not matched: no processor")
    expected, fees, charges, unknown = ZERO, ZERO, 0, []
    ours = {p.payment_ref: p for p in OnlinePayment.objects.filter(processor=processor.name)
            .select_related("payment")}
    for payout in processor.payouts(arrived_on=on):
        for item in payout.items:
            fees += item.fee
            mine = ours.get(item.payment_ref)
            if item.kind == "charge" and (mine is None or mine.payment is None):
                unknown.append(f"{item.payment_ref} ({item.gross})")
                continue
            charges += item.kind == "charge"
            expected += item.gross - item.fee
    if unknown:
        notes.append(f"Processor charges with no online payment posted here: {', '.join(unknown)}.")
    return ChannelLine("processor", "Processor payouts: our online payments in them, less the processor's fees",
                       expected, _sum(d.amount.amount for d in deposits),
                       f"{charges} payment(s), {fmt_dollars(fees)} in fees")
