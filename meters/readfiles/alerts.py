"""Meter alerts from the files: once per episode, not once per day.

A flag a meter reports day after day (a leak, reverse flow, tamper, no flow, a register mismatch) and continuous
flow are one episode while its alert is open: a later day of it moves the alert's ``seen_through`` on and raises
nothing new, so the customer is told once and the clerk's list counts one. The episode ends when a read of the
meter without it comes in after the last day it was seen (a day without the flag; for continuous flow, a day at
or under the floor) or when the clerk resolves it; the next one raises a new alert. A reading outside its expected
range is about that reading alone.
"""

from __future__ import annotations

from datetime import date

from django.db import transaction
from django.utils import timezone

from core.csvimport import chunked

from ..models import Installation, Reading, UsageAlert
from ..signals import usage_alerts_raised

EPISODES = frozenset({UsageAlert.Kind.LEAK, UsageAlert.Kind.REVERSE_FLOW, UsageAlert.Kind.TAMPER,
                      UsageAlert.Kind.NO_FLOW, UsageAlert.Kind.MISMATCH, UsageAlert.Kind.CONTINUOUS})


def spans_of(meter_ids) -> dict[int, list[tuple[date, date | None, int]]]:
    """Each meter's installations, as (installed on, removed on, account)."""
    spans: dict[int, list] = {}
    for chunk in chunked(sorted(meter_ids)):
        for meter_id, account_id, start, end in Installation.objects.filter(meter_id__in=chunk).values_list(
                "meter_id", "account_id", "installed_on", "removed_on"):
            spans.setdefault(meter_id, []).append((start, end, account_id))
    return spans


def _accounts_on(meter_ids, days) -> dict[tuple[int, date], int]:
    """The account each meter was installed on, on each of ``days``."""
    spans = spans_of(meter_ids)
    out = {}
    for meter_id, day in days:
        out[(meter_id, day)] = next((account_id for start, end, account_id in spans.get(meter_id, [])
                                     if start <= day and (end is None or day <= end)), None)
    return out


def open_episodes(meter_ids, kinds=EPISODES) -> dict[tuple[int, str], UsageAlert]:
    """The open alert of each episodic kind on each meter."""
    found = {}
    for chunk in chunked(sorted(meter_ids)):
        for alert in UsageAlert.objects.filter(meter_id__in=chunk, kind__in=list(kinds),
                                               resolved_at__isnull=True).order_by("read_on"):
            alert.seen_through = alert.seen_through or alert.read_on
            found[(alert.meter_id, alert.kind)] = alert
    return found


def episodes_close(ended: list[tuple[UsageAlert, str]]) -> None:
    """Close each episode (an open alert) with why it is over, for the clerk."""
    now = timezone.now()
    for alert, why in ended:
        alert.resolved_at, alert.note = now, f"{why}: the episode is over"[:300]
    UsageAlert.objects.bulk_update([alert for alert, _ in ended], ["resolved_at", "note"], batch_size=1000)


def episodes_end(seen: dict[int, dict[date, set[str]]], kinds=EPISODES - {UsageAlert.Kind.CONTINUOUS}) -> int:
    """End the episodes the reads show over: ``seen`` is each meter's days read with the alert kinds each day
    shows; an open episode of a kind ends on the first day read after it was last seen without it."""
    ended = []
    for (meter_id, kind), alert in open_episodes(seen, kinds).items():
        quiet = [day for day, shown in seen[meter_id].items() if day > alert.seen_through and kind not in shown]
        if quiet:
            ended.append((alert, f"not reported on {min(quiet)}"))
    episodes_close(ended)
    return len(ended)


def alerts_write(wanted: list[tuple]) -> list[int]:
    """Write the alerts (meter id, day, kind, days, detail) not already on file, on the account the meter was on,
    with the register reading of that day where there is one; the new ones are announced on commit. An episodic
    kind with an alert open on the meter moves that alert's ``seen_through`` on instead."""
    if not wanted:
        return []
    open_now = open_episodes({w[0] for w in wanted})
    moved: dict[int, UsageAlert] = {}
    fresh = []
    for item in sorted(wanted, key=lambda w: w[1]):
        alert = open_now.get((item[0], item[2]))
        if alert is not None and alert.read_on <= item[1]:
            if item[1] > alert.seen_through:
                alert.seen_through = item[1]
                moved[alert.pk] = alert
        else:
            fresh.append(item)
    UsageAlert.objects.bulk_update(moved.values(), ["seen_through"], batch_size=1000)
    if not fresh:
        return []
    meter_ids, days = {w[0] for w in fresh}, {w[1] for w in fresh}
    accounts = _accounts_on(meter_ids, {(w[0], w[1]) for w in fresh})
    readings, existing = {}, set()
    for chunk in chunked(sorted(meter_ids)):
        for pk, meter_id, read_on in Reading.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
                "id", "meter_id", "read_on"):
            readings[(meter_id, read_on)] = pk
        existing |= set(UsageAlert.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
            "meter_id", "read_on", "kind"))
    made: dict[tuple, UsageAlert] = {}
    opened: dict[tuple[int, str], UsageAlert] = {}
    for meter_id, day, kind, days_, detail in fresh:
        key = (meter_id, day, kind)
        if not accounts.get((meter_id, day)) or key in existing or key in made:
            continue
        # The first day of an episode opens it; a later day of the same file moves it on.
        if (meter_id, kind) in opened:
            opened[(meter_id, kind)].seen_through = day
            continue
        made[key] = alert = UsageAlert(meter_id=meter_id, read_on=day, kind=kind, days=days_, detail=detail[:300],
                               account_id=accounts[(meter_id, day)], reading_id=readings.get((meter_id, day)),
                               seen_through=day if kind in EPISODES else None)
        if kind in EPISODES:
            opened[(meter_id, kind)] = alert
    UsageAlert.objects.bulk_create(made.values(), ignore_conflicts=True)
    ids = []
    for chunk in chunked(sorted({key[0] for key in made})):
        ids += [pk for pk, *key in UsageAlert.objects.filter(meter_id__in=chunk, read_on__in=days).values_list(
            "id", "meter_id", "read_on", "kind") if tuple(key) in made]
    if ids:
        transaction.on_commit(lambda: usage_alerts_raised.send(sender=UsageAlert, alert_ids=ids))
    return ids

