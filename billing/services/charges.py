"""Fees and fines charged between bills: they wait as ``PendingCharge`` rows for the account's next bill.

``charge_create`` quotes the fee by its rule (``billing.fees``) from the fee schedule in force on the day it is
charged and keeps what the bill line will say — description, citation, quantity, rate and amount — so the
charge reads the same on whichever bill carries it. Nothing goes on the ledger here: the billing run that
carries the charge writes its ``fee`` (or ``fine``) entry with the bill (``billing.runs.write``), so the
balance, penalties and the bill's total all see the charge on the same day, the bill's.

A charge is cancelled (with a reason) only while it waits; once a bill carries it, it is the bill's and is
corrected as the bill is. Voiding the bill reverses the whole bill, charges included, and each of its charges
is charged again (``charges_reissue``) so the corrected bill carries it once more.
"""

from dataclasses import dataclass
from datetime import date
from decimal import Decimal

from django.db import transaction
from django.utils import timezone
from djmoney.money import Money

from accounts.models import Account
from core.clock import refuse_future
from core.csvimport import dollars_at_most
from core.errors import ApplicationError, FieldError, NotFound
from core.money import fmt_dollars

from ..appointments import Appointment
from ..districts import account_district
from ..fees import BASE_MAX, CHARGE_MAX, fee_codes, fee_in_force, fee_rule
from ..models import Bill, PendingCharge
from ..selectors import account_amounts_due
from ..signals import charge_posted

NOTE_MAX = 2000
_amount = dollars_at_most(CHARGE_MAX, what="one charge")
_base = dollars_at_most(BASE_MAX, what="a base")


def charge_figures_parse(*, amount: str | None, base: str | None) -> tuple[Decimal | None, Decimal | None]:
    """The amount and base as typed (command, form or request), to dollars; blank is left out. Both are
    refused together, naming the field."""
    errors, parsed = [], []
    for field, value, parse in (("amount", amount, _amount), ("base", base, _base)):
        value = (value or "").strip()
        try:
            parsed.append(parse(value) if value else None)
        except ValueError as exc:
            errors.append(FieldError(field=field, message=str(exc)))
    if errors:
        raise ApplicationError(errors=errors)
    return parsed[0], parsed[1]


@transaction.atomic(durable=True)
def charge_create(*, account: Account, code: str, as_of: date, actor, amount: Decimal | None = None,
                  base: Decimal | None = None, size: str | None = None, note: str = "",
                  kind: str = PendingCharge.Kind.FEE, earliest_bill_on: date | None = None,
                  appointment: Appointment | None = None) -> PendingCharge:
    """``charge_add`` as an entry point of its own: one transaction, never inside another."""
    return charge_add(account=account, code=code, as_of=as_of, actor=actor, amount=amount, base=base, size=size,
                      note=note, kind=kind, earliest_bill_on=earliest_bill_on, appointment=appointment)


@transaction.atomic
def charge_add(*, account: Account, code: str, as_of: date, actor, amount: Decimal | None = None,
               base: Decimal | None = None, size: str | None = None, note: str = "",
               kind: str = PendingCharge.Kind.FEE, earliest_bill_on: date | None = None,
               appointment: Appointment | None = None) -> PendingCharge:
    """Charge the fee ``code`` of the schedule in force on ``as_of`` to the account, for its next bill dated
    on or after ``earliest_bill_on`` (default: ``as_of``). Every refusal names its field and section, and
    nothing is saved unless all pass.

    A fee with appointment rules (a tap) is charged only with an ``appointment`` that keeps them, and the
    appointment is kept in the charge's note; a deposit is never charged (``billing.services.deposits``)."""
    errors: list[FieldError] = []

    def refused(exc: ApplicationError) -> None:
        errors.extend(exc.errors)

    if account.status == Account.Status.CLOSED:
        errors.append(FieldError(field="account_no", message=f"account {account.account_no} is closed; a closed "
                                                             "account gets no more bills to carry a charge"))
    try:
        refuse_future(as_of, field="charged_on", doing="charged")
    except ApplicationError as exc:
        refused(exc)
    if kind not in PendingCharge.Kind.values:
        errors.append(FieldError(field="kind", message=f"'{kind}' is not {' or '.join(PendingCharge.Kind.values)}"))
    earliest_bill_on = earliest_bill_on or as_of
    if earliest_bill_on < as_of:
        errors.append(FieldError(field="earliest_bill_on",
                                 message=f"{earliest_bill_on} is before the charge ({as_of}); a charge goes on a "
                                         "bill dated on or after the day it is charged"))
    note = (note or "").strip()
    if len(note) > NOTE_MAX:
        errors.append(FieldError(field="note", message=f"is {len(note):,} characters; at most {NOTE_MAX:,}"))
    terms = None
    try:
        terms = charge_terms(account=account, code=code, as_of=as_of, amount=amount, base=base, size=size,
                             appointment=appointment)
    except ApplicationError as exc:
        refused(exc)
    if errors:
        raise ApplicationError(errors=errors)

    if appointment is not None:
        booked = (f"Appointment {appointment.at:%Y-%m-%d %H:%M}, notice given "
                  f"{appointment.noticed_at:%Y-%m-%d %H:%M}, permit {appointment.permit_from} – "
                  f"{appointment.permit_until}.")
        note = f"{booked} {note}".strip()[:NOTE_MAX]
    charge = PendingCharge.objects.create(
        account=account, code=terms.code, kind=kind, description=terms.description, citation=terms.citation,
        amount=Money(terms.amount, "USD"), quantity=terms.quantity, rate=terms.rate, base=base, size=terms.size,
        note=note, charged_on=as_of, earliest_bill_on=earliest_bill_on, created_by=actor)
    transaction.on_commit(lambda: charge_posted.send(sender=PendingCharge, charge_id=charge.pk))
    return charge


@dataclass(frozen=True)
class ChargeTerms:
    """What a fee charged on a day says: its line's description, citation, amount, quantity and rate."""

    code: str
    description: str
    citation: str
    amount: Decimal
    quantity: Decimal
    rate: Decimal
    size: str


def charge_terms(*, account: Account, code: str, as_of: date, amount: Decimal | None = None,
                 base: Decimal | None = None, size: str | None = None,
                 appointment: Appointment | None = None) -> ChargeTerms:
    """The fee ``code`` of the schedule in force on ``as_of`` quoted by its rule for the account; refused, naming
    every field, when the schedule has no such fee, it is a deposit, the figures do not fit its rule, an
    appointment rule is not kept or the account's arrears bar it."""
    errors: list[FieldError] = []
    try:
        fee = fee_in_force(code=code, on=as_of, district=account_district(account.pk, on=as_of))
    except NotFound:
        codes = ", ".join(fee_codes()) or "none"
        raise ApplicationError(f"no fee '{code}' in the fee schedule in force on {as_of}; the preset's fees: {codes}",
                               field="code") from None
    rule = fee_rule(fee)
    if rule.is_deposit:
        raise ApplicationError(f"{fee.description} ({fee.citation}) is a refundable deposit held for the customer, "
                               "not a charge; record it as a deposit received", field="code")
    quoted = None
    try:
        quoted = rule.quote(amount=amount, base=base, size=size)
    except ApplicationError as exc:
        errors.extend(exc.errors)
    errors.extend(rule.appointment_problems(appointment))
    if citation := rule.params.get("refused_in_arrears"):
        errors.extend(_arrears_problems(account=account, fee=fee, citation=citation, as_of=as_of))
    if errors:
        raise ApplicationError(errors=errors)
    size_text = rule.size_of(size)
    quantity, rate = rule.line(amount=quoted, base=base)
    description = fee.description + (f', {size_text}"' if size_text else "")
    return ChargeTerms(code=fee.code, description=description[:200], citation=fee.citation, amount=quoted,
                       quantity=quantity, rate=rate, size=size_text)


@transaction.atomic(durable=True)
def charge_cancel(*, charge: PendingCharge, reason: str, actor) -> PendingCharge:
    """Cancel a charge that is still waiting; a charge a bill carries is corrected on that bill instead."""
    charge = PendingCharge.objects.select_for_update().get(pk=charge.pk)
    if charge.cancelled_at is not None:
        raise ApplicationError(f"the charge was cancelled on {timezone.localdate(charge.cancelled_at)}",
                               field="status")
    if charge.bill_id is not None:
        raise ApplicationError(f"bill {charge.bill.number} carries the charge; correct the bill (a credit memo) "
                               "instead", field="status")
    if not (reason or "").strip():
        raise ApplicationError("cancelling a charge needs a reason", field="reason")
    charge.cancelled_at, charge.cancelled_by, charge.cancel_reason = timezone.now(), actor, reason.strip()
    charge.save(update_fields=["cancelled_at", "cancelled_by", "cancel_reason"])
    return charge


def charges_reissue(*, bill: Bill, actor) -> list[PendingCharge]:
    """The charges a voided bill carried, charged again as they were, for the bill that replaces it.

    Runs inside the void's transaction. The carried charges stay with the voided bill (their ledger entries
    are reversed with it, by the void), and the new ones wait for the corrected bill, which is dated the
    same day, so it carries them."""
    reissued = [
        PendingCharge(account_id=c.account_id, code=c.code, kind=c.kind, description=c.description,
                      citation=c.citation, amount=c.amount, quantity=c.quantity, rate=c.rate, base=c.base,
                      size=c.size, note=c.note, charged_on=c.charged_on, earliest_bill_on=c.earliest_bill_on,
                      reissue_of=c, created_by=actor)
        for c in PendingCharge.objects.filter(bill=bill, reissue__isnull=True).order_by("id")]
    return PendingCharge.objects.bulk_create(reissued)


def _arrears_problems(*, account: Account, fee, citation: str, as_of: date) -> list[FieldError]:
    """A fee for an application, permit or contract (``params.refused_in_arrears``: South Farmingdale § 2.4)
    is refused while the person it is for owes anything past due, on any of the accounts they own."""
    owned = list(Account.objects.filter(owner_id=account.owner_id).order_by("account_no")
                 .values_list("id", "account_no"))
    due = account_amounts_due(account_ids=[account_id for account_id, _ in owned], as_of=as_of)
    owing = [(account_no, due[account_id].past_due) for account_id, account_no in owned
             if account_id in due and due[account_id].past_due > 0]
    if not owing:
        return []
    listed = ", ".join(f"{fmt_dollars(amount)} on account {account_no}" for account_no, amount in owing)
    return [FieldError(field="code", message=(
        f"{fee.description} ({fee.citation}) is refused while its owner owes arrears ({listed}, past due on "
        f"{as_of}): no application, permit or contract until all arrearages are paid in full ({citation})"))]
