"""Each preset's backflow enforcement: the compliance notices it serves (how long the owner has, counted from
what, by which methods), the fine or fee that follows, and what noncompliance leads to. Device rules and test
frequencies are in ``backflow.rules``.

Where a seed sets no period (a test-due reminder, Mineola's "reasonable time set by the Commission"), the
period is office policy and its citation says so.
"""

from dataclasses import dataclass, field
from decimal import Decimal

from billing.models import Utility
from core.errors import ApplicationError


@dataclass(frozen=True)
class NoticeRule:
    kind: str
    days: int
    counted_from: str  # "served" (the date of the notice) or "received"
    citation: str
    methods: tuple[str, ...] = ("first_class_mail", "personal", "certified_mail")
    words: str = ""
    shortenable: bool = False  # the Board or Superintendent may shorten it for exigent circumstances


@dataclass(frozen=True)
class FineRule:
    scheme: str  # "per_day_pipe" (Lansing § 141-11 B) or "clerk_per_day" (Washingtonville § 169-37)
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


POLICIES = {
    "mineola": BackflowPolicy(
        preset="mineola", citation="§§ 45.41–45.45",
        notices={**_reminders("policy (Chapter 45 sets no test frequency)"),
                 "install": NoticeRule("install", 30, "served", "§ 45.41 (30 days: office policy for the "
                                       "Commission's 'reasonable time')", ("personal", "certified_mail"),
                                       "Install the backflow prevention device the premises require.")},
        termination_section="§ 45.45 B"),
    "washingtonville": BackflowPolicy(
        preset="washingtonville", citation="§§ 169-31–169-37",
        notices={**_reminders("§ 169-35"),
                 "install": NoticeRule("install", 120, "served", "§ 169-33", ("certified_mail",),
                                       "Upgrade the preexisting system with the required backflow prevention device "
                                       "within 120 days following service of this notice by certified mail."),
                 "violation": NoticeRule("violation", 0, "served", "§ 169-37", ("personal", "certified_mail"),
                                         "A fine of up to $250 for each day the violation continues after this "
                                         "notice may be imposed, and water service may be discontinued.")},
        fine=FineRule(scheme="clerk_per_day", fee_code="backflow_fine", citation="§ 169-37",
                      per_day=Decimal("250.00"), on_kinds=("violation", "install")),
        termination_section="§ 169-37"),
    "south_farmingdale": BackflowPolicy(
        preset="south_farmingdale", citation="§§ 5.6, 5.19, 7.5",
        notices={**_reminders("§ 7.5"),
                 "install": NoticeRule("install", 30, "served", "§ 5.6 (30 days: office policy)",
                                       ("personal", "certified_mail"),
                                       "Every permanent service must have its own backflow device after the meter.")},
        termination_section="§ 5.6, § 7.5"),
    "lansing": BackflowPolicy(
        preset="lansing", citation="§§ 141-3–141-14",
        notices={**_reminders("§ 141-4 C"),
                 "certification": NoticeRule("certification", 30, "served", "§ 141-10",
                                             ("first_class_mail", "certified_mail", "personal"),
                                             "Deliver a certification signed by a licensed professional engineer "
                                             "within 30 days of the date of this notice."),
                 "deficiency": NoticeRule("deficiency", 15, "served", "§ 141-10",
                                          ("first_class_mail", "certified_mail", "personal"),
                                          "Correct the deficiencies and deliver a new certification within 15 days "
                                          "of the date of this notice.")},
        fine=FineRule(scheme="per_day_pipe", fee_code="backflow_fine", citation="§ 141-11 B",
                      per_day=Decimal("25.00"), after_days=180, on_kinds=("certification",), amount_entered=True),
        termination_section="§ 141-5"),
    "old_westbury": BackflowPolicy(
        preset="old_westbury", citation="§ 210-43; backflow enforcement",
        notices={**_reminders("§ 210-43 (the reminders are office policy)"),
                 "violation": NoticeRule("violation", 7, "received", "backflow enforcement B(2)–(3)",
                                         ("personal", "suitable_age_and_mail", "registered_mail"),
                                         "You have seven calendar days from receipt of this notice to file a written "
                                         "request at the Village Hall for a hearing before the Village Board of "
                                         "Zoning Appeals, or to cure the violation; otherwise the Water Department "
                                         "may enter to perform the testing, for a fee of $250.",
                                         shortenable=True),
                 "demand": NoticeRule("demand", 30, "served", "backflow enforcement B(3)",
                                      ("first_class_mail",),
                                      "The Water Department performed the testing: a fee of $250 is due. Unpaid 30 "
                                      "days after this demand, it is added to the property's November water "
                                      "assessment.")},
        demand=DemandRule(fee_code="backflow_test_fee", amount=Decimal("250.00"), days=30, bill_month=11,
                          citation="backflow enforcement B(3)"),
        emergency_kind="health_hazard"),
}


def backflow_policy() -> BackflowPolicy:
    utility = Utility.objects.first()
    if utility is None:
        raise ApplicationError("no preset is installed (manage.py setup_utility PRESET)", field="preset")
    if utility.preset not in POLICIES:
        raise ApplicationError(f"the preset '{utility.preset}' has no backflow enforcement rules", field="preset")
    return POLICIES[utility.preset]
