"""Each preset's backflow enforcement, read from its ``[backflow]`` table: the compliance notices it serves (how
long the owner has, counted from what, by which methods), the fine or fee that follows, and what noncompliance
leads to. Device rules and test frequencies are in ``backflow.rules``.

Where a seed sets no period (a test-due reminder, Mineola's "reasonable time set by the Commission"), the
period is office policy and its citation says so.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from billing.models import Utility
from core.errors import ApplicationError

from .rules import device_rule_from
from .schedule import frequency_from


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


def backflow_policy() -> BackflowPolicy:
    utility = Utility.objects.first()
    if utility is None:
        raise ApplicationError("no preset is installed (manage.py setup_utility PRESET)", field="preset")
    if not utility.backflow_params:
        raise ApplicationError(f"the preset '{utility.preset}' has no backflow enforcement rules ([backflow])",
                               field="preset")
    return policy_from(utility.preset, utility.backflow_params)


def backflow_table_check(preset: str, params: dict) -> None:
    """The whole ``[backflow]`` table checked at install (``billing.presets.section_check_register``): the
    enforcement and the device rule, each refusal naming its key."""
    policy_from(preset, params)
    try:
        if params.get("device_rule"):
            device_rule_from(preset, params["device_rule"])
        if params.get("test_frequency"):
            frequency_from(params["test_frequency"])
    except KeyError as exc:
        raise ApplicationError(f"[backflow.test_frequency] needs {exc.args[0]}", field="backflow") from None
    except ValueError as exc:
        raise ApplicationError(str(exc), field="backflow") from None

