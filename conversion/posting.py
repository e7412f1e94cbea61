"""Posting a conversion, and rolling it back.

Design overview:

* **Post** (``conversion_post``) reads the files as ``convert check`` does (``conversion_read``: the open items,
  ``opening``; the past bills and payments, ``history``; the backflow devices, ``devices``; the owners' e-mail
  addresses and paperless choices, ``contacts``; the accounts' notes, ``notes``; the payment plans in force,
  ``plans``; the termination cases in progress, ``cases``; what it had relevied, ``relevied``; all or nothing,
  every problem with its file, line and column), with every item dated before the cutover, then in one durable
  transaction records the batch and its rows and has billing write the open bills and account items
  (``billing.services.opening``, through the one ledger writer). Anything refused refuses the whole file: nothing
  is saved.
* **The same file posts once**: a batch keeps the file's digest (the unique key ``one_posted_batch_per_file``);
  posting it again answers the batch already posted and writes nothing. Another file naming a bill already
  converted is refused by the check (the bill number is one of ours).
* **Rollback** (``conversion_rollback``) removes the batch's rows whole, leaving the books as they were before
  it, until the first bill run on or after its cutover; then, or once anything else is on its accounts (a
  payment, a late charge of ours), it refuses. The batch stays, marked rolled back, for the record.
"""

import hashlib
from dataclasses import dataclass
from datetime import date, timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account
from billing.models import BillingRun
from billing.services.opening import (
    AccountItem,
    OpeningBill,
    PriorPaymentItem,
    PriorRelevyItem,
    opening_books_post,
    opening_books_remove,
)
from core.csvimport import ImportRejected, chunked, import_source_read
from core.db import collector_paused, copy_rows, is_postgres, lock_for_transaction
from core.errors import ApplicationError, FieldError
from core.workflow import transition

from .cases import cases_post, cases_read, cases_remove_made
from .contacts import contacts_post, contacts_read, contacts_remove
from .control import control_refuse, control_report_read
from .devices import devices_post, devices_read, devices_remove
from .history import History, history_read
from .models import ConversionBatch, OpeningItem
from .notes import notes_post, notes_read, notes_remove
from .opening import ACCOUNT_KINDS, Mapping, OpeningBalances, OpenItem, opening_balances_read, opening_digest
from .plans import plans_post, plans_read, plans_remove_made
from .relevied import relevied_read

LOCK = "conversion"
KIND_WORDS = {"water": "Water", "sewer": "Sewer", "fee": "Fee", "fine": "Fine"}


@dataclass(frozen=True)
class Posted:
    batch: ConversionBatch
    checked: OpeningBalances | None
    already: bool  # the file was posted before: nothing was written now


@collector_paused()  # hundreds of thousands of rows, none in a cycle
def conversion_read(source, *, as_of: date, mapping: Mapping | None = None, bills=None,
                    payments=None, devices=None, contacts=None, notes=None,
                    plans=None, cases=None, relevied=None) -> tuple[OpeningBalances, History]:
    """The opening balances and the history (past bills, payments) checked together, all or nothing: each file
    as ``convert check`` checks it, then a bill in both files must be one bill (its account and dates)."""
    checked = opening_balances_read(source, as_of=as_of, mapping=mapping)
    history = history_read(bills, payments, as_of=as_of)
    if devices is not None:
        history.devices = devices_read(devices, as_of=as_of)
    if contacts is not None:
        history.contacts = contacts_read(contacts)
    if notes is not None:
        history.notes = notes_read(notes, as_of=as_of)
    if plans is not None:
        history.plans = plans_read(plans, as_of=as_of, opening=checked)
    if cases is not None:
        history.cases = cases_read(cases, as_of=as_of)
    if relevied is not None:
        history.relevied = relevied_read(relevied, as_of=as_of)
    open_bills: dict[str, OpenItem] = {}
    for item in checked.items:
        if item.bill_no:
            open_bills.setdefault(item.bill_no, item)
    errors = []
    for number, past in history.bills.items():
        item = open_bills.get(number)
        if item is not None and (item.account_no, item.bill_date, item.due_date) != (
                past.account_no, past.bill_date, past.due_date):
            errors.append(FieldError(field="history.bill_no", line=past.line, message=(
                f"bill {number} is account {item.account_no}'s dated {item.bill_date}, due {item.due_date} on line "
                f"{item.line} of the opening balances; one bill has one account and dates")))
    if errors:
        raise ImportRejected(f"{len(errors)} bill(s) differ between the files; nothing was saved", errors=errors[:200],
                             unlisted=max(len(errors) - 200, 0))
    return checked, history


@collector_paused()
def conversion_post(source, *, cutover: date, today: date, actor=None, mapping: Mapping | None = None,
                    bills=None, payments=None, devices=None, contacts=None, notes=None, plans=None, cases=None,
                    relevied=None, progress=None,
                    control: str | bytes | None = None) -> Posted:
    """Post the opening balances in ``source`` (a path, bytes or an upload), with the old system's past bills and
    payments when given, as of ``cutover``: all or nothing. With ``control`` (the old system's control report,
    ``conversion.control``) a file that differs from it by a cent is refused before anything is written.
    ``progress()`` is called once the files are checked, as the posting begins."""
    if cutover > today:
        raise ApplicationError(f"the cutover {cutover} is after today ({today}); post the file on or after its "
                               "cutover, when the old system's books are closed", field="cutover")
    digest = _digest(source, mapping=mapping, files=(bills, payments, devices, contacts, notes, plans, cases,
                                                               relevied))
    existing = ConversionBatch.objects.filter(digest=digest, status=ConversionBatch.Status.POSTED).first()
    if existing is not None:
        return Posted(batch=existing, checked=None, already=True)
    checked, history = conversion_read(source, as_of=cutover - timedelta(days=1), mapping=mapping, bills=bills,
                                       payments=payments, devices=devices, contacts=contacts, notes=notes,
                                       plans=plans, cases=cases, relevied=relevied)
    legacy = {}
    if control is not None:
        control_refuse(checked, control)
        legacy = {name: str(value) for name, value in control_report_read(control).items()}
    if progress is not None:
        progress()
    try:
        with transaction.atomic(durable=True):
            lock_for_transaction(LOCK)
            batch = ConversionBatch.objects.create(file_name=checked.name[:200], digest=digest, cutover=cutover,
                                                   control={**checked.control_totals(),
                                                            "history": history.control_totals(),
                                                            **({"legacy": legacy} if legacy else {})},
                                                   posted_by=actor)
            written, made = _write(batch, checked, history, cutover=cutover)
            ConversionBatch.objects.filter(pk=batch.pk).update(bills=written.bills, entries=written.entries,
                                                               made=made)
    except IntegrityError:
        # The same file posted at the same moment by someone else: theirs is the batch.
        existing = ConversionBatch.objects.filter(digest=digest, status=ConversionBatch.Status.POSTED).first()
        if existing is None:
            raise
        return Posted(batch=existing, checked=checked, already=True)
    batch.refresh_from_db()
    return Posted(batch=batch, checked=checked, already=False)


def _digest(source, *, mapping, files) -> str:
    """The files' digest: the opening balances as read (after the mapping), then the history files."""
    parts = [opening_digest(source, mapping=mapping)]
    parts += [hashlib.sha256(import_source_read(f).text.encode()).hexdigest() if f is not None else ""
              for f in files]
    while len(parts) > 1 and not parts[-1]:
        parts.pop()  # a file not given adds nothing (a batch posted before a file kind existed keeps its digest)
    return parts[0] if len(parts) == 1 else hashlib.sha256("/".join(parts).encode()).hexdigest()


def _write(batch: ConversionBatch, checked: OpeningBalances, history: History, *, cutover: date):
    numbers = sorted({item.account_no for item in checked.items} | {b.account_no for b in history.bills.values()}
                     | {p.account_no for p in history.payments} | {d.account_no for d in history.devices}
                     | {c.account_no for c in history.contacts} | {n.account_no for n in history.notes}
                     | {p.account_no for p in history.plans} | {c.account_no for c in history.cases}
                     | {r.account_no for r in history.relevied})
    ids: dict[str, int] = {}
    for chunk in chunked(numbers, 20_000):
        ids.update(Account.objects.filter(account_no__any=list(chunk)).values_list("account_no", "id"))
    bills: dict[str, OpeningBill] = {}
    items: list[AccountItem] = []
    for item in checked.items:
        account_id = ids[item.account_no]
        if item.kind in ACCOUNT_KINDS:
            items.append(AccountItem(account_id=account_id, kind=item.kind, amount=item.amount,
                                     description=item.description))
            continue
        bill = bills.get(item.bill_no)
        if bill is None:
            bill = bills[item.bill_no] = OpeningBill(account_id=account_id, number=item.bill_no,
                                                     bill_date=item.bill_date, due_date=item.due_date)
        bill.charges.append((item.kind, item.description, item.amount, item.charged_on))
    for number, past in history.bills.items():
        bill = bills.get(number)
        if bill is None:  # paid in the old system: its lines as billed, shown, not owed
            bills[number] = OpeningBill(account_id=ids[past.account_no], number=number, bill_date=past.bill_date,
                                        due_date=past.due_date, open=False, period=past.period, gallons=past.gallons,
                                        charges=[(kind, KIND_WORDS[kind], amount, None)
                                                 for kind, amount in past.charges])
        else:  # owed in part: the open items are its lines; the history says what was used
            bill.period, bill.gallons = past.period, past.gallons
    written = opening_books_post(
        bills=list(bills.values()), items=items, cutover=cutover, prefix=batch.source_prefix,
        payments=[PriorPaymentItem(account_id=ids[p.account_no], paid_on=p.paid_on, amount=p.amount,
                                   reference=p.reference) for p in history.payments],
        relevies=[PriorRelevyItem(account_id=ids[r.account_no], relevied_on=r.relevied_on, tax_roll=r.tax_roll,
                                  amount=r.amount) for r in history.relevied])
    columns = ("batch_id", "line", "account_id", "bill_no", "bill_date", "due_date", "kind", "amount",
               "amount_currency", "description")
    rows = [(batch.pk, i.line, ids[i.account_no], i.bill_no, i.bill_date, i.due_date, i.kind, i.amount, "USD",
             i.description) for i in checked.items]
    if is_postgres():
        copy_rows(OpeningItem, columns, rows)
    else:
        OpeningItem.objects.bulk_create([OpeningItem(**dict(zip(columns, row, strict=True))) for row in rows],
                                        batch_size=5000)
    made = {}
    if history.devices:
        made.update(devices_post(history.devices, accounts=ids, as_of=cutover - timedelta(days=1)))
    if history.contacts:
        made.update(contacts_post(history.contacts, accounts=ids))
    if history.notes:
        made.update(notes_post(history.notes, accounts=ids))
    if history.plans:
        made.update(plans_post(history.plans, accounts=ids, cutover=cutover))
    if history.cases:
        made.update(cases_post(history.cases, accounts=ids, actor=batch.posted_by))
    return written, made


def rollback_refusal(batch: ConversionBatch) -> str:
    """Why the batch can no longer be rolled back ("" when it can)."""
    if batch.status != ConversionBatch.Status.POSTED:
        return f"conversion {batch.pk} was rolled back on {timezone.localdate(batch.rolled_back_at)}"
    run = (BillingRun.objects.filter(run_on__gte=batch.cutover, dry_run=False).order_by("run_on", "id")
           .values_list("pk", "run_on").first())
    if run is not None:
        return (f"billing run {run[0]} of {run[1]} is on or after the cutover {batch.cutover}: from the first bill "
                "run the converted books are ours, corrected by adjustments, never removed")
    return ""


def conversion_rollback(batch_id: int, *, actor=None) -> ConversionBatch:
    """Remove a posted batch's bills, ledger rows and deposits whole; refused (nothing removed) after the first
    bill run on or after its cutover, or once anything else is on its accounts."""
    with transaction.atomic(durable=True):
        lock_for_transaction(LOCK)
        batch = ConversionBatch.objects.select_for_update().filter(pk=batch_id).first()
        if batch is None:
            raise ApplicationError(f"there is no conversion {batch_id}", field="batch")
        refusal = rollback_refusal(batch)
        if refusal:
            raise ApplicationError(refusal, field="batch")
        cases_remove_made(batch.made)  # before the bills they name
        devices_remove(batch.made)
        contacts_remove(batch.made)
        notes_remove(batch.made)
        plans_remove_made(batch.made)
        opening_books_remove(prefix=batch.source_prefix)
        batch = transition(batch, to=ConversionBatch.Status.ROLLED_BACK, actor=actor, note="rolled back whole",
                           changes={"rolled_back_at": timezone.now(), "rolled_back_by": actor})
    return batch


def batches_for(cutover: date | None = None):
    """The posted batches (of a cutover)."""
    batches = ConversionBatch.objects.filter(status=ConversionBatch.Status.POSTED)
    return batches.filter(cutover=cutover) if cutover else batches

