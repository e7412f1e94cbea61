"""The last 60 days of daily use on the account page, where the meter sends daily reads (AMI): a bar a day, and the
same figures as a table for screen readers."""

from dataclasses import dataclass
from datetime import date, timedelta
from html import escape

from django.utils.safestring import mark_safe
from django.utils.translation import gettext as _

from billing.charts import nice_ceiling
from core.dates import fmt_day
from meters.models import DailyRead, Installation
from meters.readfiles import daily_use
from meters.units import to_gallons

DAYS = 60


@dataclass(frozen=True)
class DailyUse:
    day: date
    gallons: int | None  # None: no read that day


def account_daily_use(account, *, through: date) -> list[DailyUse]:
    """The account's gallons each day of the 60 ending ``through``, over the meters installed on it then; [] where
    none of them sends daily reads."""
    since = through - timedelta(days=DAYS - 1)
    # One query for the many accounts whose meters send none.
    if not DailyRead.objects.filter(meter__installations__account=account, month__gte=since.replace(day=1)).exists():
        return []
    meters = {i.meter_id: (i.meter.unit, i.meter.places)
              for i in Installation.objects.filter(account=account, installed_on__lte=through)
              .exclude(removed_on__lt=since).select_related("meter")}
    totals: dict[date, int | None] = {since + timedelta(days=i): None for i in range(DAYS)}
    for meter_id, series in daily_use(list(meters), since=since, until=through).items():
        for day, use in series:
            if use is not None:
                totals[day] = (totals[day] or 0) + to_gallons(use, *meters[meter_id])
    return [DailyUse(day, gallons) for day, gallons in totals.items()]


def daily_chart(days: list[DailyUse], *, width: int = 600, height: int = 140) -> str:
    """A bar a day (trusted markup: every text escaped here); a day with no read has no bar."""
    left, right, top, bottom = 36, 6, 8, 16
    plot_w, plot_h = width - left - right, height - top - bottom
    # The customer's own use sets the scale (a household's 150 gal a day on a 200 gal scale), never a fixed floor.
    scale = nice_ceiling(max((d.gallons or 0 for d in days), default=0), least=10)
    slot = plot_w / max(len(days), 1)
    base = top + plot_h
    title = _("Water use in gallons each day, last 60 days (table below)")
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" class="daily-chart" role="img" width="100%" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif" font-size="9" '
           f'preserveAspectRatio="xMinYMid meet"><title>{escape(title)}</title>',
           f'<path d="M{left} {base}H{width - right}M{left} {top}H{width - right}" stroke="#595959" '
           'stroke-width="0.6"/>',
           f'<text x="{left - 4}" y="{top + 3}" text-anchor="end" fill="#333">{scale:,}</text>',
           f'<text x="{left - 4}" y="{base}" text-anchor="end" fill="#333">0</text>']
    for i, item in enumerate(days):
        x = round(left + slot * i + slot * 0.15, 1)
        if item.gallons:
            h = round(plot_h * min(item.gallons, scale) / scale, 1)
            tip = escape(_("%(day)s: %(gallons)s gallons") % {"day": fmt_day(item.day), "gallons":
                                                               f"{item.gallons:,}"})
            out.append(f'<rect x="{x}" y="{round(base - h, 1)}" width="{round(slot * 0.7, 1)}" height="{h}" '
                       f'fill="#1f5f8b"><title>{tip}</title></rect>')
        if i % 10 == 0 or i == len(days) - 1:
            out.append(f'<text x="{round(x + slot * 0.35, 1)}" y="{height - 4}" text-anchor="middle" fill="#333">'
                       f"{escape(fmt_day(item.day).rsplit(' ', 1)[0].rstrip(','))}</text>")
    out.append("</svg>")
    return mark_safe("".join(out))  # noqa: S308 - every text in it is escaped above
