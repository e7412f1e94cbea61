"""The consumption bar chart, drawn as plain SVG with no database.

One bar per bill over the last 24 months, its height proportional to the bill's gallons, labelled by
the month of the bill date. The same markup goes on the paper bill (WeasyPrint draws inline SVG) and on
the customer portal, where the page gives a table of the same figures for screen readers. The output is
a pure function of its input, so a re-rendered bill PDF stays byte-for-byte the same.
"""

from dataclasses import dataclass
from datetime import date
from html import escape

from django.utils.translation import gettext_lazy

from core.dates import add_months, fmt_month

WINDOW_MONTHS = 24


@dataclass(frozen=True)
class ChartPoint:
    bill_date: date
    gallons: int

    @property
    def label(self) -> str:
        """The bill's month, as a bar's tooltip names it: ``Feb 2026``, ``feb 2026``."""
        return fmt_month(self.bill_date, year="full")


def chart_window_start(through: date) -> date:
    """Bills dated after this day and on or before ``through`` are in the chart (24 months)."""
    return add_months(through, -WINDOW_MONTHS)


def chart_points(rows, *, through: date) -> list[ChartPoint]:
    """``rows`` of (bill_date, gallons) → the points in the 24 months ending ``through``, oldest first."""
    start = chart_window_start(through)
    return sorted((ChartPoint(d, int(g)) for d, g in rows if start < d <= through), key=lambda p: p.bill_date)


def nice_ceiling(value: int, *, least: int = 1000) -> int:
    """The smallest 1, 2, 2.5 or 5 × 10ⁿ at or above ``value`` (at least ``least`` gallons), for the scale."""
    top = max(int(value), least)
    magnitude = 1
    while magnitude * 10 <= top:
        magnitude *= 10
    for step in (1, 2, 2.5, 5, 10):
        if step * magnitude >= top:
            return int(step * magnitude)
    return 10 * magnitude  # pragma: no cover - the loop always returns


def _short(gallons: int) -> str:
    if gallons >= 1_000_000:
        return f"{gallons / 1_000_000:.1f}M".replace(".0M", "M")
    if gallons >= 1000:
        return f"{gallons / 1000:.0f}k" if gallons % 1000 == 0 or gallons >= 10_000 else f"{gallons / 1000:.1f}k"
    return str(gallons)


CHART_TITLE = gettext_lazy("Water use, gallons per bill, last 24 months")
NO_BILLS_YET = gettext_lazy("No earlier bills yet")
GALLONS_IN_MONTH = gettext_lazy("%(month)s: %(gallons)s gallons")


def chart_words(points: list[ChartPoint], *, title: str = CHART_TITLE) -> str:
    """The chart's figures in words, for a reader who does not see it (the paper bill's alternative text):
    its title, then each bill's month and gallons, oldest first."""
    if not points:
        return f"{title}: {NO_BILLS_YET}."
    return f"{title}: " + "; ".join(str(GALLONS_IN_MONTH % {"month": p.label, "gallons": f"{p.gallons:,}"})
                                    for p in points) + "."


def consumption_chart_svg(points: list[ChartPoint], *, width: int = 300, height: int = 130,
                          title: str = CHART_TITLE, element_id: str = "", tooltips: bool = False) -> str:
    """The chart as an ``<svg>`` element (trusted markup: every text in it is escaped here).

    With eight bars or fewer each bar carries its gallons and the scale is left out; with more, a scale
    of gallons replaces the figures and every few bars are labelled. ``tooltips`` adds a ``<title>`` per
    bar for pointer users on the portal (the paper bill has no use for them).
    """
    few = len(points) <= 8
    left, right, top, bottom = (4 if few else 30), (4 if few else 12), 10, 14
    plot_w, plot_h = width - left - right, height - top - bottom
    scale_top = nice_ceiling(max((p.gallons for p in points), default=0))
    base_y = top + plot_h
    ident = f' id="{escape(element_id)}"' if element_id else ""
    out = [f'<svg xmlns="http://www.w3.org/2000/svg"{ident} class="consumption-chart" role="img" '
           f'width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
           # Labels near black (#1b1b1b: 16.9:1 on white) at 8.5 units: 6 pt on the paper bill's 2.9 in.
           f'font-family="DejaVu Sans, sans-serif" font-size="8.5" fill="#1b1b1b" text-anchor="middle">',
           f"<title>{escape(str(title))}</title>",
           f'<path d="M{left} {base_y}H{width - right}" stroke="#777" stroke-width="0.8"/>']
    if not few:
        # A scale: gridlines at half and full, labelled in gallons.
        out.append(f'<path d="M{left} {top}H{width - right}M{left} {top + plot_h / 2}H{width - right}" '
                   'stroke="#bbb" stroke-width="0.4"/>')
        out.append(f'<text x="{left - 3}" y="{top + 2.5}" text-anchor="end">{_short(scale_top)}</text>')
        out.append(f'<text x="{left - 3}" y="{top + plot_h / 2 + 2.5}" text-anchor="end">'
                   f"{_short(scale_top // 2)}</text>")
    if not points:
        out.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h / 2}">{escape(str(NO_BILLS_YET))}</text>')
    slot = plot_w / max(len(points), 4)
    bar_w = round(slot * 0.7, 1)
    every = max(1, -(-len(points) // 8))  # label at most about eight bars
    for i, point in enumerate(points):
        x = round(left + slot * i + (slot - bar_w) / 2, 1)
        h = round(plot_h * point.gallons / scale_top, 1)
        fill = "#1f5f8b" if i == len(points) - 1 else "#8fb3cc"
        tip = (f"<title>{escape(GALLONS_IN_MONTH % {'month': point.label, 'gallons': f'{point.gallons:,}'})}</title>"
               if tooltips else "")
        out.append(f'<rect x="{x}" y="{round(base_y - h, 1)}" width="{bar_w}" height="{h}" fill="{fill}">'
                   f"{tip}</rect>")
        cx = round(x + bar_w / 2, 1)
        if few:
            out.append(f'<text x="{cx}" y="{round(base_y - h - 2, 1)}">{_short(point.gallons)}</text>')
        if (len(points) - 1 - i) % every == 0:  # counted from the latest bill, which is always labelled
            d = point.bill_date
            out.append(f'<text x="{cx}" y="{height - 4}">{escape(fmt_month(d))}</text>')
    out.append("</svg>")
    return "".join(out)
