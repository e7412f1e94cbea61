"""Rating one bill of a class from its facts (``bill``), exactly as the reference calculator does."""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from core.money import CENT, fmt_rate

from .. import expressions
from ..expressions import ExpressionError
from .files import (
    _CCF_GALLONS,
    _NUMBER,
    _PERCENT,
    ACCOUNT_FIELDS,
    PRICE_DECIMALS,
    Charge,
    OwrsError,
    OwrsFile,
    Part,
    _class_parts,
    _dec_text,
    _is_rate_part,
    _norm_key,
    _norm_one,
    _prefix,
)


def _cents(value: Fraction) -> Decimal:
    """Half away from zero to the cent, exactly."""
    return _round(value, 100).quantize(CENT)


def _round(value: Fraction, scale: int) -> Decimal:
    whole = math.floor(abs(value) * scale + Fraction(1, 2))
    return Decimal(-whole if value < 0 else whole) / scale


def _exact_decimal(value: Fraction) -> Decimal | None:
    """``value`` as a Decimal with at most PRICE_DECIMALS places, or None when it has more."""
    scaled = value * 10 ** PRICE_DECIMALS
    if scaled.denominator != 1:
        return None
    if not scaled:
        return Decimal(0)
    value = (Decimal(scaled.numerator) / 10 ** PRICE_DECIMALS).normalize()
    return value.quantize(Decimal(1)) if value.as_tuple().exponent > 0 else value  # 100, not 1E+2


def _fact_key(value) -> str:
    if isinstance(value, Fraction):
        exact = _exact_decimal(value)
        return _dec_text(exact) if exact is not None else str(value)
    if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
        return _dec_text(Decimal(value))
    return _norm_one(str(value))


def _label(name: str) -> str:
    return name.replace("_", " ").strip().capitalize() or name


def _kind(name: str) -> str:
    if name == "service_charge":
        return "service"
    if "minimum" in name:
        return "minimum"
    if name.startswith("sewer"):
        return "sewer"
    return "charge"


def _fmt_amount_of(value: Fraction) -> str:
    if value.denominator == 1:
        return f"{value.numerator:,}"
    return f"{_round(value, 100):,.2f}"


@dataclass(frozen=True)
class _Exact:
    kind: str
    part: str
    description: str
    quantity: Fraction
    price: Fraction


class _Rating:
    """One bill of one class: the parts evaluated in order, over the facts."""

    def __init__(self, owrs: OwrsFile, cls: str, facts: Mapping[str, object]):
        self.cls = cls
        self.parts = _class_parts(owrs, cls)
        self.facts = self._derive(dict(facts))
        self.env: dict[str, object] = {}  # part name -> Fraction (number) or list (tier list)
        self.described: dict[str, str] = {}
        self.tier_lines: dict[str, list[_Exact]] = {}
        self.usage_field = "usage_ccf"

    def _derive(self, facts: dict) -> dict:
        facts = {k: v for k, v in facts.items() if v is not None}
        for name in ("usage_gal", "usage_ccf"):
            if name in facts:
                facts[name] = self._number(facts[name], name, "the bill")
                if facts[name] < 0:
                    raise OwrsError(f"{name} is {_fmt_amount_of(facts[name])}; usage cannot be negative", field=name)
        if "usage_gal" in facts and "usage_ccf" not in facts:
            facts["usage_ccf"] = facts["usage_gal"] / _CCF_GALLONS
        elif "usage_ccf" in facts and "usage_gal" not in facts:
            facts["usage_gal"] = facts["usage_ccf"] * _CCF_GALLONS
        return facts

    def _number(self, value, name: str, reader: str) -> Fraction:
        if isinstance(value, bool):
            return Fraction(int(value))
        if isinstance(value, (int, Fraction)):
            return Fraction(value)
        if isinstance(value, Decimal) and value.is_finite():
            return Fraction(value)
        if isinstance(value, str) and _NUMBER.fullmatch(value.strip()):
            return Fraction(Decimal(value.strip()))
        raise OwrsError(f"{name} is {value!r}, which is not a number ({reader} reads it as one)", field=name)

    def _fail(self, part: Part, message: str) -> OwrsError:
        where = f"rate_structure.{self.cls}.{part.name}"
        return OwrsError(f"{where}: {message}", field=where, line=part.line)

    def lookup(self, name: str, part: Part):
        if name in self.env:
            return self.env[name]
        if name in self.facts:
            return self.facts[name]
        if name in ACCOUNT_FIELDS:
            raise OwrsError(f"the account carries no {name}, which customer class {self.cls} reads in {part.name}",
                            field=name)
        raise OwrsError(f"the bill gives no {name}, which customer class {self.cls} reads in {part.name}",
                        field=name)

    def value_of(self, text: str, part: Part) -> Fraction:
        values = {}
        for name in expressions.names(text):
            value = self.lookup(name, part)
            if isinstance(value, list):
                raise self._fail(part, f"{name} is a list of tiers, not a number")
            values[name] = value if isinstance(value, Fraction) else self._number(value, name, part.name)
        try:
            return expressions.evaluate(text, values)
        except ExpressionError as exc:
            raise self._fail(part, f"{text}: {exc}") from None

    def choose(self, part: Part) -> tuple[object, str]:
        """The entry of a depends_on map this bill's facts pick, and words saying which."""
        depends, values = part.value["depends_on"], part.value["values"]
        facts = [self.lookup(name, part) for name in depends]
        wanted = "|".join(_fact_key(v) for v in facts)
        entry = next((entry for key, entry in values.items() if _norm_key(key) == wanted), None)
        if entry is None:
            shown = "|".join(f'{_fact_key(v)}"' if name == "meter_size" else _fact_key(v)
                             for name, v in zip(depends, facts, strict=True))
            raise OwrsError(f"{part.name} has no value for {'|'.join(depends)} {shown} "
                            f"(values: {', '.join(values)})", field="|".join(depends))
        words = ", ".join(f'{_fact_key(v)}" meter' if name == "meter_size" else f"{name} {_fact_key(v)}"
                          for name, v in zip(depends, facts, strict=True))
        return entry, words

    def run(self) -> tuple[Charge, ...]:
        for part in self.parts:
            if part.name == "bill":
                return self.bill_lines(part)
            self.evaluate(part)
        raise OwrsError(f"customer class {self.cls} has no bill", field=f"rate_structure.{self.cls}")

    def evaluate(self, part: Part) -> None:
        value = part.value
        if part.name == "tier_usage":
            self.usage_field = value
            return
        if _is_rate_part(part):
            self.rate(part)
            return
        words = ""
        if isinstance(value, dict):
            value, words = self.choose(part)
        if isinstance(value, list):
            self.env[part.name] = value
            return
        self.env[part.name] = self.value_of(value, part)
        description = _label(part.name)
        if words:
            description += f", {words}"
        if not _NUMBER.fullmatch(value):
            description += f" ({self.worked(value)})"
        self.described[part.name] = description

    def worked(self, formula: str) -> str:
        """A formula with the numbers it read: ``excess_gal * 0.00385; excess_gal = 25,000``."""
        read = []
        for name in expressions.names(formula):
            value = self.env.get(name, self.facts.get(name))
            if isinstance(value, (Fraction, int, Decimal)) and not isinstance(value, bool):
                read.append(f"{name} = {_fmt_amount_of(Fraction(value))}")
        return "; ".join([formula, *read[:4]])

    def tier_list(self, name: str, part: Part) -> list[str]:
        value = self.lookup(name, part)
        if not isinstance(value, list):
            raise self._fail(part, f"{name} must be a list of tiers")
        return value

    def rate(self, part: Part) -> None:
        prefix = _prefix(part.name)
        sewer = part.name == "sewer_charge"
        usage = self.lookup(self.usage_field, part)
        usage = usage if isinstance(usage, Fraction) else self._number(usage, self.usage_field, part.name)
        if usage < 0:
            raise OwrsError(f"{self.usage_field} is {_fmt_amount_of(usage)}; usage cannot be negative",
                            field=self.usage_field)
        kind = "sewer" if sewer else "consumption"
        if part.value == "Uniform":
            price = self.value_of_name(f"{prefix}price", part)
            label = "Sewer" if sewer else "Consumption"
            lines = [_Exact(kind, part.name, f"{label}: {self.usage_words(usage, price)}", usage, price)]
        else:
            start_texts = self.tier_list(f"{prefix}tier_starts", part)
            price_texts = self.tier_list(f"{prefix}tier_prices", part)
            if len(start_texts) != len(price_texts):
                raise self._fail(part, f"{prefix}tier_starts has {len(start_texts)} tiers but {prefix}tier_prices "
                                       f"has {len(price_texts)}")
            budget = self.value_of_name(f"{prefix}budget", part) if part.value == "Budget" else None
            starts = []
            for text in start_texts:
                percent = _PERCENT.fullmatch(text)
                if percent and budget is None:
                    raise self._fail(part, f"the tier start {text} is a share of the budget; use Budget")
                start = Fraction(Decimal(percent.group(1))) / 100 * budget if percent else self.value_of(text, part)
                starts.append(math.ceil(start) if budget is not None else start)
            prices = [self.value_of(text, part) for text in price_texts]
            label = "Sewer tier" if sewer else "Tier"
            lines = []
            for i, used in enumerate(_usage_in_tiers(usage, starts)):
                words = f"{label} {i + 1} (from {self.start_words(starts[i])}): {self.usage_words(used, prices[i])}"
                lines.append(_Exact(kind, part.name, words, used, prices[i]))
        for line in lines:
            if _exact_decimal(line.price) is None:
                raise self._fail(part, f"a price of {line.price} has more than {PRICE_DECIMALS} decimal "
                                       f"places")
        self.tier_lines[part.name] = lines
        self.env[part.name] = sum((line.quantity * line.price for line in lines), Fraction(0))

    def value_of_name(self, name: str, part: Part) -> Fraction:
        value = self.lookup(name, part)
        if isinstance(value, list):
            raise self._fail(part, f"{name} is a list, not a number")
        return value if isinstance(value, Fraction) else self._number(value, name, part.name)

    def start_words(self, start: Fraction) -> str:
        unit = {"usage_ccf": "ccf", "usage_gal": "gal"}.get(self.usage_field, self.usage_field)
        return f"{_fmt_amount_of(start)} {unit}"

    def usage_words(self, used: Fraction, price: Fraction) -> str:
        rate = _exact_decimal(price)
        if self.usage_field == "usage_gal":
            per_1000 = fmt_rate(rate * 1000) if rate is not None else "?"
            return f"{_fmt_amount_of(used)} gal at ${per_1000} per 1,000 gal"
        rate_text = fmt_rate(rate) if rate is not None else "?"
        if self.usage_field == "usage_ccf":
            gallons = _round(used * _CCF_GALLONS, 1)
            return f"{_round(used, 100):,.2f} ccf ({gallons:,.0f} gal) at ${rate_text} per ccf"
        return f"{_round(used, 100):,.2f} {self.usage_field} at ${rate_text} per {self.usage_field}"

    def bill_lines(self, part: Part) -> tuple[Charge, ...]:
        formula = part.value
        try:
            terms = _terms(expressions.tree(formula), 1)
        except ExpressionError as exc:
            raise self._fail(part, f"{formula}: {exc}") from None
        if terms is None:
            amount = _cents(self.value_of(formula, part))
            return (Charge(kind="charge", part="bill", description=f"Bill: {formula}", quantity=Decimal("1.00"),
                           rate=amount, amount=amount),)
        charges = []
        for sign, name in terms:
            if name in self.tier_lines:
                for line in self.tier_lines[name]:
                    if line.quantity == 0:
                        continue
                    rate = _exact_decimal(line.price)
                    charges.append(Charge(kind=line.kind, part=name, description=line.description,
                                          quantity=_round(line.quantity, 100).quantize(CENT),
                                          rate=rate if sign > 0 else -rate,
                                          amount=_cents(sign * line.quantity * line.price)))
                continue
            amount = _cents(sign * self.value_of(name, part))
            charges.append(Charge(kind=_kind(name), part=name, description=self.described.get(name, _label(name)),
                                  quantity=Decimal("1.00"), rate=amount, amount=amount))
        # A fixed or formula part that comes to nothing (a yearly minimum already charged, no gallons over the
        # allowance) says nothing the other lines do not; a bill of nothing but such parts keeps them all, so
        # the customer sees why it is $0.00.
        fixed = [c for c in charges if c.part not in self.tier_lines]
        if any(c.amount for c in charges) or len(charges) > len(fixed):
            charges = [c for c in charges if c.amount or c.part in self.tier_lines]
        return tuple(charges)


def _terms(node, sign: int) -> list[tuple[int, str]] | None:
    """The bill as (sign, part name) terms when it is a sum or difference of names, else None."""
    if node[0] == "name":
        return [(sign, node[1])]
    if node[0] == "neg":
        return _terms(node[1], -sign)
    if node[0] == "bin" and node[1] in "+-":
        left = _terms(node[2], sign)
        right = _terms(node[3], sign if node[1] == "+" else -sign)
        return None if left is None or right is None else left + right
    return None


def _usage_in_tiers(usage: Fraction, starts: list[Fraction]) -> list[Fraction]:
    """RateParser's get_usage_in_tiers: a tier start is the first unit billed in the tier."""
    used: list[Fraction] = []
    for i in range(len(starts) - 1):
        top = Fraction(starts[i + 1])
        lower = sum(used, Fraction(0))
        if i == 0:
            used.append(max(min(usage, top - 1), Fraction(0)))
        else:
            used.append(max(min(usage - lower, top - lower - 1), Fraction(0)))
    used.append(max(usage - sum(used, Fraction(0)), Fraction(0)))
    return used


def bill(owrs: OwrsFile, cls: str, facts: Mapping[str, object]) -> tuple[Charge, ...]:
    """Rate one bill of class ``cls`` from ``facts``; the lines, each rounded once to the cent."""
    return _Rating(owrs, cls, facts).run()
