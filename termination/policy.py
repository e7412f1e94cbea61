"""The installed preset's due-process rules for termination, read from its ``[termination]`` table.

Every period carries its citation; where a seed sets none (Washingtonville, South Farmingdale, Lansing, Old
Westbury), the preset uses Mineola's periods as office policy and its citations say so ("policy (Mineola
§ 45.32)"). Pure arithmetic on dates lives here too, so the guard, the board, the portal and the nightly job
count the same days.
"""

from dataclasses import dataclass, replace
from datetime import date, timedelta
from decimal import Decimal

from django.utils.translation import gettext, gettext_noop

from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars
from ordinance.keys import Flag, Key, ListOf, MapOf, Shape, Text, Whole
from ordinance.selectors import installed_utility, section, utility_required

# How a notice was served, in words (marked for the catalog: a paper for a customer translates them).
METHOD_WORDS = {
    "personal": gettext_noop("personal service"),
    "certified_mail": gettext_noop("certified mail"),
    "registered_mail": gettext_noop("registered mail, return receipt requested"),
    "suitable_age_and_mail": gettext_noop("delivery to a person of suitable age and discretion, and first-class "
                                          "mail"),
}
# Methods by which the notice is received the day it is served; for mail the receipt date is recorded.
RECEIVED_WHEN_SERVED = ("personal", "suitable_age_and_mail")


# Everything a bill can owe, by the ledger's categories (``billing.ledger.allocation``).
ALL_CATEGORIES = ("water", "fee", "fine", "interest", "penalty")


@dataclass(frozen=True)
class Eligible:
    """What of one bill a nonpayment case may be for on a day: ``amount``, eligible since ``since`` (the
    earliest of its parts), in words by part."""

    amount: Decimal
    since: date
    parts: tuple[str, ...]


@dataclass(frozen=True)
class Trigger:
    """Nonpayment: what of a bill a shut-off may be for, and from when (docs/ordinances.md, "What a shut-off may be
    for, and how much"). The categories in ``covers`` (water rents with their interest and penalty, and fees
    where the section counts them) are eligible from ``after`` (the bill's due date or bill date) + ``days``; where
    the preset has ``fine_days``, a fine is eligible on its own, ``fine_days`` after it was imposed (Washingtonville
    § 169-26: "any fine ... within 10 days"). Anything else on the bill (a fee § 169-26 does not name) is never a
    ground, and rents not yet eligible never ride along with an eligible fine."""

    after: str
    days: int
    citation: str
    fine_days: int | None = None
    covers: tuple[str, ...] = ALL_CATEGORIES

    def rents_from(self, *, bill_date: date, due_date: date) -> date:
        return (due_date if self.after == "due_date" else bill_date) + timedelta(days=self.days)

    def eligible(self, *, bill_date: date, due_date: date, unpaid: dict, fines: list[tuple[date, Decimal]],
                 as_of: date) -> Eligible | None:
        """What of a bill with these unpaid amounts (by category) a case may be for on ``as_of``, or None.
        ``fines`` are the fines charged to the bill, (day charged, amount), oldest first: a payment pays a
        bill's fines as one category, so what is unpaid of them is the newest ones."""
        parts, amount, since = [], ZERO, []
        rents_from = self.rents_from(bill_date=bill_date, due_date=due_date)
        if rents_from <= as_of:
            rents = sum((unpaid.get(cat, ZERO) for cat in self.covers), ZERO)
            if rents > ZERO:
                amount += rents
                since.append(rents_from)
                parts.append(f"{self.covered_words} {fmt_dollars(rents)} unpaid, a ground since {fmt_day(rents_from)} "
                             f"({self.citation})")
        if self.fine_days is not None and "fine" not in self.covers:
            unpaid_fine = unpaid.get("fine", ZERO)
            # A fine is imposed on the account when charged; it reaches the customer with the bill.
            not_yet = sum((fine for day, fine in fines
                           if max(day, bill_date) + timedelta(days=self.fine_days) > as_of), ZERO)
            eligible_fine = unpaid_fine - not_yet
            if eligible_fine > ZERO:
                first = min(max(day, bill_date) + timedelta(days=self.fine_days) for day, _ in fines) if fines \
                    else bill_date + timedelta(days=self.fine_days)
                amount += eligible_fine
                since.append(first)
                parts.append(f"fine {fmt_dollars(eligible_fine)} unpaid {self.fine_days - 1} days after it was "
                             f"imposed ({self.citation})")
        if amount <= ZERO:
            return None
        return Eligible(amount=amount, since=min(since), parts=tuple(parts))

    @property
    def covered_words(self) -> str:
        """What the ground covers of a bill: "charges" (all of them) or "water charges, interest and penalties"."""
        if set(self.covers) >= set(ALL_CATEGORIES):
            return "charges"
        return _joined([CATEGORY_WORDS[cat] for cat in self.covers])

    @property
    def words(self) -> str:
        """The trigger in words: "water charges, interest and penalties of a bill unpaid 91 days after its bill
        date"."""
        anchor = "its due date" if self.after == "due_date" else "its bill date"
        what = "a bill" if self.covered_words == "charges" else f"{self.covered_words} of a bill"
        words = (f"{what} unpaid after its due date" if (self.after, self.days) == ("due_date", 1)
                 else f"{what} unpaid {self.days} days after {anchor}")
        if self.fine_days is not None:
            words += f", or a fine unpaid {self.fine_days - 1} days after it was imposed"
        return words


CATEGORY_WORDS = {"water": "water charges", "fee": "fees", "fine": "fines", "interest": "interest",
                  "penalty": "penalties"}


def _joined(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@dataclass(frozen=True)
class TerminationPolicy:
    citation: str
    is_policy: bool
    # Whether the chapter grants a shut-off for nonpayment at all; where it does not (Lansing, Old Westbury),
    # ``no_nonpayment`` says so and names the remedy (the relevy).
    nonpayment: bool
    no_nonpayment: str
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
        """The warning the notice carries, in the ordinance's words (§ 45.32), or in the reader's language."""
        return gettext("Unless a written request for a hearing is made within %(days)s days after receipt of this "
                       "notice, and you appear at the hearing, your water service may be terminated without further "
                       "notice.") % {"days": self.request_days}


def termination_policy(on: date | None = None) -> TerminationPolicy:
    """The installed preset's rules in force on ``on`` (today by default: a step uses the rules of its own day);
    refused, naming the step, when no preset with termination rules is installed."""
    utility = utility_required()
    policy = section("termination", on, installed=utility)
    if policy is None:
        raise ApplicationError("no preset with termination rules is installed (manage.py setup_utility PRESET)",
                               field="preset")
    return replace(policy, utility_name=utility.name, office_address=utility.office_address, phone=utility.phone,
                   chapter=utility.chapter)


def fine_days_to_pay() -> int | None:
    """The installed rules' time to pay a fine, in days after it is imposed: the trigger's ``fine_days`` less the
    day the ground begins (§ 169-26, "within 10 days": due on the 10th day, a ground on the 11th); None where a
    fine has no time of its own, or before termination rules are installed."""
    utility = installed_utility()
    policy = section("termination", installed=utility) if utility else None
    if policy is None or policy.trigger.fine_days is None:
        return None
    return policy.trigger.fine_days - 1


def termination_rules_from(p: dict) -> TerminationPolicy | None:
    """``[termination]`` as the policy (the utility's name and office filled in by ``termination_policy``); None
    for a preset without the table. A missing key or a value not of its kind is refused naming it."""
    if not p:
        return None
    trigger = p.get("trigger") or {"after": "due_date", "days": 1, "citation": p.get("citation", "")}
    emergency = p.get("emergency", {})
    return TerminationPolicy(
        citation=p.get("citation", ""), is_policy=bool(p.get("policy", False)),
        notice_min_days=int(p["notice_min_days_before_hearing"]), request_days=int(p["request_window_days"]),
        appeal_days=int(p["appeal_window_days"]), appeal_notice_min_days=int(p["appeal_notice_min_days"]),
        methods=tuple(p.get("methods", ("personal", "certified_mail"))), citations=dict(p.get("citations", {})),
        nonpayment=bool(p.get("nonpayment", True)),
        no_nonpayment=p.get("no_nonpayment", "The chapter grants no power to shut off water for nonpayment; unpaid "
                                             "charges are a lien collected by relevy (Village Law § 11-1118)."),
        trigger=Trigger(after=trigger.get("after", "due_date"), days=int(trigger.get("days", 1)),
                        citation=trigger.get("citation", p.get("citation", "")),
                        fine_days=trigger.get("fine_days"), covers=tuple(trigger.get("covers", ALL_CATEGORIES))),
        issued_by=p.get("issued_by", "Village Clerk"), hearing_officer=p.get("hearing_officer", "the hearing officer"),
        appeal_body=p.get("appeal_body", "the Commission"), hearing_place=p.get("hearing_place", ""),
        disconnect_fee=p.get("disconnect_fee", ""), restore_fee=p.get("restore_fee", ""),
        restore_rule=p.get("restore_rule", ""),
        emergency_kinds=tuple(emergency.get("kinds", ("emergency",))),
        emergency_citation=emergency.get("citation", "policy"),
        utility_name="", office_address="", phone="", chapter="",
    )


DAYS = Whole(0, 366, unit="days")
TERMINATION_KEYS = {
    "citation": Key("the section on termination of service", Text()),
    "policy": Key("true where the periods are office policy", Flag()),
    "nonpayment": Key("whether the chapter allows a shut-off for nonpayment (true by default)", Flag()),
    "no_nonpayment": Key("where it does not: what the remedy is instead, in words", Text()),
    "notice_min_days_before_hearing": Key("days from serving the notice to the earliest hearing", DAYS, required=True),
    "request_window_days": Key("days after receipt of the notice to request a hearing", DAYS, required=True),
    "appeal_window_days": Key("days after the determination is mailed to appeal", DAYS, required=True),
    "appeal_notice_min_days": Key("days' notice of an appeal hearing", DAYS, required=True),
    "methods": Key("how a notice may be served", ListOf(Text(("personal", "certified_mail", "registered_mail",
                                                              "suitable_age_and_mail", "first_class_mail")))),
    "citations": Key("the section of each step", MapOf(Text(), "step (grounds, notice, request, hearing, appeal, "
                                                              "restore)", lambda step: None if step in STEPS else
                                                              f"is not a step ({', '.join(STEPS)})")),
    "trigger": Key("when an account becomes delinquent", Shape({
        "after": Key("counted from the due_date or the bill_date", Text(("due_date", "bill_date"))),
        "days": Key("days after it", DAYS), "citation": Key("the section", Text()),
        "fine_days": Key("days after a fine is charged", DAYS),
        "covers": Key("the categories that count", ListOf(Text(ALL_CATEGORIES)))})),
    "emergency": Key("shut-offs without a hearing first", Shape({
        "kinds": Key("their kinds", ListOf(Text())), "citation": Key("their section", Text())})),
    "issued_by": Key("who signs the notice", Text()), "hearing_officer": Key("who hears the case", Text()),
    "appeal_body": Key("who hears an appeal", Text()), "hearing_place": Key("where hearings are held", Text()),
    "disconnect_fee": Key("the fee code charged for a shut-off", Text()),
    "restore_fee": Key("the fee code charged to restore", Text()),
    "restore_rule": Key("what restores service, in words", Text()),
}
STEPS = ("grounds", "notice", "request", "hearing", "appeal", "restore")
