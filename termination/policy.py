"""The installed preset's due-process rules for termination, read from its ``[termination]`` table.

Every period carries its citation; where a seed sets none (Washingtonville, South Farmingdale, Lansing, Old
Westbury), the preset uses Mineola's periods as office policy and its citations say so ("policy (Mineola
§ 45.32)"). Pure arithmetic on dates lives here too, so the guard, the board, the portal and the nightly job
count the same days.
"""

from dataclasses import dataclass
from datetime import date, timedelta

from billing.models import Utility
from core.errors import ApplicationError

METHOD_WORDS = {
    "personal": "personal service",
    "certified_mail": "certified mail",
    "registered_mail": "registered mail, return receipt requested",
    "suitable_age_and_mail": "delivery to a person of suitable age and discretion, and first-class mail",
}
# Methods by which the notice is received the day it is served; for mail the receipt date is recorded.
RECEIVED_WHEN_SERVED = ("personal", "suitable_age_and_mail")


@dataclass(frozen=True)
class Trigger:
    """Nonpayment: a bill is delinquent from ``after`` (its due date or bill date) + ``days``; a bill carrying
    a fine, from the fine's charge date + ``fine_days`` where the preset has that rule."""

    after: str
    days: int
    citation: str
    fine_days: int | None = None

    def delinquent_from(self, *, bill_date: date, due_date: date, fine_charged_on: date | None = None) -> date:
        anchor = due_date if self.after == "due_date" else bill_date
        start = anchor + timedelta(days=self.days)
        if fine_charged_on is not None and self.fine_days is not None:
            # A fine is imposed on the account when charged; it reaches the customer with the bill.
            start = min(start, max(fine_charged_on, bill_date) + timedelta(days=self.fine_days))
        return start

    @property
    def words(self) -> str:
        """The trigger in words: "a bill unpaid 91 days after its bill date"."""
        anchor = "its due date" if self.after == "due_date" else "its bill date"
        words = ("a bill unpaid after its due date" if (self.after, self.days) == ("due_date", 1)
                 else f"a bill unpaid {self.days} days after {anchor}")
        if self.fine_days is not None:
            words += f", or a fine unpaid {self.fine_days - 1} days after it was imposed"
        return words


@dataclass(frozen=True)
class TerminationPolicy:
    citation: str
    is_policy: bool
    notice_min_days: int
    request_days: int
    appeal_days: int
    appeal_notice_min_days: int
    methods: tuple[str, ...]
    citations: dict
    trigger: Trigger
    issued_by: str
    hearing_officer: str
    appeal_body: str
    hearing_place: str
    disconnect_fee: str
    restore_fee: str
    restore_rule: str
    emergency_kinds: tuple[str, ...]
    emergency_citation: str
    utility_name: str
    office_address: str
    phone: str
    chapter: str

    def cite(self, step: str) -> str:
        return self.citations.get(step, self.citation)

    def hearing_earliest(self, served_on: date) -> date:
        return served_on + timedelta(days=self.notice_min_days)

    def request_by(self, received_on: date) -> date:
        return received_on + timedelta(days=self.request_days)

    def appeal_by(self, mailed_on: date) -> date:
        return mailed_on + timedelta(days=self.appeal_days)

    def appeal_hearing_earliest(self, mailed_on: date) -> date:
        return mailed_on + timedelta(days=self.appeal_notice_min_days)

    def request_warning(self) -> str:
        """The warning the notice carries, in the ordinance's words (§ 45.32)."""
        return (f"Unless a written request for a hearing is made within {self.request_days} days after receipt "
                "of this notice, and you appear at the hearing, your water service may be terminated without "
                "further notice.")


def termination_policy() -> TerminationPolicy:
    """The installed preset's rules; refused, naming the step, when no preset is installed."""
    utility = Utility.objects.first()
    if utility is None or not utility.termination_params:
        raise ApplicationError("no preset with termination rules is installed (manage.py setup_utility PRESET)",
                               field="preset")
    p = utility.termination_params
    trigger = p.get("trigger", {"after": "due_date", "days": 1, "citation": p.get("citation", "")})
    emergency = p.get("emergency", {})
    return TerminationPolicy(
        citation=p.get("citation", ""), is_policy=bool(p.get("policy", False)),
        notice_min_days=int(p["notice_min_days_before_hearing"]), request_days=int(p["request_window_days"]),
        appeal_days=int(p["appeal_window_days"]), appeal_notice_min_days=int(p["appeal_notice_min_days"]),
        methods=tuple(p.get("methods", ("personal", "certified_mail"))), citations=dict(p.get("citations", {})),
        trigger=Trigger(after=trigger.get("after", "due_date"), days=int(trigger.get("days", 1)),
                        citation=trigger.get("citation", p.get("citation", "")),
                        fine_days=trigger.get("fine_days")),
        issued_by=p.get("issued_by", "Village Clerk"), hearing_officer=p.get("hearing_officer", "the hearing officer"),
        appeal_body=p.get("appeal_body", "the Commission"), hearing_place=p.get("hearing_place", ""),
        disconnect_fee=p.get("disconnect_fee", ""), restore_fee=p.get("restore_fee", ""),
        restore_rule=p.get("restore_rule", ""),
        emergency_kinds=tuple(emergency.get("kinds", ("emergency",))),
        emergency_citation=emergency.get("citation", "policy"),
        utility_name=utility.name, office_address=utility.office_address, phone=utility.phone,
        chapter=utility.chapter,
    )
