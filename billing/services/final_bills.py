"""Final bills: a move-out or a sale between billing dates, the account closed, and the next owner's account.

Design overview
---------------
A final bill is one off-cycle bill (``Bill.final``) from the last bill's closing reading to the final
reading. It is planned with the billing run's own pieces (``billing.runs.load``: the account's installations,
earlier bills and waiting charges; ``usage_for_bill``; ``billing.runs.plan.rate_usage``) and written by the run's
writer (``billing.runs.write.bills_write``: COPY on PostgreSQL), so its ``water`` entry and the ``fee``/``fine``
entries of the charges it carries reach the ledger through the one writer, exactly as a regular bill's do.

* **Dates.** The bill is dated the day of the final reading, or the day after the account's latest live bill
  when one is dated on or after it (one live bill per account and date); issued on the day the clerk issues
  it, and due by the preset's ``[final_bill] due_days`` or else the calendar's rule from the issue date.
* **Rates.** The schedule in force on the bill date. The per-bill minimum is charged as the preset's
  ``[final_bill] minimum`` says (office policy: no ordinance states one): ``pro_rata`` scales the minimum, its
  allowance and the block bounds by the days since the last bill date over the days from that bill date to the
  next regular one (``billing.rating.ProRata``); ``full`` charges a whole bill's. Monthly meters are rated as
  a regular monthly bill: the annual minimum was charged on the year's first monthly bill (§ 45.29 C).
* **Charges.** Every charge still waiting is carried, even one meant for a later bill: there is none.
* **Closing.** The account is closed on the reading's day and its meter's installation ends that day, so no
  regular run bills it again (closed accounts are never candidates, and a removed meter has no read window).

``account_move`` adds the other half of a sale or a move: a new account for the same premises, book and
category, the meter installed on it from the same day with the final reading as its first, and the new owner
(and occupant). It starts clean, unless the preset says arrears follow the property (South Farmingdale § 4.2,
Gen. Info 5): then the old account's unpaid balance after the final bill moves across as a credit memo on the
old account and a debit memo on the new one, each naming the section. ``accounts.services.account_owner_change``
remains the sale that keeps the account (no final reading, no final bill: the next regular bill goes to the new
owner for the whole period).
"""

import uuid
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal

from django.db import transaction

from accounts.models import Account, Customer, Ownership
from accounts.services import account_close
from core.clock import refuse_future
from core.errors import ApplicationError, FieldError
from core.money import ZERO, fmt_dollars
from meters.models import Installation, Meter, Reading
from meters.services import reading_problems, reading_record
from ordinance.selectors import section

from ..consumption import Problem, Read, usage_for_bill
from ..districts import district_history, district_on
from ..ledger.selectors import account_balances
from ..models import Bill
from ..ordinance import sample_rates_refusal
from ..rating import Line, ProRata
from ..runs.final import FinalBillFacts, final_bill_facts, final_bill_rated
from ..runs.load import WaitingCharge, waiting_charges
from ..runs.plan import NewBill, high_usage_words
from ..runs.write import bills_write
from ..sections import FinalBillRule
from ..signals import bills_issued
from .adjustments import balance_transfer


@dataclass(frozen=True)
class FinalBillPlan:
    """A final bill as it would be issued: what the preview shows and the writer writes."""

    account: Account
    bill: NewBill
    lines: tuple[Line, ...]
    charges: list[WaitingCharge]
    pro_rata: ProRata | None
    rule: FinalBillRule
    high_usage: str = ""  # why the final reading looks far above the account's normal use ("": it does not)

    @property
    def water_total(self) -> Decimal:
        return self.bill.total - sum((c.amount for c in self.charges), ZERO)


def _final_number(bill_date: date, account_no: str) -> str:
    base = f"{bill_date:%Y%m%d}-{account_no}-F"
    taken = Bill.objects.filter(number__startswith=base).count()
    return base + (f"-{taken + 1}" if taken else "")


def _bill_date(history: list[dict], read_on: date) -> date:
    latest = history[-1]["bill_date"] if history else None
    return latest + timedelta(days=1) if latest is not None and latest >= read_on else read_on


def _refusals(account: Account, facts: FinalBillFacts, *, read_on: date, as_of: date) -> None:
    errors = []
    if account.status == Account.Status.CLOSED:
        errors.append(FieldError(field="account", message=f"account {account.account_no} is already closed"
                                 + (f" (on {account.closed_on})" if account.closed_on else "")
                                 + "; it has had its final bill"))
    if read_on > as_of:
        errors.append(FieldError(field="read_on", message=f"{read_on} is after the issue date {as_of}: a final "
                                 "reading is taken before its bill is issued"))
    if not facts.current:
        errors.append(FieldError(field="meter", message=f"account {account.account_no} has no meter installed on "
                                 f"{read_on}: a final bill needs a final reading"))
    elif len(facts.current) > 1:
        errors.append(FieldError(field="meter", message=f"account {account.account_no} has {len(facts.current)} "
                                 "meters installed; a final bill takes one final reading — remove the others first"))
    if facts.history and read_on <= facts.history[-1]["period_end"]:
        last = facts.history[-1]
        errors.append(FieldError(field="read_on", message=f"{read_on} is not after {last['period_end']}, the end of "
                                 f"the period of the last bill (dated {last['bill_date']}): the final bill starts "
                                 "from that bill's reading"))
    if errors:
        raise ApplicationError(errors=errors)
    refuse_future(as_of, field="date", doing="billed")


def _plan(account: Account, *, read_on: date, end: Read, as_of: date, lock: bool) -> FinalBillPlan:
    facts = final_bill_facts(account, on=read_on)
    _refusals(account, facts, read_on=read_on, as_of=as_of)
    bill_date = _bill_date(facts.history, read_on)
    if bill_date > as_of:
        raise ApplicationError(f"a bill of account {account.account_no} is dated {bill_date - timedelta(days=1)}, "
                               f"so the final bill is dated {bill_date}, after the issue date {as_of}; issue it "
                               "from that day on", field="read_on")
    # A town's account is billed by its premises' district on the bill date: its final-bill rule, calendar, rates.
    district = district_on(district_history([account.pk]).get(account.pk, []), bill_date)
    rule = section("final_bill", bill_date, district=district)
    previous = facts.history[-1] if facts.history else None
    meter_ids = {s.meter_id for s in facts.spans}
    readings: dict[int, list[Read]] = {meter_id: [] for meter_id in meter_ids}
    for rid, meter_id, on, value, read_type in Reading.objects.filter(meter_id__in=meter_ids, read_on__lte=read_on) \
            .exclude(pk=end.id).order_by("read_on").values_list("id", "meter_id", "read_on", "value", "read_type"):
        readings[meter_id].append(Read(rid, meter_id, on, value, read_type))
    readings[end.meter_id].append(end)
    by_id = {r.id: r for reads in readings.values() for r in reads}
    usage = usage_for_bill(installations=facts.spans, readings=readings, window=(read_on, read_on),
                           previous_end=by_id.get(previous["end_reading_id"]) if previous else None,
                           previous_period_end=previous["period_end"] if previous else None)
    if isinstance(usage, Problem):
        raise ApplicationError(usage.detail, field="reading")
    anchor = previous["bill_date"] if previous else usage.start.read_on
    ordinance, frequency, part, rated = final_bill_rated(facts, bill_date=bill_date, gallons=usage.gallons,
                                                         anchor=anchor, rule=rule, district=district,
                                                         period_days=(usage.end.read_on - usage.start.read_on).days)
    # A final bill carries every charge still waiting, even one meant for a later bill: there is none.
    charges = waiting_charges([account.pk], on=date.max, lock=lock).get(account.pk, [])
    total = rated.total + sum((c.amount for c in charges), ZERO)
    due_date = (as_of + timedelta(days=rule.due_days) if rule.due_days is not None
                else ordinance.calendar.due_date(as_of))
    bill = NewBill(
        number=_final_number(bill_date, account.account_no), public_id=uuid.uuid4(), account_id=account.pk,
        run_id=None, frequency=frequency, bill_date=bill_date, issued_on=as_of,
        recipient_name=facts.row.owner_name, recipient_address=facts.row.owner_address, due_date=due_date,
        period_start=usage.start.read_on, period_end=usage.end.read_on, gallons=usage.gallons,
        schedule_gallons=rated.schedule_gallons, includes_annual_minimum=rated.includes_annual_minimum,
        start_reading_id=usage.start.id, end_reading_id=usage.end.id, estimated=usage.estimated,
        rate_schedule_id=ordinance.rate_schedule.pk, total=total, final=True, district_id=district or None)
    high = high_usage_words(usage.gallons, (usage.end.read_on - usage.start.read_on).days, previous,
                            factor=ordinance.high_usage_factor) if previous else ""
    return FinalBillPlan(account=account, bill=bill, lines=(*rated.lines, *(c.line() for c in charges)),
                         charges=charges, pro_rata=part, rule=rule, high_usage=high)


def _refuse_sample_rates(*, on: date, accept_sample_rates: bool) -> None:
    refusal = sample_rates_refusal(on=on, accept_sample_rates=accept_sample_rates)
    if refusal:
        raise ApplicationError(refusal, field="accept_sample_rates")


@transaction.atomic  # the reading's rules lock the meter while they look (PostgreSQL locks only in a transaction)
def final_bill_preview(*, account: Account, read_on: date, reading: int, as_of: date) -> FinalBillPlan:
    """The final bill a reading of ``reading`` on ``read_on`` would issue, rated and nothing written. Refused
    as ``final_bill_issue`` would refuse it, the reading's own rules (meters) included."""
    account = Account.objects.select_related("owner").get(pk=account.pk)
    facts = final_bill_facts(account, on=read_on)
    _refusals(account, facts, read_on=read_on, as_of=as_of)
    meter = facts.current[0].meter_id
    problems = reading_problems(meter=Meter.objects.get(pk=meter), read_on=read_on, value=reading,
                                read_type=Reading.ReadType.FINAL, as_of=as_of)
    if problems:
        raise ApplicationError(errors=[_reading_field(p) for p in problems])
    return _plan(account, read_on=read_on, end=Read(0, meter, read_on, reading, Reading.ReadType.FINAL),
                 as_of=as_of, lock=False)


def _reading_field(problem: FieldError) -> FieldError:
    return FieldError(field="reading" if problem.field == "value" else problem.field, message=problem.message)


@transaction.atomic
def final_bill_issue(*, account: Account, read_on: date, reading: int, as_of: date, actor, close: bool = True,
                     accept_sample_rates: bool = False) -> Bill:
    """Record the final reading, issue the account's final bill from it, and (``close``) close the account and
    end its meter's installation on ``read_on``. Every refusal names its field; nothing is written unless all
    pass."""
    account = Account.objects.select_for_update().select_related("owner").get(pk=account.pk)
    facts = final_bill_facts(account, on=read_on)
    _refusals(account, facts, read_on=read_on, as_of=as_of)
    _refuse_sample_rates(on=_bill_date(facts.history, read_on), accept_sample_rates=accept_sample_rates)
    meter = facts.current[0].meter_id
    try:
        recorded = reading_record(meter=Meter.objects.get(pk=meter), read_on=read_on, value=reading,
                                  read_type=Reading.ReadType.FINAL, as_of=as_of, actor=actor,
                                  note=f"final reading of account {account.account_no}")
    except ApplicationError as exc:
        raise ApplicationError(errors=[_reading_field(p) for p in exc.errors]) from exc
    plan = _plan(account, read_on=read_on, end=Read(recorded.pk, meter, read_on, reading, recorded.read_type),
                 as_of=as_of, lock=True)
    bills_write([plan.bill], [plan.lines], [plan.charges])
    if close:
        _close(account, on=read_on, actor=actor)
    bill = Bill.objects.get(pk=plan.bill.pk)
    # The bill's PDF is stored after commit, as a run's bills' are.
    transaction.on_commit(lambda: bills_issued.send(sender=Bill, bill_ids=[bill.pk]))
    return bill


def _close(account: Account, *, on: date, actor) -> None:
    """Close the account on ``on`` and end the installation of every meter still on it that day."""
    for installation in Installation.objects.select_for_update().filter(account=account, removed_on__isnull=True):
        installation.removed_on = max(on, installation.installed_on)
        installation._history_user = actor
        installation._change_reason = f"account {account.account_no} closed on {on} (final bill)"
        installation.save(update_fields=["removed_on"])
    account_close(account=account, on=on, actor=actor, reason=f"closed on {on} with its final bill")
    account.refresh_from_db(fields=["status", "closed_on"])


@dataclass(frozen=True)
class Move:
    final_bill: Bill
    old_account: Account
    new_account: Account
    transferred: Decimal  # the arrears moved to the new account (0 unless they follow the property)


@transaction.atomic
def account_move(*, account: Account, on: date, new_owner: Customer, new_account_no: str, actor, final_reading: int,
                 as_of: date, new_occupant: Customer | None = None, accept_sample_rates: bool = False) -> Move:
    """A move-out and move-in (or a sale with a final bill): the final bill from ``final_reading`` on ``on``, the
    old account closed, and a new account for the same premises from ``on`` with the meter installed on it and
    the final reading as its first. The new account starts clean unless the preset says arrears follow the
    property (``[final_bill] arrears_follow_property``); then the old account's unpaid balance moves to it."""
    new_account_no = (new_account_no or "").strip()
    if not new_account_no:
        raise ApplicationError("the new account needs an account number", field="new_account_no")
    if Account.objects.filter(account_no=new_account_no).exists():
        raise ApplicationError(f"account number {new_account_no} is already in use", field="new_account_no")
    bill = final_bill_issue(account=account, read_on=on, reading=final_reading, as_of=as_of, actor=actor, close=True,
                            accept_sample_rates=accept_sample_rates)
    old = Account.objects.select_related("owner").get(pk=account.pk)
    Ownership.objects.filter(account=old, ended_on__isnull=True).update(ended_on=on)
    new = Account(account_no=new_account_no, book=old.book, category=old.category, premises_id=old.premises_id,
                  owner=new_owner, occupant=new_occupant, status=Account.Status.ACTIVE,
                  sprinkler_supply_inches=old.sprinkler_supply_inches, opened_on=on)
    new._history_user = actor
    new._change_reason = f"opened on {on}: follows account {old.account_no} at the premises"
    new.save()
    Ownership.objects.create(account=new, owner=new_owner, started_on=on)
    meter_id = Reading.objects.filter(pk=bill.end_reading_id).values_list("meter_id", flat=True).get()
    installation = Installation(meter_id=meter_id, account=new, installed_on=on)
    installation._history_user = actor
    installation.save()
    transferred = ZERO
    rule = section("final_bill", bill.bill_date, district=bill.district_id or "")
    if rule.arrears_follow_property:
        transferred = _arrears_transfer(old=old, new=new, on=as_of, rule=rule, actor=actor)
    return Move(final_bill=bill, old_account=old, new_account=new, transferred=transferred)


@transaction.atomic(durable=True)
def account_move_to_new_customer(*, account: Account, on: date, owner_name: str, owner_address: str,
                                 new_account_no: str, actor, final_reading: int, as_of: date, owner_email: str = "",
                                 occupant_name: str = "", accept_sample_rates: bool = False) -> Move:
    """``account_move`` for a new owner (and occupant) not yet on file, typed at the counter: the customers are
    recorded with the move, or nothing is."""
    errors = []
    if not owner_name.strip():
        errors.append(FieldError(field="owner_name", message="the new owner needs a name"))
    if not owner_address.strip():
        errors.append(FieldError(field="owner_address", message="the new owner needs a mailing address for bills"))
    if errors:
        raise ApplicationError(errors=errors)
    owner = Customer.objects.create(name=owner_name.strip(), mailing_address=owner_address.strip(),
                                    email=owner_email.strip())
    occupant = (Customer.objects.create(name=occupant_name.strip(), mailing_address=account.premises.service_address)
                if occupant_name.strip() else None)
    return account_move(account=account, on=on, new_owner=owner, new_occupant=occupant, new_account_no=new_account_no,
                        actor=actor, final_reading=final_reading, as_of=as_of, accept_sample_rates=accept_sample_rates)


def _arrears_transfer(*, old: Account, new: Account, on: date, rule: FinalBillRule, actor) -> Decimal:
    """Move the old account's unpaid balance (after its final bill) to the new one: a credit memo on the old
    account and a debit memo on the new, neither on a bill, each citing the rule."""
    balance = account_balances([old.pk], through=on)[old.pk].balance
    if balance <= ZERO:
        return ZERO
    balance_transfer(
        from_account=old, to_account=new, amount=balance, on=on, actor=actor, citation=rule.arrears_citation,
        reason=f"arrears follow the property to the new owner ({rule.arrears_citation})",
        from_words=f"Unpaid balance transferred to account {new.account_no}, the premises' new account "
                   f"({rule.arrears_citation})",
        to_words=f"Unpaid balance of account {old.account_no} at these premises: a new owner is liable for it "
                 f"({rule.arrears_citation})")
    return balance


def plan_words(plan: FinalBillPlan) -> str:
    """One line for a command or a message: the bill's number, dates and total."""
    b = plan.bill
    return (f"final bill {b.number} dated {b.bill_date}, {b.gallons:,} gal {b.period_start} – {b.period_end}, "
            f"total {fmt_dollars(b.total)}, due {b.due_date}")
