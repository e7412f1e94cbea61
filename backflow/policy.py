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
from ordinance.selectors import section, utility_required

from .rules import DeviceRule, device_rule_from
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


BACKFLOW_KEYS = {
    "citation": "the section on cross-connection control",
    "reminders_citation": "the section the test-due and overdue reminders rest on",
    "notice": "[[backflow.notice]]: each compliance notice — kind, days, counted_from (served or received), "
              "citation, methods, words, shortenable",
    "fine": "[backflow.fine]: the fine or fee that follows noncompliance — scheme, fee_code, citation, per_day, "
            "after_days, on_kinds, amount_entered",
    "demand": "[backflow.demand]: a yearly charge billed to devices — fee_code, amount, days, bill_month, citation",
    "device_rule": "[backflow.device_rule]: which devices a premises' conditions call for — scheme "
                   "(design_criteria_table or condition_list), citation, and the scheme's conditions",
    "test_frequency": "[backflow.test_frequency]: months between tests, citation, basis (ordinance, policy or "
                      "sample), words; after_defect_months, after_defect_for_months and after_defect_citation "
                      "for a shorter cycle after a defective certification",
    "termination_section": "the section under which noncompliance leads to termination of service",
    "emergency_kind": "noncompliance is an emergency interruption of this kind instead of a case",
}
