"""Demo payments, so a demo village looks like a real one: most customers pay on time, some late or in
part, a few not at all (those show penalties and land on the delinquency list). "On time" is by the
installed preset: up to the last day before the bill's first late charge (its due date, or the end of a
grace period where the bill is due when rendered)."""

import random
from datetime import date, timedelta
from decimal import ROUND_CEILING, Decimal

from django.db import transaction
from djmoney.money import Money

from billing.ledger.posting import Posting, ledger_post_many, payment_source
from billing.models import Bill, LedgerEntry, Payment
from billing.ordinance import ordinance_on
from billing.selectors import first_late_day


def _tender(rng: random.Random) -> str:
    """How a village's customers pay: most by check (at the counter or by mail), many through the bank's
    lockbox file, some by card or in cash."""
    roll = rng.random()
    if roll < 0.45:
        return Payment.Tender.CHECK
    if roll < 0.80:
        return Payment.Tender.BANK_FILE
    return Payment.Tender.CARD if roll < 0.92 else Payment.Tender.CASH


@transaction.atomic
def demo_payments_create(*, as_of: date, seed: int = 45) -> int:
    paid = set(Payment.objects.values_list("reference", flat=True))
    scheme = ordinance_on(as_of).penalties if Bill.objects.exists() else None
    payments, entries = [], []
    for account_id, number, bill_date, due_date, total in Bill.objects.filter(
            status=Bill.Status.ISSUED).order_by("id").values_list(
            "account_id", "number", "bill_date", "due_date", "total"):
        reference = f"DEMO-{number}"
        if reference in paid:
            continue
        # Each bill decides by its own number, so a bill that is never paid stays unpaid however often (and
        # on whichever days) this runs: a later call must not pay it after all.
        rng = random.Random(f"{seed}:{number}")
        roll = rng.random()
        # The last day without a late charge: the due date, or later where the ordinance counts from the
        # bill date (a bill due when rendered is paid on time within its grace period).
        last_on_time = first_late_day(scheme, bill_date=bill_date, due_date=due_date) - timedelta(days=1)
        on_time_days = (last_on_time - bill_date).days
        if roll < 0.80:  # on time, in full
            paid_on, amount = bill_date + timedelta(days=rng.randint(min(5, on_time_days), on_time_days)), total
        elif roll < 0.90:  # late, in full: the bill and its late charges, as the late notice asks, rounded up
            paid_on = last_on_time + timedelta(days=rng.randint(3, 40))
            amount = (total * Decimal("1.10")).quantize(Decimal("1"), rounding=ROUND_CEILING)
        elif roll < 0.95:  # part
            paid_on, amount = bill_date + timedelta(days=rng.randint(5, 25)), (total / 2).quantize(Decimal("0.01"))
        else:
            continue
        if paid_on > as_of or amount <= 0:
            continue
        tender = _tender(rng)
        payments.append(Payment(account_id=account_id, amount=Money(amount, "USD"), paid_on=paid_on,
                                reference=reference, source="demo", tender=tender,
                                check_number=str(rng.randint(1001, 9999)) if tender == Payment.Tender.CHECK else ""))
    Payment.objects.bulk_create(payments, batch_size=2000)
    for p in Payment.objects.filter(source="demo", entry__isnull=True):
        entries.append(Posting(account_id=p.account_id, kind=LedgerEntry.Kind.PAYMENT, posted_on=p.paid_on,
                               amount=-p.amount.amount, source=payment_source(p.pk), payment_id=p.pk,
                               description=f"Payment {p.reference}"))
    ledger_post_many(entries)
    return len(payments)
