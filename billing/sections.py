"""The preset tables billing reads, registered with the ordinance floor (``ordinance.sections``): the calendar, the
penalty scheme, the office's payment policy, the general ledger accounts, the final bill and the lien rule, and the
rate schedules and fees (billing keeps those as its own dated rows: bills point at them; ``billing.presets``).

Each reader turns the table as installed into billing's typed rule, refusing naming the table and key; the install
runs it before writing anything and ``ordinance.selectors.section`` runs it at run time: checked is applied.
"""

from dataclasses import dataclass
from decimal import Decimal

from core.errors import ApplicationError
from ordinance.keys import Day, Flag, Key, ListOf, MapOf, Number, Shape, Text, Whole, amount, rate
from ordinance.sections import section_register

from .fees import FEE_PARAMS, FEE_RULES, rule_for
from .gl import DEFAULTS as GL_DEFAULTS
from .gl import gl_accounts_from
from .ledger.allocation import PRINCIPAL_CATEGORIES
from .models import PaymentOrder
from .ordinance import CALENDARS, PENALTY_SCHEMES, RATE_STRUCTURES, rate_structure_for, waiver_approval_above
from .rating import CITED
from .sewer import SEWER_KEYS, SEWER_RENTS, sewer_rents_from


@dataclass(frozen=True)
class OfficePolicy:
    """``[policy]``: what the ordinance leaves to the office. The floor and the hold are the clerk's to change on
    the Utility page after the first install; the payment order is the preset's."""

    payment_order: str
    list_floor: Decimal
    high_usage_factor: Decimal


def _amount(table: str, key: str, value, *, below: Decimal = Decimal(10**9), over: Decimal | None = None,
            what: str) -> Decimal:
    try:
        amount = Decimal(str(value))
        exact = amount.is_finite() and amount == amount.quantize(Decimal("0.01")) and amount < below and (
            amount > over if over is not None else amount >= 0)
    except ArithmeticError:
        exact = False
    if not exact:
        raise ApplicationError(f"[{table}] {key} '{value}' is not {what}", field=key)
    return amount


def policy_from(params: dict) -> OfficePolicy:
    order = params.get("payment_order", PaymentOrder.PRINCIPAL_FIRST)
    if order not in PaymentOrder.values:
        raise ApplicationError(f"[policy] payment_order '{order}' is not one of {', '.join(PaymentOrder.values)}",
                               field="payment_order")
    return OfficePolicy(
        payment_order=order,
        list_floor=_amount("policy", "list_floor", params.get("list_floor", "25.00"),
                           what="an amount of dollars and cents of at least 0.00"),
        high_usage_factor=_amount("policy", "high_usage_factor", params.get("high_usage_factor", 4),
                                  below=Decimal(1000), over=Decimal(1),
                                  what="a number over 1 (times the account's usual use per day)"))


def calendar_from(params: dict):
    return CALENDARS.build(params["scheme"], params)


def penalties_from(params: dict):
    scheme = PENALTY_SCHEMES.build(params["scheme"], params)
    waiver_approval_above(params)  # office policy: refused here when not an amount
    return scheme


FINAL_BILL_MINIMUMS = ("pro_rata", "full")


@dataclass(frozen=True)
class FinalBillRule:
    """``[final_bill]``: how an off-cycle final bill (a move-out, a sale) charges the per-bill minimum (``pro_rata``
    by the days of the billing period elapsed, or ``full``), its due days (None: the calendar's rule from the issue
    date), and whether arrears follow the property to a new owner's account."""

    minimum: str
    citation: str
    words: str
    due_days: int | None
    arrears_follow_property: bool
    arrears_citation: str

    @property
    def is_policy(self) -> bool:
        return self.citation.startswith("policy")


def final_bill_rule_from(table: dict) -> FinalBillRule:
    """``[final_bill]`` as a rule; refused naming the key when it is malformed. A preset without the table bills
    the full minimum, as office policy, and keeps arrears on the old account."""
    minimum = table.get("minimum", "full")
    if minimum not in FINAL_BILL_MINIMUMS:
        raise ApplicationError(f"[final_bill] minimum '{minimum}' is not one of {', '.join(FINAL_BILL_MINIMUMS)}",
                               field="final_bill")
    due_days = table.get("due_days")
    if due_days is not None and (not isinstance(due_days, int) or isinstance(due_days, bool) or due_days < 0):
        raise ApplicationError(f"[final_bill] due_days must be a whole number of days, 0 or more, not {due_days!r}",
                               field="final_bill")
    follow = table.get("arrears_follow_property", False)
    if not isinstance(follow, bool):
        raise ApplicationError("[final_bill] arrears_follow_property must be true or false", field="final_bill")
    if follow and not table.get("arrears_citation"):
        raise ApplicationError("[final_bill] arrears_follow_property needs the arrears_citation that says so",
                               field="final_bill")
    return FinalBillRule(minimum=minimum, citation=table.get("citation", "policy"), words=table.get("words", ""),
                         due_days=due_days, arrears_follow_property=follow,
                         arrears_citation=table.get("arrears_citation", ""))


@dataclass(frozen=True)
class LienRule:
    """``[lien]``: the lien and relevy rule, its section, in words, and who the relevy list goes to. ``is_policy``:
    the local law has none, and the list is office policy."""

    citation: str
    words: str
    list_for: str
    is_policy: bool


def lien_rule_from(lien: dict) -> LienRule:
    if not lien:
        return LienRule(citation="policy", words="The local law names no lien or relevy rule for water charges: "
                                                 "the relevy list is office policy.", list_for="", is_policy=True)
    return LienRule(citation=lien["citation"], words=lien.get("words", ""), list_for=lien.get("list_for", ""),
                    is_policy=bool(lien.get("policy", False)))


def rate_schedules_check(schedules: list) -> list:
    for schedule in schedules:
        for key in ("effective_on", "citation"):
            if key not in schedule:
                raise ApplicationError(f"[[rate_schedule]] needs {key}", field="rate_schedule")
        rate_structure_for({k: v for k, v in schedule.items() if k not in ("effective_on", "citation", "sample")})
    return schedules


def fees_check(fees: list) -> list:
    for fee in fees:
        for key in ("code", "description", "citation", "effective_on"):
            if key not in fee:
                raise ApplicationError(f"[[fee]] {fee.get('code', '')} needs {key}".replace("  ", " "), field="fee")
        by_size = {str(size): str(amount) for size, amount in fee.get("by_size", {}).items()}
        FEE_RULES.build(rule_for(amount=fee.get("amount"), rate=fee.get("rate"), by_size=by_size, rule=fee.get("rule")),
                        {"code": fee["code"], "citation": fee["citation"], "description": fee["description"],
                         "amount": fee.get("amount"), "rate": fee.get("rate"), "by_size": by_size,
                         "params": fee.get("params", {})})
    return fees


def _dates_in_order(what: str, by: str | None = None):
    """A check of an array of dated versions: each version's ``effective_on`` after the one before (of the same
    ``by`` key: a fee's code), none twice."""

    def check(versions: list, where: str) -> list[str]:
        found, last = [], {}
        for n, version in enumerate(versions, 1):
            group = version.get(by) if by else ""
            day = str(version.get("effective_on"))
            if group in last and day <= last[group]:
                name = f" {group}" if by else ""
                found.append(f"{where[:-1]} #{n}] effective_on = {day}: the {what}{name} versions must be written "
                             f"in order of their dates, each after the one before ({last[group]}), none twice")
            last[group] = day
        return found

    return check


class GlCode(Text):
    words = "an account code, or [code, name]"

    def problem(self, value):
        if isinstance(value, str) and value.strip():
            return None
        if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) and v.strip() for v in value):
            return None
        return f"is not {self.words}"


def register() -> None:
    due = Shape({
        "days_after_bill_date": Key("the bill is due this many days after its bill date", Whole(0, 366, unit="days")),
        "months_after_bill_date": Key("the bill is due this many months after its bill date", Whole(0, 12)),
        "citation": Key("the section that sets the due date", Text()),
        "sample": Key("true where the text is silent and the date is the preset's sample", Flag())})
    section_register(
        "calendar", calendar_from, owner="billing", required=True, schemes=CALENDARS,
        meaning="Who is billed when and for which reading: books and their months, meters billed on dates of their "
                "own, the due date and the billable year.",
        keys={"scheme": Key("the billing calendar (one of the schemes below)", Text(), required=True),
              "citation": Key("the section that sets the billing dates", Text()),
              "due": Key("when a bill is due — days_after_bill_date or months_after_bill_date, with its citation "
                         "(sample = true where the text is silent)", due, required=True),
              "sample": Key("true where the dates are not in the text and the clerk confirms them", Flag()),
              "billable_year_starts": Key("the month the billable year starts (an annual minimum counts from it)",
                                          Whole(1, 12, unit="a month"))})
    section_register(
        "penalty", penalties_from, owner="billing", required=True, schemes=PENALTY_SCHEMES,
        meaning="When a late charge falls due on an unpaid bill and how much it is.",
        keys={"scheme": Key("the penalty scheme (one of the schemes below; its own keys are listed with it)", Text(),
                            required=True),
              "citation": Key("the section that sets the charge", Text()),
              "words": Key("the rule as printed on the bill", Text()),
              "description": Key("the late charge's name on the bill", Text()),
              "charges_on": Key("the bill's categories the charge is computed on: water, sewer, fee, fine",
                                ListOf(Text(PRINCIPAL_CATEGORIES))),
              "waiver_approval_above": Key("office policy: a waiver of more than this many dollars needs a "
                                           "supervisor (25.00 by default)", amount("100000"))})
    section_register(
        "policy", policy_from, owner="billing",
        meaning="What the ordinance leaves to the office (each key says policy on every page that shows it).",
        keys={"payment_order": Key("what a payment pays first: principal_first (default) or penalties_first",
                                   Text(tuple(PaymentOrder.values))),
              "list_floor": Key("an account owing less is not proposed for a shut-off case or the relevy list "
                                "(25.00 by default; the clerk may change it on the Utility page)", amount("100000")),
              "high_usage_factor": Key("a run holds a bill whose use per day is over this many times the account's "
                                       "usual (4 by default; the clerk may change it)",
                                       Number(low=Decimal(1), high=Decimal(999), places=2, above_low=True,
                                              what="a factor"))})
    section_register(
        "gl", gl_accounts_from, owner="billing",
        meaning="The general ledger accounts the day's journal posts to (New York's Uniform System of Accounts, "
                "fund F, where the table says nothing).",
        keys={"fund": Key("the fund letter (F; a town's district its own, SW1)", Text(blank=False)),
              "sewer_fund": Key("the fund sewer rents are revenue of (G)", Text(blank=False)),
              "confirmed": Key("true once the treasurer has confirmed the codes", Flag()),
              **{key: Key(f"{name} ({code} by default)", GlCode()) for key, (code, name) in GL_DEFAULTS.items()}})
    section_register(
        "sewer", sewer_rents_from, owner="billing", is_list=True, schemes=SEWER_RENTS, keys=SEWER_KEYS,
        meaning="Sewer rents billed on the water bill (General Municipal Law art. 14-F), one [[sewer]] per rent: a "
                "share of the water rent, a rate per 1,000 gallons (with a winter cap), or a flat charge, each for "
                "the classes it names.")
    section_register(
        "final_bill", final_bill_rule_from, owner="billing",
        meaning="An off-cycle final bill at a move-out or a sale: its minimum, its due days, and whether arrears "
                "follow the property.",
        keys={"minimum": Key("pro_rata (by the days of the period elapsed) or full (the default)",
                             Text(FINAL_BILL_MINIMUMS)),
              "due_days": Key("days from the issue date to the due date (the calendar's rule by default)",
                              Whole(0, 366, unit="days")),
              "citation": Key("the section (policy where the text is silent)", Text()),
              "words": Key("the rule in words", Text()),
              "arrears_follow_property": Key("true where unpaid charges stay with the premises for a new owner",
                                             Flag()),
              "arrears_citation": Key("the section that says so (needed with arrears_follow_property)", Text())})
    section_register(
        "lien", lien_rule_from, owner="billing",
        meaning="The lien and relevy rule: unpaid charges carried to the tax roll.",
        keys={"citation": Key("the section", Text()), "words": Key("the rule in words", Text()),
              "list_for": Key("who the relevy list goes to", Text()),
              "policy": Key("true where the local law has no such rule and the list is office policy", Flag())})
    section_register(
        "rate_schedule", rate_schedules_check, owner="billing", is_list=True, schemes=RATE_STRUCTURES, stored=False,
        scheme_key="structure", default_scheme="minimum_and_blocks",
        list_checks=(_dates_in_order("rate schedule"),),
        meaning="The water rates, one [[rate_schedule]] per version, each in force from its own effective_on.",
        keys={"effective_on": Key("the day the schedule takes effect (bills dated on or after it use it)", Day(),
                                  required=True),
              "citation": Key("the section or resolution", Text(blank=False), required=True),
              "sample": Key("true for placeholder rates not for real bills", Flag()),
              "note": Key("a note for the clerk", Text()),
              "structure": Key("the rate structure (one of the structures below; minimum_and_blocks by default)",
                               Text())})
    section_register(
        "fee", fees_check, owner="billing", is_list=True, schemes=FEE_RULES, scheme_key=None, stored=False,
        list_checks=(_dates_in_order("fee", by="code"),),
        meaning="The fee schedule, one [[fee]] per fee and version, each in force from its own effective_on.",
        keys={"code": Key("the fee's code (a returned check is returned_check)", Text(blank=False), required=True),
              "description": Key("its name on the bill", Text(blank=False), required=True),
              "citation": CITED,
              "effective_on": Key("the day this version takes effect", Day(), required=True),
              "amount": Key("a flat amount", amount()), "rate": Key("a rate", rate("1000000")),
              "by_size": Key("an amount for each meter size", MapOf(amount(), "meter size")),
              "rule": Key("how it is quoted (one of the fee rules below; chosen from the keys given by default)",
                          Text(tuple(FEE_RULES.names()))),
              "params": Key("the rule's own parameters", FEE_PARAMS),
              "note": Key("a note for the clerk", Text()),
              "sample": Key("true for a placeholder amount", Flag())})
