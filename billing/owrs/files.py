"""What an OWRS file holds once read: its classes' parts, the charges a bill gets, the fields an account gives
and the refusals."""

import re
from dataclasses import dataclass, field
from decimal import Decimal
from fractions import Fraction

from core.errors import ApplicationError, FieldError

from .. import expressions

CCF_GALLONS = Decimal("748.052")


_CCF_GALLONS = Fraction(CCF_GALLONS)


# Fields our engine supplies for every bill (a formula may read them without the file defining them).
ENGINE_FIELDS: dict[str, str] = {
    "usage_ccf": "the bill's consumption in hundreds of cubic feet",
    "usage_gal": "the bill's consumption in gallons",
    "meter_size": "the meter's size",
    "cust_class": "the customer class",
    "bill_frequency": "monthly, semiannual, …",
    "year_usage_gal": "gallons earlier bills of the same frequency in the billable year counted",
    "annual_minimum_charged": "1 when an earlier bill of the billable year charged the year's minimum, else 0",
    "first_bill_of_year": "1 on the first bill of the billable year, else 0",
}


# Fields an account may carry (Account.rate_fields) for budget-based structures.
ACCOUNT_FIELDS: dict[str, str] = {
    "water_type": "POTABLE or RECYCLED",
    "hhsize": "persons in the household",
    "irrigable_area": "irrigable area, square feet",
    "irr_area": "irrigable area, square feet",
    "et_amount": "evapotranspiration in the billing period, inches",
    "cust_class": "the account's OWRS class",
}


RATE_TYPES = ("Tiered", "Budget", "Uniform")


RATE_PARTS = ("commodity_charge", "sewer_charge")


PRICE_PARTS = ("tier_prices", "sewer_tier_prices", "price", "sewer_price")


PRICE_DECIMALS = 6  # BillLine.rate is numeric(12, 6)


_DEFAULT_PROVIDED = tuple(dict.fromkeys([*ENGINE_FIELDS, *ACCOUNT_FIELDS]))


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")


_PERCENT = re.compile(r"\s*(\d+(\.\d*)?|\.\d+)\s*%\s*")


_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*")


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


_STR_TAG = "tag:yaml.org,2002:str"


_HEADER = ("# Open Water Rate Specification (OWRS) file. Usage is in ccf (hundreds of cubic feet) "
           "unless a class sets tier_usage.")


class OwrsError(ApplicationError):
    """A rate file or a bill that cannot be read or rated; ``line`` is the file's 1-based line, when known."""

    def __init__(self, message: str, *, field: str, line: int | None = None):
        self.message = f"line {line}: {message}" if line is not None else message
        self.field = field
        self.line = line
        # The field error names its field itself: a message that starts with it is not to say it twice.
        detail = message.removeprefix(f"{field}: ")
        super().__init__(self.message, errors=[FieldError(field=field, message=detail, line=line)])


@dataclass(frozen=True)
class Part:
    name: str
    value: object  # str, list of str, or {"depends_on": [...], "values": {key: str or list of str}}
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Charge:
    kind: str  # service, minimum, consumption, sewer, charge
    part: str
    description: str
    quantity: Decimal
    rate: Decimal
    amount: Decimal


@dataclass(frozen=True)
class OwrsFile:
    metadata: dict
    classes: dict[str, tuple[Part, ...]]
    extra: dict

    def needs(self, cls: str) -> list[str]:
        """The data fields class ``cls`` reads and does not define, sorted."""
        parts = _class_parts(self, cls)
        defined = {p.name for p in parts}
        found: set[str] = set()
        for part in parts:
            found.update(name for name, _ in _reads(part, parts))
        return sorted(found - defined)

    def to_json(self) -> dict:
        """The file as JSON for ``RateSchedule.rules["owrs"]``, every mapping kept in the file's order: a
        database may store a JSON object's keys in an order of its own (PostgreSQL's ``jsonb`` does), and the
        file written back (``dump``) is to be the file read."""
        return {
            "metadata": _in_order(self.metadata),
            "classes": [[cls, [{"name": p.name, "value": _in_order(p.value)} for p in parts]]
                        for cls, parts in self.classes.items()],
            "extra": _in_order(self.extra),
        }

    @classmethod
    def from_json(cls, data: dict) -> "OwrsFile":
        try:
            stored = data["classes"]
            pairs = stored.items() if isinstance(stored, dict) else stored
            classes = {str(name): tuple(Part(name=str(p["name"]), value=_as_read(p["value"])) for p in parts)
                       for name, parts in pairs}
            return cls(metadata=dict(_as_read(data.get("metadata") or {})), classes=classes,
                       extra=dict(_as_read(data.get("extra") or {})))
        except (KeyError, TypeError, AttributeError, ValueError) as exc:
            raise OwrsError(f"the stored rate file is not in the expected form ({exc!r})", field="owrs") from None

    def citation_for(self, part: str) -> str:
        citations = self.metadata.get("citations") or {}
        return str(citations.get(part) or self.metadata.get("citation") or "")


# A mapping in stored JSON: its items in order, as pairs.
_ORDERED = "__in_order__"


def _in_order(value):
    if isinstance(value, dict):
        return {_ORDERED: [[key, _in_order(item)] for key, item in value.items()]}
    if isinstance(value, list):
        return [_in_order(item) for item in value]
    return value


def _as_read(value):
    if isinstance(value, dict):
        if set(value) == {_ORDERED}:
            return {key: _as_read(item) for key, item in value[_ORDERED]}
        return {key: _as_read(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_as_read(item) for item in value]
    return value


# --- reading ----------------------------------------------------------------------------------------------


def _dec_text(value: Decimal) -> str:
    if value == 0:
        return "0"
    return format(value.normalize(), "f")


def _is_rate_part(part: Part) -> bool:
    return part.name in RATE_PARTS and part.value in RATE_TYPES


def _prefix(name: str) -> str:
    return "sewer_" if name == "sewer_charge" else ""


def _formula_names(text: str) -> list[str]:
    return [] if _PERCENT.fullmatch(text) else expressions.names(text)


def _reads(part: Part, parts: tuple[Part, ...]) -> list[tuple[str, str]]:
    """(name, why) for every name ``part`` reads, in order."""
    value = part.value
    if part.name == "tier_usage" and isinstance(value, str):
        return [(value, "tier_usage counts it")]
    if _is_rate_part(part):
        prefix = _prefix(part.name)
        why = f"{part.name} is {value}"
        needed = ([f"{prefix}price"] if value == "Uniform" else [f"{prefix}tier_starts", f"{prefix}tier_prices"])
        if value == "Budget":
            needed.append(f"{prefix}budget")
        if not any(p.name == "tier_usage" for p in parts):
            needed.append("usage_ccf")
        else:
            needed.append("tier_usage")
        return [(name, why) for name in needed]
    if isinstance(value, dict):
        found = [(d, f"{part.name} depends on it") for d in value["depends_on"]]
        for entry in value["values"].values():
            for text in entry if isinstance(entry, list) else [entry]:
                found += [(n, f"{part.name} reads it") for n in _formula_names(text)]
        return found
    if isinstance(value, list):
        return [(n, f"{part.name} reads it") for text in value for n in _formula_names(text)]
    return [(n, f"{part.name} reads it") for n in _formula_names(value)]


def _norm_key(text: str) -> str:
    return "|".join(_norm_one(piece) for piece in str(text).split("|"))


def _norm_one(text: str) -> str:
    text = " ".join(text.split())
    if text.endswith('"'):
        text = text[:-1].rstrip()
    if _NUMBER.fullmatch(text):
        return _dec_text(Decimal(text))
    return text


def _class_parts(owrs: OwrsFile, cls: str) -> tuple[Part, ...]:
    try:
        return owrs.classes[cls]
    except KeyError:
        known = ", ".join(owrs.classes) or "none"
        raise OwrsError(f"No rate information for customer class {cls} is present in the rate file "
                        f"(classes: {known})", field="cust_class") from None
