"""Each preset's backflow enforcement, read from its ``[backflow]`` table: the compliance notices it serves (how
long the owner has, counted from what, by which methods), the fine or fee that follows, and what noncompliance
leads to. Device rules and test frequencies are in ``backflow.rules``.

Where a seed sets no period (a test-due reminder, Mineola's "reasonable time set by the Commission"), the
period is office policy and its citation says so.
"""

from dataclasses import dataclass, field, replace
from datetime import date
from decimal import Decimal

from core.errors import ApplicationError
from ordinance.keys import Flag, Key, ListOf, Shape, Tables, Text, Whole, amount
from ordinance.selectors import section, utility_required

from .models import DEVICE_TYPES
from .rules import FLAGS, DeviceRule, device_rule_from
from .schedule import DeviceTestFrequency, frequency_from


@dataclass(frozen=True)
class NoticeRule:
    kind: str
    days: int
    counted_from: str  # "served" (the date of the notice) or "received"
    citation: str
    methods: tuple[str, ...] = ("first_class_mail", "personal", "certified_mail")
    words: str = ""
    shortenable: bool = False  # the Board or Superintendent may shorten it for exigent circumstances


# How a fine accrues: "per_day_pipe", up to a daily maximum times the inches of the largest supply pipe after a
# grace period (Lansing § 141-11 B, ``backflow.fines``); "clerk_per_day", a daily amount the clerk imposes on the
# notice (Washingtonville § 169-37).
FINE_SCHEMES = ("per_day_pipe", "clerk_per_day")


@dataclass(frozen=True)
class FineRule:
    scheme: str  # one of FINE_SCHEMES
    fee_code: str
    citation: str
    per_day: Decimal
    after_days: int = 0  # days after the notice before the fine runs
    on_kinds: tuple[str, ...] = ()
    # The section sets a maximum ("shall not exceed"): the clerk enters the fine, the maximum proposed, and it is
    # never charged above it (Lansing § 141-11 B). Otherwise the daily amount is imposed on the notice.
    amount_entered: bool = False


@dataclass(frozen=True)
class DemandRule:
    fee_code: str
    amount: Decimal
    days: int
    bill_month: int
    citation: str


@dataclass(frozen=True)
class BackflowPolicy:
    preset: str
    citation: str
    notices: dict[str, NoticeRule] = field(default_factory=dict)
    fine: FineRule | None = None
    demand: DemandRule | None = None
    termination_section: str = ""
    emergency_kind: str = ""  # noncompliance is an emergency interruption instead of a case (Old Westbury)

    def notice(self, kind: str) -> NoticeRule:
        if kind not in self.notices:
            raise ApplicationError(f"'{kind}' is not a notice {self.preset.replace('_', ' ').title()} serves; use "
                                   + ", ".join(self.notices), field="kind")
        return self.notices[kind]


def _reminders(citation: str) -> dict[str, NoticeRule]:
    return {
        "test_due": NoticeRule("test_due", 30, "served", f"{citation} (the 30-day reminder is office policy)",
                               ("first_class_mail",), "Your backflow device's test is due within 30 days."),
        "overdue": NoticeRule("overdue", 30, "served", citation, ("first_class_mail", "certified_mail"),
                              "Your backflow device's test is overdue: have it tested and the report filed within "
                              "30 days."),
    }


def policy_from(preset: str, params: dict) -> BackflowPolicy:
    """A preset's enforcement from its ``[backflow]`` table; refused, naming the key, when a value is missing or
    not of its kind (at install, not at the first notice)."""
    try:
        notices = {**_reminders(params["reminders_citation"]), **{
            n["kind"]: NoticeRule(kind=n["kind"], days=int(n["days"]), counted_from=n["counted_from"],
                                  citation=n["citation"], methods=tuple(n["methods"]), words=n.get("words", ""),
                                  shortenable=bool(n.get("shortenable", False)))
            for n in params.get("notice", [])}}
        fine = params.get("fine")
        demand = params.get("demand")
        policy = BackflowPolicy(
            preset=preset, citation=params["citation"], notices=notices,
            fine=FineRule(scheme=fine["scheme"], fee_code=fine["fee_code"], citation=fine["citation"],
                          per_day=Decimal(str(fine["per_day"])), after_days=int(fine.get("after_days", 0)),
                          on_kinds=tuple(fine.get("on_kinds", ())),
                          amount_entered=bool(fine.get("amount_entered", False))) if fine else None,
            demand=DemandRule(fee_code=demand["fee_code"], amount=Decimal(str(demand["amount"])),
                              days=int(demand["days"]), bill_month=int(demand["bill_month"]),
                              citation=demand["citation"]) if demand else None,
            termination_section=params.get("termination_section", ""),
            emergency_kind=params.get("emergency_kind", ""))
    except KeyError as exc:
        raise ApplicationError(f"[backflow] needs {exc.args[0]}", field="backflow") from None
    except (TypeError, ValueError, ArithmeticError) as exc:
        raise ApplicationError(f"[backflow] has a value not of its kind ({exc})", field="backflow") from None
    if policy.fine and policy.fine.scheme not in FINE_SCHEMES:
        raise ApplicationError(f"[backflow.fine] scheme '{policy.fine.scheme}' is not one of "
                               f"{', '.join(FINE_SCHEMES)}", field="backflow")
    for rule in notices.values():
        if rule.counted_from not in ("served", "received"):
            raise ApplicationError(f"[[backflow.notice]] {rule.kind}: counted_from is served or received, not "
                                   f"'{rule.counted_from}'", field="backflow")
    return policy


@dataclass(frozen=True)
class BackflowRules:
    """The ``[backflow]`` table as installed: the enforcement, the device rule and the test frequency (each None
    where the preset has none)."""

    policy: BackflowPolicy | None
    device_rule: DeviceRule | None
    frequency: DeviceTestFrequency | None


def backflow_rules_from(params: dict) -> BackflowRules | None:
    """The whole ``[backflow]`` table, checked at install and read at run time, each refusal naming its key."""
    if not params:
        return None
    policy = policy_from("", params)
    try:
        rule = device_rule_from("", params["device_rule"]) if params.get("device_rule") else None
        frequency = frequency_from(params["test_frequency"]) if params.get("test_frequency") else None
    except KeyError as exc:
        raise ApplicationError(f"[backflow.test_frequency] needs {exc.args[0]}", field="backflow") from None
    except ValueError as exc:
        raise ApplicationError(str(exc), field="backflow") from None
    return BackflowRules(policy=policy, device_rule=rule, frequency=frequency)


def _installed(on: date | None) -> tuple[str, BackflowRules]:
    utility = utility_required()
    rules = section("backflow", on, installed=utility)
    if rules is None:
        raise ApplicationError(f"the preset '{utility.preset}' has no backflow enforcement rules ([backflow])",
                               field="preset")
    return utility.preset, rules


def backflow_policy(on: date | None = None) -> BackflowPolicy:
    """The installed preset's enforcement in force on ``on`` (today by default)."""
    preset, rules = _installed(on)
    return replace(rules.policy, preset=preset)


def device_rule(on: date | None = None) -> DeviceRule:
    """The installed preset's device rule in force on ``on``; refused (ValueError) when it has none."""
    preset, rules = _installed(on)
    if rules.device_rule is None:
        raise ValueError(f"the preset '{preset}' has no device rule ([backflow.device_rule])")
    return replace(rules.device_rule, preset=preset)


def device_test_frequency(on: date | None = None) -> DeviceTestFrequency:
    """How often devices are tested under the rules in force on ``on`` (a test is next due by the rule of its own
    day); refused (ValueError) when the preset has none."""
    preset, rules = _installed(on)
    if rules.frequency is None:
        raise ValueError(f"the preset '{preset}' has no test frequency ([backflow.test_frequency])")
    return rules.frequency


DAYS = Whole(0, 3660, unit="days")
_TYPES = ListOf(Text(tuple(code for code, _ in DEVICE_TYPES)))
_CONDITION = Shape({
    "code": Key("the condition's code", Text(blank=False), required=True),
    "label": Key("what it is, in words", Text(blank=False), required=True),
    "citation": Key("the section", Text(), required=True),
    "allowed": Key("the device types it allows", _TYPES), "with_reason": Key("allowed only with a reason", _TYPES),
    "reason_words": Key("the reason, in words", Text()), "reason_citation": Key("its section", Text()),
    "hazard": Key("false where the condition is no hazard", Flag()),
    "waiver_citation": Key("the section allowing a waiver", Text()),
    "flags": Key("the condition's flags", ListOf(Text(tuple(FLAGS)))),
    "waiver_flags": Key("the waiver's flags", ListOf(Text(tuple(FLAGS))))})
BACKFLOW_KEYS = {
    "citation": Key("the section on cross-connection control", Text(), required=True),
    "reminders_citation": Key("the section the test-due and overdue reminders rest on", Text(), required=True),
    "notice": Key("each compliance notice", Tables(Shape({
        "kind": Key("the notice's kind", Text(blank=False), required=True),
        "days": Key("days the owner has", DAYS, required=True),
        "counted_from": Key("counted from the day it is served or received", Text(("served", "received")),
                            required=True),
        "citation": Key("the section", Text(), required=True),
        "methods": Key("how it is served", ListOf(Text()), required=True), "words": Key("its words", Text()),
        "shortenable": Key("true where the inspector may shorten it", Flag())}))),
    "fine": Key("the fine or fee that follows noncompliance", Shape({
        "scheme": Key("how the fine is worked out: per_day_pipe, or clerk_per_day (an amount the clerk imposes)",
                      Text(FINE_SCHEMES), required=True),
        "fee_code": Key("the fee it is charged as", Text(blank=False), required=True),
        "citation": Key("the section", Text(), required=True),
        "per_day": Key("dollars a day at most", amount("100000"), required=True),
        "after_days": Key("days of grace", DAYS), "on_kinds": Key("the notices it follows", ListOf(Text())),
        "amount_entered": Key("true where the clerk enters the amount", Flag())})),
    "demand": Key("a yearly charge billed to devices", Shape({
        "fee_code": Key("the fee it is charged as", Text(blank=False), required=True),
        "amount": Key("the charge", amount("100000"), required=True),
        "days": Key("days to pay", DAYS, required=True),
        "bill_month": Key("the month it is billed", Whole(1, 12, unit="a month"), required=True),
        "citation": Key("the section", Text(), required=True)})),
    "device_rule": Key("which devices a premises' conditions call for (its scheme: design_criteria or "
                       "condition_list)", Shape({
        "scheme": Key("design_criteria or condition_list", Text(("design_criteria", "condition_list")),
                      required=True),
        "citation": Key("the section", Text(), required=True),
        "none_words": Key("condition_list: what no condition means, in words", Text()),
        "condition": Key("condition_list: each condition and the devices it allows", Tables(_CONDITION)),
        "determination": Key("condition_list: the determination an official records", Shape({
            "code": Key("its code", Text(blank=False), required=True), "who": Key("who determines", Text(),
                                                                                   required=True),
            "citation": Key("the section", Text(), required=True),
            "types": Key("the device types that may be determined", _TYPES)})),
        "connection": Key("design_criteria: the cross-connection label", Text()),
        "back_pressure": Key("design_criteria: the back-pressure label", Text()),
        "hazardous": Key("design_criteria: the hazard label", Text()),
        "subject_hazardous": Key("design_criteria: devices for a hazardous premises subject to back pressure",
                                 _TYPES),
        "subject_nonhazardous": Key("design_criteria: … nonhazardous, subject to back pressure", _TYPES),
        "not_subject_hazardous": Key("design_criteria: … hazardous, not subject to back pressure", _TYPES),
        "not_subject_nonhazardous": Key("design_criteria: … nonhazardous, not subject", _TYPES)})),
    "test_frequency": Key("how often devices are tested", Shape({
        "months": Key("months between tests", Whole(1, 120, unit="months"), required=True),
        "citation": Key("the section", Text(), required=True),
        "basis": Key("ordinance, policy (not in the text) or sample", Text(("ordinance", "policy", "sample")),
                     required=True),
        "words": Key("the rule in words", Text(), required=True),
        "after_defect_months": Key("months between tests after a defective certification",
                                   Whole(1, 120, unit="months")),
        "after_defect_for_months": Key("for how many months", Whole(1, 120, unit="months")),
        "after_defect_citation": Key("the section", Text())})),
    "termination_section": Key("the section under which noncompliance leads to termination of service", Text()),
    "emergency_kind": Key("noncompliance is an emergency interruption of this kind instead of a case", Text()),
}
