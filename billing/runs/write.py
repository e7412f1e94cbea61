"""Writing a chunk's plan: its bills, their lines and ledger entries in bulk (COPY on PostgreSQL, through the one
ledger writer), the charges they carry marked carried, the exceptions recorded and those the new bills settle
resolved."""

from datetime import date, timedelta

from django.utils import timezone
from djmoney.money import Money

from core.db import copy_rows, is_postgres, reserve_ids
from core.money import ZERO

from ..ledger.posting import Posting, bill_source, charge_source, ledger_post_many
from ..models import Bill, BillingException, BillLine, LedgerEntry, PendingCharge
from .load import WaitingCharge
from .plan import ChunkResult, NewBill


def chunk_write(plan: ChunkResult, *, run_on: date) -> None:
    """Write what ``plan_chunk`` planned for ``run_on`` (inside the transaction that loaded it with locks)."""
    bills_write(plan.new_bills, plan.new_lines, plan.carried)
    _missed_reads_named(plan.new_exceptions, run_on=run_on)
    BillingException.objects.bulk_create(plan.new_exceptions, ignore_conflicts=True)
    if plan.resolved:
        BillingException.objects.filter(account_id__any=plan.resolved, bill_date=run_on,
                                        status=BillingException.Status.OPEN).update(
            status=BillingException.Status.RESOLVED, resolved_at=timezone.now())


def bills_write(bills: list[NewBill], lines_per_bill: list[tuple],
                 charges_per_bill: list[list[WaitingCharge]]) -> None:
    """Write the bills, their lines and their ledger entries: COPY on PostgreSQL, bulk_create elsewhere.

    A bill's ``water`` entry is its water lines; each charge it carries is its own ``fee`` or ``fine`` entry
    (source ``charge:<id>``, once), and the charge is marked as carried by the bill."""
    now = timezone.now()
    if is_postgres():
        for bill, bill_id in zip(bills, reserve_ids(Bill, len(bills)), strict=True):
            bill.pk = bill_id
    else:
        created = Bill.objects.bulk_create([Bill(**bill.fields(), total=Money(bill.total, "USD")) for bill in bills],
                                           batch_size=2000)
        for bill, row in zip(bills, created, strict=True):
            bill.pk = row.pk
    lines, entries, billed_charges = [], [], []
    water, sewer_kind = LedgerEntry.Kind.WATER.value, LedgerEntry.Kind.SEWER.value
    for bill, bill_lines, charges in zip(bills, lines_per_bill, charges_per_bill, strict=True):
        sewer = ZERO
        for position, line in enumerate(bill_lines, start=1):
            lines.append((bill.pk, position, line.kind, line.description, line.citation, line.quantity, line.rate,
                          line.amount, "USD"))
            if line.kind == sewer_kind:
                sewer += line.amount
        rents = bill.total - sum(c.amount for c in charges) if charges else bill.total
        entries.append(Posting(account_id=bill.account_id, kind=water, posted_on=bill.issued_on,
                               amount=rents - sewer, source=bill_source(bill.pk), bill_id=bill.pk,
                               description=f"Bill {bill.number}",
                               citation=bill_lines[0].citation if bill_lines else ""))
        if sewer:
            entries.append(Posting(account_id=bill.account_id, kind=sewer_kind, posted_on=bill.issued_on,
                                   amount=sewer, source=bill_source(bill.pk), bill_id=bill.pk,
                                   description=f"Sewer rent, bill {bill.number}",
                                   citation=next(line.citation for line in bill_lines if line.kind == sewer_kind)))
        if charges:
            entries.extend(Posting(account_id=bill.account_id, kind=c.kind, posted_on=bill.issued_on,
                                   amount=c.amount, source=charge_source(c.id), bill_id=bill.pk, citation=c.citation,
                                   description=c.description) for c in charges)
            billed_charges.extend(PendingCharge(pk=c.id, bill_id=bill.pk) for c in charges)
    line_columns = ("bill_id", "position", "kind", "description", "citation", "quantity", "rate", "amount",
                    "amount_currency")
    if is_postgres():
        bill_columns = ("id", "number", "public_id", "account_id", "run_id", "status", "frequency", "bill_date",
                        "issued_on", "recipient_name", "recipient_address", "due_date", "period_start",
                        "period_end", "gallons", "schedule_gallons",
                        "includes_annual_minimum", "start_reading_id", "end_reading_id", "estimated",
                        "rate_schedule_id", "total", "total_currency", "created_at", "void_reason", "void_description",
                        "pdf", "final", "district_id")
        copy_rows(Bill, bill_columns, [
            (b.pk, b.number, b.public_id, b.account_id, b.run_id, Bill.Status.ISSUED.value, b.frequency, b.bill_date,
             b.issued_on, b.recipient_name, b.recipient_address, b.due_date, b.period_start, b.period_end,
             b.gallons, b.schedule_gallons,
             b.includes_annual_minimum, b.start_reading_id, b.end_reading_id, b.estimated, b.rate_schedule_id,
             b.total, "USD", now, "", "", "", b.final, b.district_id)
            for b in bills])
        copy_rows(BillLine, line_columns, lines)
    else:
        BillLine.objects.bulk_create([BillLine(**dict(zip(line_columns, row, strict=True))) for row in lines],
                                     batch_size=5000)
    ledger_post_many(entries, fresh=True)
    if billed_charges:
        PendingCharge.objects.bulk_update(billed_charges, ["bill"], batch_size=2000)


def _missed_reads_named(exceptions: list[BillingException], *, run_on: date) -> None:
    """A bill held for want of a reading names what the reader's file said of the meter (its no-read code)."""
    waiting = {e.account_id: e for e in exceptions if e.kind == BillingException.Kind.NO_READING}
    if not waiting:
        return
    from meters.models import MissedRead

    said = {}
    for account_id, read_on, code, source in (MissedRead.objects.filter(
            meter__installations__account_id__in=list(waiting), read_on__lte=run_on,
            read_on__gte=run_on - timedelta(days=120)).order_by("read_on")
            .values_list("meter__installations__account_id", "read_on", "code", "source")):
        said[account_id] = f"; the reader's file says not read on {read_on} (code {code}, {source})"
    for account_id, words in said.items():
        waiting[account_id].detail += words
