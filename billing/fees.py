"""Fees of the preset's fee schedule: how each is quoted, and which version is in force on a date.

A fee is more than a number for some ordinances. Each ``[[fee]]`` of a preset file names (or implies) a
**rule**, a small class registered by name in ``billing.registries.FEE_RULES``:

* ``flat``: one amount (Mineola's connect and disconnect charges, § 45.28 A(3); the tank wagon, § 45.28 D);
* ``pro_rata``: a rate times a base in dollars, half-up to the cent (water for building construction,
  § 45.28 B: $1.50 per $1,000 of cost, so $250,000 → $375.00);
* ``by_size``: a table by supply or meter size; a size the table does not list has no fee in the code and is
  refused naming the section (the sprinkler service charge, § 45.28 C(1): 2" $100.00 … 8" $500.00, no 7");
* ``clerk``: the amount is the clerk's, where the ordinance leaves it open;
* ``base_plus_size``: a base amount plus an amount by size (Old Westbury's tap or service connection: $350
  plus 1" $500 … 8" $4,500, so 1½" → $1,150.00); a size listed at 0 pays the base only (¾"), and a size the
  table does not list is refused: the Board must set it;
* ``deposit``: a refundable deposit (Washingtonville's hydrant connection, § 169-4: $250), held for the
  customer and returned without interest, never charged (``billing.services.deposits``);
* ``meter_test``: a meter test at the customer's request, charged or not by the test's result
  (Washingtonville § 169-22: $20 unless the meter registers over 3% more than passes, then no charge and the
  overbilled water credited; Old Westbury § 210-30 A: $25 only if accurate to the state's standard).

Any fee may also carry **appointment rules** (``params.appointments``, ``billing.appointments``): when the
work it pays for may be done. Such a fee is charged only with an appointment that keeps them.

A rule is pure: it knows the fee's own numbers and the facts given (``amount``, ``base``, ``size``), and
answers the amount or raises ``ApplicationError`` naming the field and the section. It refuses a fact it
does not take (an amount for a flat fee), so a clerk is never surprised by what was charged. The quotes of
the API, the ``charge_fee`` command and the admin all come from here.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from fractions import Fraction
from typing import ClassVar

from core.errors import ApplicationError, FieldError, NotFound
from core.money import MONEY_MAX, cents, fmt_dollars, fmt_rate
from ordinance.keys import Flag, Key, ListOf, Shape, Text, Whole, percent

from .appointments import Appointment, AppointmentRules
from .models import Fee
from .registries import FEE_RULES

# A fee whose amount is set or typed is its bill line's rate (quantity 1), and the rate column is
# numeric(12, 6): at most $999,999.99. A million dollars typed for one fee is extra digits, not a charge.
CHARGE_MAX = Decimal("999999.99")
# A pro-rata fee's line is base × rate: the base and the fee are each at most what an amount column holds.
BASE_MAX = MONEY_MAX




class _Rule:
    """What every rule has: the fee's code, citation and description, and the refusals they share."""

    name: ClassVar[str]
    takes: ClassVar[frozenset[str]] = frozenset()
    # A deposit is held for the customer, never charged (``billing.services.deposits``).
    is_deposit: ClassVar[bool] = False

    def __init__(self, params: Mapping):
        self.code = params["code"]
        self.citation = params["citation"]
        self.description = params["description"]
        self.params = dict(params.get("params") or {})
        try:
            self.appointments = (AppointmentRules.from_params(self.params["appointments"], citation=self.citation)
                                 if self.params.get("appointments") else None)
        except (ValueError, TypeError) as exc:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}): appointments: {exc}",
                                   field="params") from None

    def appointment_problems(self, appointment: Appointment | None) -> list[FieldError]:
        """Why the fee may not be charged for this appointment; a fee with appointment rules needs one,
        a fee without takes none."""
        if self.appointments is None:
            if appointment is None:
                return []
            return [FieldError(field="at", message=f"{self.description} ({self.citation}) takes no appointment")]
        if appointment is None:
            return [FieldError(field="at", message=f"{self.description} is charged with its appointment: give "
                                                   f"when the work is done, when notice was given and the "
                                                   f"permit's dates ({self.appointments.words()})")]
        return self.appointments.problems(appointment, what=self.description)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.code} ({self.citation})>"

    def _refuse(self, message: str, *, field: str):
        raise ApplicationError(f"{self.description} ({self.citation}) {message}", field=field)

    def _refuse_unused(self, **given) -> None:
        """A fact given that this fee does not take, refused naming the section (every one, not the first)."""
        errors = [FieldError(field=name, message=f"{self.description} ({self.citation}) {self.without(name)}")
                  for name, value in given.items() if name not in self.takes and value not in (None, "")]
        if errors:
            raise ApplicationError(errors=errors)

    def without(self, name: str) -> str:
        return {"amount": f"is {self.terms()}: it takes no amount",
                "base": "is not computed from a base: it takes no base",
                "size": "does not depend on a size: it takes no size"}[name]

    def _at_most(self, amount: Decimal, *, field: str, maximum: Decimal = CHARGE_MAX) -> Decimal:
        if amount <= 0:
            self._refuse(f"comes to {fmt_dollars(amount)}; a charge is more than zero", field=field)
        if amount > maximum:
            self._refuse(f"comes to {fmt_dollars(amount)}, more than one charge may be (at most "
                         f"{fmt_dollars(maximum)})", field=field)
        return amount

    def line(self, *, amount: Decimal, base: Decimal | None) -> tuple[Decimal, Decimal]:
        """The bill line's quantity and rate for a charge of ``amount``."""
        return Decimal(1), amount

    def sizes(self) -> list[tuple[str, Decimal]]:
        """The sizes a fee by size lists, with their amounts; none for other fees."""
        return []

    def size_of(self, size: str | None) -> str:
        """The size as the fee's table writes it ('2 in' → '2'); blank for a fee not by size."""
        return ""

    def terms(self) -> str:
        raise NotImplementedError


@FEE_RULES.register
class FlatFee(_Rule):
    """One amount, set by the ordinance."""

    name = "flat"

    def __init__(self, params: Mapping):
        super().__init__(params)
        if params.get("amount") is None:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) is flat and needs an amount", field="amount")
        self.amount = Decimal(params["amount"])

    def terms(self) -> str:
        return fmt_dollars(self.amount)

    def quote(self, *, amount: Decimal | None = None, base: Decimal | None = None, size: str | None = None) -> Decimal:
        self._refuse_unused(amount=amount, base=base, size=size)
        return self._at_most(cents(self.amount), field="code")


@FEE_RULES.register
class ProRataFee(_Rule):
    """A rate per dollar of a base (construction cost), half-up to the cent once."""

    name = "pro_rata"
    takes = frozenset({"base"})

    def __init__(self, params: Mapping):
        super().__init__(params)
        if params.get("rate") is None:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) is pro rata and needs a rate", field="rate")
        self.rate = Decimal(params["rate"])

    def terms(self) -> str:
        return f"{fmt_rate(self.rate)} × base"

    def quote(self, *, amount: Decimal | None = None, base: Decimal | None = None, size: str | None = None) -> Decimal:
        self._refuse_unused(amount=amount, size=size)
        if base is None:
            self._refuse("is computed from a cost: give the base in dollars", field="base")
        if base <= 0:
            self._refuse(f"is computed from a cost: the base {fmt_dollars(base)} must be more than zero", field="base")
        if base > BASE_MAX:
            self._refuse(f"is computed from a cost: the base {fmt_dollars(base)} is more than a base may be "
                         f"(at most {fmt_dollars(BASE_MAX)})", field="base")
        return self._at_most(cents(base * self.rate), field="base", maximum=MONEY_MAX)

    def line(self, *, amount: Decimal, base: Decimal | None) -> tuple[Decimal, Decimal]:
        return base, self.rate


def inches(text: str) -> Fraction:
    """'2', '2"', '2 in', '2 inches', '1 1/2', '1-1/2', '1.5' → the size in inches; ValueError when it is none."""
    text = str(text)
    refusal = ValueError(f"'{text if len(text) <= 20 else text[:20] + '…'}' is not a size in inches "
                         "(like 2, 4 or 1 1/2)")
    cleaned = text.strip().lower().replace('"', " ").replace("″", " ")
    if len(cleaned) > 20 or cleaned.startswith("-") or not cleaned.isascii():
        raise refusal
    for word in ("inches", "inch", "in"):
        if cleaned.endswith(word):
            cleaned = cleaned[: -len(word)]
    parts = cleaned.replace("-", " ").split()
    if not parts or len(parts) > 2:
        raise refusal
    try:
        value = sum((Fraction(part) for part in parts), Fraction(0))
    except (ValueError, ZeroDivisionError):
        raise refusal from None
    if value <= 0 or value > 100:
        raise refusal
    return value


def _size_text(size: Fraction) -> str:
    whole, part = divmod(size, 1)
    return " ".join(filter(None, (str(whole) if whole else "", str(part) if part else "")))


@FEE_RULES.register
class BySizeFee(_Rule):
    """An amount by supply or meter size; a size the table does not list has no fee in the code."""

    name = "by_size"
    takes = frozenset({"size"})
    base = Decimal(0)  # added to the table's amount (``base_plus_size``)
    unlisted = ""  # what the refusal of a size the table does not list adds

    def __init__(self, params: Mapping):
        super().__init__(params)
        table = params.get("by_size") or {}
        if not table:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) is by size and needs its table",
                                   field="by_size")
        try:
            self.table = {inches(size): Decimal(str(amount)) for size, amount in table.items()}
        except (ValueError, InvalidOperation) as exc:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}): {exc}", field="by_size") from None

    def sizes(self) -> list[tuple[str, Decimal]]:
        return [(_size_text(size), amount) for size, amount in sorted(self.table.items())]

    def terms(self) -> str:
        return "by size: " + ", ".join(f'{size}" {fmt_dollars(amount)}' for size, amount in self.sizes())

    def size_of(self, size: str | None) -> str:
        return _size_text(inches(size)) if size else ""

    def quote(self, *, amount: Decimal | None = None, base: Decimal | None = None, size: str | None = None) -> Decimal:
        self._refuse_unused(amount=amount, base=base)
        return self._at_most(cents(self.base + self._listed_amount(size)), field="size")

    def _listed_amount(self, size: str | None) -> Decimal:
        """The table's amount for ``size``, refused (naming the sizes listed) when missing, not a size, or
        not listed."""
        listed = ", ".join(f'{s}"' for s, _ in self.sizes())
        if size is None or not str(size).strip():
            self._refuse(f"depends on the size: give the size in inches ({listed})", field="size")
        try:
            value = inches(size)
        except ValueError as exc:
            self._refuse(f"depends on the size: {exc}", field="size")
        if value not in self.table:
            self._refuse(f'has no charge for a {_size_text(value)}" size; the code lists {listed} only'
                         + self.unlisted, field="size")
        return self.table[value]


@FEE_RULES.register
class BasePlusSizeFee(BySizeFee):
    """A base amount plus an amount by size; a size listed at 0 pays the base only, and a size the table
    does not list is refused: the governing board must set it before it is charged."""

    name = "base_plus_size"
    unlisted = ", and the Board must set it"

    def __init__(self, params: Mapping):
        super().__init__(params)
        if params.get("amount") is None:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) is a base plus an amount by size and "
                                   "needs its base amount", field="amount")
        self.base = Decimal(params["amount"])

    def terms(self) -> str:
        return f"{fmt_dollars(self.base)} plus " + ", ".join(
            f'{size}" {fmt_dollars(amount)}' for size, amount in self.sizes())



@FEE_RULES.register
class DepositFee(FlatFee):
    """A refundable deposit: held for the customer and returned without interest, never charged."""

    name = "deposit"
    is_deposit = True

    def terms(self) -> str:
        return f"{fmt_dollars(self.amount)} deposit, refundable"


@FEE_RULES.register
class MeterTestFee(FlatFee):
    """A meter test at the customer's request: the fee, or none, by what the test found.

    ``params.charged_unless`` says when the test is free: ``"over_registers"`` — the meter registers more
    than ``over_percent`` more water than actually passes (exactly that percent is charged); ``"inaccurate"``
    — the meter is off by more than ``accurate_within_percent`` either way. ``credit_overbilled`` credits
    the water a fast meter overbilled on the bills the test covers.
    """

    name = "meter_test"
    WHEN = ("over_registers", "inaccurate")

    def __init__(self, params: Mapping):
        super().__init__(params)
        self.charged_unless = self.params.get("charged_unless", "")
        if self.charged_unless not in self.WHEN:
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) is a meter test fee and needs "
                                   f"params.charged_unless: {' or '.join(self.WHEN)}", field="params")
        key = "over_percent" if self.charged_unless == "over_registers" else "accurate_within_percent"
        try:
            self.percent = Decimal(str(self.params[key]))
        except (KeyError, InvalidOperation):
            raise ApplicationError(f"fee '{self.code}' ({self.citation}) needs params.{key}, a percent",
                                   field="params") from None
        self.credit_overbilled = bool(self.params.get("credit_overbilled", False))

    def terms(self) -> str:
        if self.charged_unless == "over_registers":
            return f"{fmt_dollars(self.amount)} unless the meter registers over {self.percent}% more than passes"
        return f"{fmt_dollars(self.amount)} if the meter is accurate within {self.percent}%"

    def outcome(self, error_percent: Decimal) -> "MeterTestOutcome":
        """What a test that found the meter registering ``error_percent`` more than passed (negative: less)
        costs the customer, in words naming the section."""
        error, limit = _percent(error_percent), _percent(self.percent)
        if self.charged_unless == "over_registers":
            free = error_percent > self.percent
            found = (f"registers {error}% more than passes, over {limit}%" if free else
                     f"registers {error}% more than passes, not over {limit}%")
            return MeterTestOutcome(charged=not free, credit_overbilled=free and self.credit_overbilled,
                               words=f"the meter {found} ({self.citation}): "
                                     + ("no charge for the test" if free else f"the test is charged "
                                                                              f"{fmt_dollars(self.amount)}"))
        accurate = abs(error_percent) <= self.percent
        return MeterTestOutcome(charged=accurate, credit_overbilled=False,
                           words=f"the meter registers {error}% more than passes, "
                                 + (f"accurate within {limit}% ({self.citation}): the test is charged "
                                    f"{fmt_dollars(self.amount)}" if accurate else
                                    f"inaccurate (off by more than {limit}%) ({self.citation}): no charge for "
                                    "the test"))


def _percent(value: Decimal) -> str:
    """A percent as people read it: 3 → "3", 3.0049 → "3", 3.005 → "3.01" (shown to the hundredth; the
    rule compares the exact figure)."""
    shown = value.quantize(Decimal("0.01"), ROUND_HALF_UP).normalize()
    return f"{shown:f}"


@dataclass(frozen=True)
class MeterTestOutcome:
    charged: bool
    credit_overbilled: bool
    words: str


@FEE_RULES.register
class ClerkAmountFee(_Rule):
    """The ordinance leaves the amount open: the clerk gives it."""

    name = "clerk"
    takes = frozenset({"amount"})

    def terms(self) -> str:
        return "the amount the clerk gives"

    def quote(self, *, amount: Decimal | None = None, base: Decimal | None = None, size: str | None = None) -> Decimal:
        self._refuse_unused(base=base, size=size)
        if amount is None:
            self._refuse("leaves the amount open: give the amount in dollars", field="amount")
        return self._at_most(amount, field="amount")


def rule_for(*, amount=None, rate=None, by_size=None, rule: str | None = None) -> str:
    """The rule a ``[[fee]]`` names, or the one its numbers imply: a table by size, a rate, an amount, or
    none of them (the clerk's amount)."""
    if rule:
        return rule
    if by_size:
        return BySizeFee.name
    if rate is not None:
        return ProRataFee.name
    return FlatFee.name if amount is not None else ClerkAmountFee.name


def fee_rule(fee: Fee):
    """The rule of one stored fee version."""
    return FEE_RULES.build(fee.rule, {
        "code": fee.code, "citation": fee.citation, "description": fee.description,
        "amount": fee.amount.amount if fee.amount is not None else None, "rate": fee.rate,
        "by_size": fee.by_size, "params": fee.params})


def fee_codes() -> list[str]:
    return sorted(set(Fee.objects.values_list("code", flat=True)))


def fee_in_force(*, code: str, on: date, district: str = "") -> Fee:
    """Fee ``code`` in force on ``on``: in a town's ``district``, its own version where it has one in force, else
    the installation's."""
    fee = _fee_on(code, on, district)
    if fee is None:
        raise NotFound(f"no fee '{code}' in force on {on}; fees: {', '.join(fee_codes())}", field="code")
    return fee


def _fee_on(code: str, on: date, district: str) -> Fee | None:
    versions = Fee.objects.filter(code=code, effective_on__lte=on).order_by("-effective_on")
    own = versions.filter(district=district).first() if district else None
    return own or versions.filter(district="").first()


def fees_in_force(*, on: date, district: str = "") -> list[Fee]:
    """The fee schedule on a date (in a town's ``district``: its own fees over the installation's): each code's
    version in force then, by code; a code not yet in force on the date is left out."""
    fees = (_fee_on(code, on, district) for code in fee_codes())
    return [fee for fee in fees if fee is not None]


def fee_with_rule(*, rule: str, on: date, field: str = "code", district: str = "") -> Fee:
    """The fee of the schedule in force on a date whose rule is ``rule`` (the hydrant deposit, the meter test
    fee): the preset says which of its fees it is; refused when it has none, or more than one."""
    found = [fee for fee in fees_in_force(on=on, district=district) if fee.rule == rule]
    if len(found) != 1:
        codes = ", ".join(fee.code for fee in found)
        raise ApplicationError(f"the fee schedule in force on {on} has {'no' if not found else 'more than one'} "
                               f"'{rule}' fee{f' ({codes}); name the code' if found else ''}", field=field)
    return found[0]


def fee_quote(fee: Fee, *, amount: Decimal | None = None, base: Decimal | None = None,
              size: str | None = None) -> Decimal:
    """The fee, by its rule, for the facts given."""
    return fee_rule(fee).quote(amount=amount, base=base, size=size)


# ``[fee.params]``: the keys a fee rule reads (billing.fees, billing.appointments, billing.services.vacancy).
FEE_PARAMS = Shape({
    "appointments": Key("when the work may be booked (billing.appointments)", Shape({
        "citation": Key("the section on booking the work", Text()),
        "notice_citation": Key("the section on the notice needed", Text()),
        "hours": Key('the hours work is done, ["09:00", "15:00"]', ListOf(Text())),
        "weekdays": Key("the days work is done: Mon … Sun", ListOf(Text(("Mon", "Tue", "Wed", "Thu", "Fri", "Sat",
                                                                           "Sun")))),
        "holidays": Key("the holidays no work is done (US-NY)", Text()),
        "notice_hours": Key("hours of notice needed", Whole(0, 24 * 60, unit="hours")),
        "permit_days_max": Key("days a permit lasts at most", Whole(0, 3660, unit="days"))})),
    "vacancy_deduction": Key("a vacancy deduction of the minimum (billing.services.vacancy)", Shape({
        "citation": Key("the section", Text()),
        "min_months": Key("the shortest vacancy deducted, in months", Whole(1, 120, unit="months"))})),
    "charged_unless": Key("meter_test: when the test is free — over_registers or inaccurate",
                          Text(("over_registers", "inaccurate"))),
    "over_percent": Key("meter_test: the meter registers more than this percent over", percent()),
    "accurate_within_percent": Key("meter_test: the meter is accurate within this percent either way", percent()),
    "credit_overbilled": Key("meter_test: credit what a fast meter overbilled", Flag()),
    "refused_in_arrears": Key("the section refusing this work to an account in arrears", Text())})
