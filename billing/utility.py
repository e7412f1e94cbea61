"""The installed utility and the strategies its preset selects."""

from dataclasses import dataclass
from datetime import date

from core.errors import ApplicationError

from .calendars import calendar_for
from .models import PaymentOrder, RateSchedule, Utility
from .penalties import penalty_scheme_for
from .rating import Schedule


@dataclass(frozen=True)
class Installed:
    utility: Utility
    calendar: object
    penalties: object


def installed_utility() -> Installed:
    utility = Utility.objects.first()
    if utility is None:
        raise ApplicationError("no ordinance preset is installed; run `manage.py setup_utility mineola`",
                               field="preset")
    return Installed(utility, calendar_for(utility.calendar_scheme, utility.calendar_params),
                     penalty_scheme_for(utility.penalty_scheme, utility.penalty_params))


def schedule_in_force(on: date) -> tuple[RateSchedule, Schedule]:
    """The rate schedule in force on a bill date (the latest effective on or before it)."""
    row = RateSchedule.objects.filter(effective_on__lte=on).order_by("-effective_on").first()
    if row is None:
        earliest = RateSchedule.objects.order_by("effective_on").values_list("effective_on", flat=True).first()
        raise ApplicationError(f"no rate schedule is in force on {on}; the earliest takes effect {earliest}",
                               field="date")
    return row, Schedule.from_rules(row.rules)


def payment_order() -> str:
    """The installed preset's payment order; the default where none is installed yet (a balance is still
    a balance before any preset is)."""
    order = Utility.objects.values_list("payment_order", flat=True).first()
    return order or PaymentOrder.PRINCIPAL_FIRST


def sample_rates_refusal(*, on: date, accept_sample_rates: bool) -> str:
    """Why billing on ``on`` is refused because the rates in force are a preset's sample values, or "".

    A preset ships a **sample** schedule where the ordinance's own schedule is not in the published text
    (ORDINANCES.md: "Sample rates are not for real bills"). Billing on it is allowed on a demo/training site,
    or when the clerk accepts it for one run (recorded on the run); otherwise it is refused.
    """
    row, _ = schedule_in_force(on)
    if not row.is_sample or accept_sample_rates:
        return ""
    utility = installed_utility().utility
    if utility.is_demo_site:
        return ""
    return (f"the rate schedule in force on {on} (effective {row.effective_on}, {row.citation}) is the preset's "
            "sample schedule, a placeholder for rates the published ordinance does not contain, and sample "
            "rates are not for real bills; install the adopted rates (a [[rate_schedule]] without `sample = true` "
            f"in the preset file, then setup_utility {utility.preset}), mark this a demo/training site (setup_utility "
            f"{utility.preset} --demo N), or accept the sample rates for this run (run_billing "
            "--accept-sample-rates, “Accept sample rates” on the admin's start page, or accept_sample_rates in "
            "the API), which is recorded on the run")
