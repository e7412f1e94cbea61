"""Usage alerts from the readings recorded: use far above the account's own (``rules.use_over``, the bill hold's rule
with the office's factor), use on a vacant or shut-off account, no use over a month on an occupied one. Each alert is
kept for the clerk (``UsageAlert``, once per reading and kind, with its figures) and announced
(``usage_alerts_raised``) so the customer is told where they chose it, in their language.

Worked out after the readings are committed, from each meter's own earlier readings: the interval the new reading
closes is compared with the same period last year where the readings reach it (a summer's sprinkling against last
summer's, not against the winter), and with the average of the year of readings before it where they do not."""

from collections import defaultdict
from datetime import timedelta
from decimal import ROUND_HALF_UP, Decimal

from django.db import transaction

from accounts.models import Account
from ordinance.selectors import installed_utility

from .models import Installation, Reading, UsageAlert
from .rules import use_between, use_over
from .signals import usage_alerts_raised
from .units import to_gallons

LOOK_BACK = timedelta(days=365)
NO_USE_DAYS = 28  # an occupied account's meter standing still this long is worth a look


def usage_alerts_raise(reading_ids) -> list[int]:
    """Raise the alerts the readings call for; returns the ids of the alerts made (none twice)."""
    utility = installed_utility()
    if utility is None:
        return []
    readings = list(Reading.objects.filter(id__in=list(reading_ids)).exclude(read_type=Reading.ReadType.ESTIMATED)
                    .select_related("meter"))
    if not readings:
        return []
    meter_ids = {r.meter_id for r in readings}
    earliest = min(r.read_on for r in readings) - LOOK_BACK * 2
    history: dict[int, list[tuple]] = defaultdict(list)
    for meter_id, read_on, value in (Reading.objects.filter(meter_id__in=meter_ids, read_on__gte=earliest)
                                     .order_by("meter_id", "read_on").values_list("meter_id", "read_on", "value")):
        history[meter_id].append((read_on, value))
    installed: dict[int, list[Installation]] = defaultdict(list)
    for installation in Installation.objects.filter(meter_id__in=meter_ids):
        installed[installation.meter_id].append(installation)
    statuses = dict(Account.objects.filter(installations__meter_id__in=meter_ids).values_list("id", "status"))
    made: list[UsageAlert] = []
    for reading in readings:
        account_id = next((i.account_id for i in installed[reading.meter_id] if i.installed_on <= reading.read_on
                           and (i.removed_on is None or i.removed_on >= reading.read_on)), None)
        if account_id is None:
            continue
        earlier = [(d, v) for d, v in history[reading.meter_id] if d < reading.read_on]
        if not earlier:
            continue
        before_on, before = earlier[-1]
        days = (reading.read_on - before_on).days
        gallons = to_gallons(reading.value - before, reading.meter.unit, reading.meter.places)
        status = statuses.get(account_id)
        if status in (Account.Status.VACANT, Account.Status.SHUT_OFF) and gallons > 0:
            made.append(UsageAlert(reading=reading, meter_id=reading.meter_id, read_on=reading.read_on,
                                   account_id=account_id, kind=UsageAlert.Kind.VACANT,
                                   gallons=gallons, days=days,
                                   detail=f"{gallons:,} gal in {days} days on an account that is "
                                          f"{Account.Status(status).label.lower()}"))
            continue
        if status == Account.Status.ACTIVE and gallons == 0 and days >= NO_USE_DAYS:
            made.append(UsageAlert(reading=reading, meter_id=reading.meter_id, read_on=reading.read_on,
                                   account_id=account_id, kind=UsageAlert.Kind.NONE,
                                   days=days, detail=f"no use in {days} days on an occupied account: a stopped meter?"))
            continue
        unit, places, factor = reading.meter.unit, reading.meter.places, utility.high_usage_factor
        last_year = use_between(earlier, before_on - LOOK_BACK, reading.read_on - LOOK_BACK)
        if last_year:
            past_gallons, past_days = to_gallons(last_year, unit, places), days
            compared = UsageAlert.Compared.LAST_YEAR
        else:
            year = [(d, v) for d, v in earlier if d >= before_on - LOOK_BACK]
            first_on, first = year[0]
            past_gallons, past_days = to_gallons(before - first, unit, places), (before_on - first_on).days
            compared = UsageAlert.Compared.YEAR
        words = use_over(gallons, days, past_gallons=past_gallons, past_days=past_days, factor=factor)
        if words:
            made.append(UsageAlert(reading=reading, meter_id=reading.meter_id, read_on=reading.read_on,
                                   account_id=account_id, kind=UsageAlert.Kind.HIGH, gallons=gallons,
                                   days=days, compared_with=compared, detail=f"{words} over {compared.label}",
                                   usual_per_day=(Decimal(past_gallons) / past_days).quantize(Decimal("0.1"),
                                                                                               ROUND_HALF_UP)))
    if not made:
        return []
    with transaction.atomic():
        UsageAlert.objects.bulk_create(made, ignore_conflicts=True)
        ids = list(UsageAlert.objects.filter(reading_id__in=[a.reading_id for a in made]).values_list("id", flat=True))
        transaction.on_commit(lambda: usage_alerts_raised.send(sender=UsageAlert, alert_ids=ids))
    return ids
