"""A day's deposits reconciled with the payments posted, channel by channel, in both directions.

Design overview:

* **The bank's side** is its BAI2 report, read by ``remittance.bank_report`` into ``BankDeposit`` rows, each with
  its channel.
* **Reconciliation** (``deposits_reconcile``), for one day: what each channel should have brought in against
  what the bank says it did — the lockbox's checks (those posted and those in the exceptions queue), the debit
  files settling that day, the counter's cash and checks posted that day, the customers' bank bill-pay credits
  (posted or queued), and the processor's payouts (each payout's charges, as the processor lists them, matched to
  the online payments posted, less its fees) — with every difference and every credit that belongs to no channel.
* **The other direction**: money we posted that the bank never brought. An online payment posted more than the
  processor's usual payout delay (``settings.PROCESSOR_PAYOUT_DAYS``) before the day, and in none of the
  processor's payouts since, is listed (``DepositsReconciled.not_paid_out``): the books say the customer paid, and
  the village has not been paid yet. A payment reversed since (refunded, disputed) is not listed: it was never the
  village's to receive.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, timedelta
from decimal import Decimal

from django.conf import settings

from billing.districts import district_history, district_on
from billing.models import Payment
from core.money import ZERO, fmt_dollars
from ordinance.selectors import districts

from .models import AchFile, BankDeposit, OnlinePayment, PaymentException
from .processors import ProcessorUnavailable

LOOK_BACK_DAYS = 45  # how far back an online payment never paid out is still looked for

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
    not_paid_out: list[OnlinePayment] = field(default_factory=list)  # posted online, in no payout since
    notes: list[str] = field(default_factory=list)
    unreached: list[str] = field(default_factory=list)  # what could not be asked (the processor down), in words
    # A town's: the day's payments posted, by the district each account is in (each district's fund is owed its
    # part of the day's deposits); empty where the installation names no districts.
    by_district: list[tuple[str, int, Decimal]] = field(default_factory=list)

    @property
    def matches(self) -> bool:
        return (not self.unmatched and not self.not_paid_out and not self.unreached
                and all(line.difference == ZERO for line in self.lines))


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
    held = list(PaymentException.objects.filter(source="lockbox", received_on=on, payment__isnull=True)
                .values_list("amount", "reference", "reason"))
    queued = [amount for amount, _, _ in held]
    detail = f"{len(queued)} of them in the exceptions queue or sent back" if queued else ""
    # A check read or deposited twice is expected twice here and deposited once: name the item behind the gap.
    twice = [f"{reference} ({fmt_dollars(amount)})" for amount, reference, reason in held
             if reason.startswith(("the same account, check number", "the file repeats"))]
    if twice:
        detail += f"; held as the same check read twice: {', '.join(twice)}"
    result.lines.append(ChannelLine("lockbox", "Lockbox: the checks read that day", posted + _sum(queued),
                                    deposited("lockbox"), detail))
    files = list(AchFile.objects.filter(effective_on=on, status=AchFile.Status.APPROVED))
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
    billpay = _sum(Payment.objects.filter(source="billpay", paid_on=on).values_list("amount", flat=True))
    billpay_queued = list(PaymentException.objects.filter(source="billpay", received_on=on, payment__isnull=True)
                          .values_list("amount", flat=True))
    if billpay or billpay_queued or deposits["billpay"]:
        result.lines.append(ChannelLine(
            "billpay", "Bill pay: the customers' bank bill-pay payments that day", billpay + _sum(billpay_queued),
            deposited("billpay"), f"{len(billpay_queued)} of them in the exceptions queue or sent back"
            if billpay_queued else ""))
    if processor is None:
        if deposits["processor"]:
            result.notes.append("No payment processor is configured here to list its payouts: the processor's "
                                "deposits are shown, not matched.")
            result.lines.append(ChannelLine("processor", "Processor payouts", ZERO, deposited("processor"),
                                            "not matched: no processor"))
    else:
        try:
            payouts = processor.payouts(arrived_from=on - timedelta(days=LOOK_BACK_DAYS), arrived_to=on)
        except ProcessorUnavailable as exc:
            # The rest of the day is reconciled; the processor's part waits until it answers.
            result.unreached.append(str(exc))
            result.notes.append(f"{exc}. Its payouts are not matched and no online payment is listed as not paid "
                                "out; reconcile the day again once the processor answers.")
            result.lines.append(ChannelLine("processor", "Processor payouts", ZERO, deposited("processor"),
                                            "not matched: the processor could not be reached"))
        else:
            result.lines.append(_processor_line(on, [p for p in payouts if p.arrived_on == on],
                                                deposits["processor"], processor, result.notes))
            result.not_paid_out = _not_paid_out(on, payouts, processor)
    result.unmatched = deposits["other"]
    result.by_district = _payments_by_district(on)
    return result


def _payments_by_district(on: date) -> list[tuple[str, int, Decimal]]:
    """The payments posted on ``on`` by the district of their account that day: (district's name, count, total)."""
    town = districts()
    if not town:
        return []
    paid = list(Payment.objects.filter(paid_on=on).values_list("account_id", "amount"))
    history = district_history({account_id for account_id, _ in paid})
    sums: dict[str, list] = defaultdict(lambda: [0, ZERO])
    for account_id, amount in paid:
        row = sums[district_on(history.get(account_id, []), on)]
        row[0] += 1
        row[1] += Decimal(amount)
    return [(town[code].name if code in town else "In no district", count, total)
            for code, (count, total) in sorted(sums.items())]


def _processor_line(on: date, payouts, deposits: list[BankDeposit], processor, notes: list[str]) -> ChannelLine:
    """The processor's payouts arriving that day: their charges matched to our online payments, less its fees."""
    expected, fees, charges, unknown = ZERO, ZERO, 0, []
    refs = {item.payment_ref for payout in payouts for item in payout.items if item.payment_ref}
    ours = set(OnlinePayment.objects.filter(processor=processor.name, payment_ref__in=refs, payment__isnull=False)
               .values_list("payment_ref", flat=True))
    for payout in payouts:
        for item in payout.items:
            fees += item.fee
            if item.kind == "charge" and item.payment_ref not in ours:
                unknown.append(f"{item.payment_ref} ({item.gross})")
                continue
            charges += item.kind == "charge"
            expected += item.gross - item.fee
    if unknown:
        notes.append(f"Processor charges with no online payment posted here: {', '.join(unknown)}.")
    return ChannelLine("processor", "Processor payouts: our online payments in them, less the processor's fees",
                       expected, _sum(d.amount.amount for d in deposits),
                       f"{charges} payment(s), {fmt_dollars(fees)} in fees")


def _not_paid_out(on: date, payouts, processor) -> list[OnlinePayment]:
    """Online payments posted from ``LOOK_BACK_DAYS`` to the payout delay before ``on`` that no payout since holds."""
    paid_out = {item.payment_ref for payout in payouts for item in payout.items if item.kind == "charge"}
    latest = on - timedelta(days=settings.PROCESSOR_PAYOUT_DAYS)
    posted = (OnlinePayment.objects.filter(processor=processor.name, status=OnlinePayment.Status.PAID,
                                           payment__isnull=False, reversed_on__isnull=True,
                                           payment__paid_on__gte=on - timedelta(days=LOOK_BACK_DAYS),
                                           payment__paid_on__lte=latest)
              .select_related("payment", "account").order_by("payment__paid_on", "pk"))
    return [online for online in posted if online.payment_ref not in paid_out]
