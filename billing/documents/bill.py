"""The bill as printed: everything ``templates/billing/bill.html`` shows, already formatted.

* **What the bill says** comes from the issued bill, its lines and its kept figures (``billing.figures``,
  put in rows by ``money_box``): the account as it stood when the bill was issued. Nothing recorded after
  the bill was issued is read, so a re-render gives the same page; the addressee is the owner of record
  when it was issued.
* **One set of formatters**: amounts with ``core.money.fmt_dollars``, rates with ``fmt_rate`` (``3.10``),
  gallons with ``fmt_gallons``, dates with ``core.dates.fmt_day``, the same as the portal's bill page.
* **Quick to lay out** (``core.documents`` renders it): bills load in a fixed number of queries per batch;
  the page uses positioned rows instead of tables and no element ids (in WeasyPrint 70 an anchored sheet
  took some 10 ms more layout), and the chart is an SVG data image.
* **Read aloud in order**: the file is tagged (``core.documents``), so a screen reader follows the HTML.
  Each fact is one row with its label and value ("Bill date Feb 1, 2026"), each reading one row, and the
  chart has its alternative text.
"""

from base64 import b64encode
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from django.conf import settings
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _

from core.dates import fmt_day
from core.i18n import customer_language
from core.money import fmt_dollars, fmt_gallons, fmt_rate
from ordinance.selectors import districts

from ..charts import chart_points, chart_words, consumption_chart_svg
from ..figures import bill_figures
from ..models import Bill
from ..ordinance import ordinance_on
from ..selectors import bill_messages, consumption_history
from .money_box import money_box
from .words import line_words

# Lines whose rate is dollars per 1,000 gallons of their quantity; the others' rate is dollars for the line.
PER_THOUSAND_GALLONS = frozenset({"consumption", "nonprofit"})


def line_quantity_rate(*, kind: str, quantity: Decimal, rate: Decimal) -> str:
    """How a line's amount comes about, in its own quantity and rate (``42,500 gal × 3.10 per 1,000``).

    A minimum's quantity is the gallons it includes and its rate the charge itself, so it reads as a flat
    charge rather than a product."""
    if kind in PER_THOUSAND_GALLONS:
        return _("%(gallons)s gal × %(rate)s per 1,000") % {"gallons": fmt_gallons(quantity), "rate": fmt_rate(rate)}
    if kind == "minimum":
        return _("flat %(rate)s") % {"rate": fmt_rate(rate)}
    return f"{quantity.normalize():,f} × {fmt_rate(rate)}"


@dataclass(frozen=True)
class LineView:
    description: str
    citation: str
    quantity_rate: str
    amount: str


def line_views(lines) -> list[LineView]:
    """A bill's lines as the paper bill and the portal print them."""
    return [LineView(description=line_words(line.description), citation=line.citation,
                     quantity_rate=line_quantity_rate(kind=line.kind, quantity=line.quantity, rate=line.rate),
                     amount=fmt_dollars(line.amount)) for line in lines]


@dataclass(frozen=True)
class ReadingView:
    label: str  # "Previous", "Current"
    meter: str
    date: str
    value: str  # with its unit
    estimated: bool


@dataclass(frozen=True)
class BillView:
    pk: int
    number: str
    language: str  # the account's: what the bill is printed in
    title: str
    created_at: datetime  # the file's date: the bill's issue time, never the clock
    account_no: str
    access_code: str
    portal_url: str
    service_address: str
    owner_name: str
    owner_address: str
    utility_name: str
    utility_phone: str
    utility_header: str
    utility_address_text: str
    bill_date: str
    due_date: str
    issued_on: str  # blank unless a corrected bill issued after its bill date
    final: bool  # an off-cycle final bill (a move-out or a sale): its issue date is no correction
    period: str
    readings: list[ReadingView]
    has_estimate: bool
    gallons: str
    lines: list[LineView]
    dense: bool
    summary: list[tuple[str, str]]  # (label, dollars), the money box's rows
    current: str
    total_due: str
    past_due: str  # blank when nothing is past due
    late_total: str
    late_on: str
    late_after: str  # the last day without a late charge: the due date unless the ordinance counts otherwise
    late_words: str
    penalty_citation: str
    chart: SafeString
    scanline: str
    message: str = ""  # the office's message for bills of this date and book (``BillMessage``)


def _reading_row(reading, label: str) -> ReadingView:
    meter = reading.meter
    return ReadingView(label=label, meter=f'{meter.serial} ({meter.size}")', date=fmt_day(reading.read_on),
                       value=f"{reading.shown} {'cu ft' if meter.unit == 'cf' else 'gal'}",
                       estimated=reading.read_type == reading.ReadType.ESTIMATED)


def _lines_of(text: str) -> str:
    return "\n".join(line.strip() for line in text.splitlines() if line.strip())


def _load(bill_ids) -> list[Bill]:
    return list(Bill.objects.filter(pk__in=list(bill_ids))
                .select_related("account__premises", "start_reading__meter", "end_reading__meter")
                .prefetch_related("lines"))


def _bill_view(bill: Bill, *, summary, scheme, utility, address_text: str, portal_url: str, history,
               message: str, district=None) -> BillView:
    account = bill.account
    # A town's bill names the district whose rules billed it, with the law that forms it.
    where = [f"{district.name} ({district.citation})"] if district else []
    header = "\n".join([*where, *([utility.chapter] if utility.chapter else []), *address_text.splitlines(),
                        *([_("Phone %(phone)s") % {"phone": utility.phone}] if utility.phone else [])])
    box = money_box(summary, late_charges=scheme.late_charges_label)
    readings = [_reading_row(r, label) for r, label in ((bill.start_reading, _("Previous")),
                                                         (bill.end_reading, _("Current"))) if r is not None]
    points = chart_points(history, through=bill.bill_date)
    chart = consumption_chart_svg(points)
    lines = line_views(bill.lines.all())
    title = (_("Final water bill %(number)s") if bill.final else _("Water bill %(number)s")) % {"number": bill.number}
    return BillView(
        pk=bill.pk, number=bill.number, language=account.language, title=title, created_at=bill.created_at,
        account_no=account.account_no, access_code=account.access_code, portal_url=portal_url,
        service_address=account.premises.service_address,
        # The addressee is the owner of record when the bill was issued, whenever it is rendered.
        owner_name=bill.recipient_name, owner_address=_lines_of(bill.recipient_address),
        utility_name=utility.name, utility_phone=utility.phone, utility_header=header,
        utility_address_text=address_text,
        bill_date=fmt_day(bill.bill_date), due_date=fmt_day(bill.due_date),
        issued_on=fmt_day(bill.issued_on) if bill.issued_on != bill.bill_date else "", final=bill.final,
        period=f"{fmt_day(bill.period_start)} – {fmt_day(bill.period_end)}",
        readings=readings, has_estimate=any(r.estimated for r in readings),
        gallons=fmt_gallons(bill.gallons),
        lines=lines,
        dense=len(lines) > 4,  # smaller type so a long bill still clears the stub
        summary=[(row.label, fmt_dollars(row.amount)) for row in box.rows],
        current=fmt_dollars(box.current), total_due=fmt_dollars(box.total_due),
        past_due=fmt_dollars(box.past_due) if box.past_due is not None else "",
        late_total=fmt_dollars(box.late_total), late_on=fmt_day(box.late_on),
        late_after=fmt_day(box.late_after),
        late_words=scheme.words or "", penalty_citation=getattr(scheme, "citation", ""),
        # The chart's SVG goes in as a data: image, so its nodes skip the HTML parser and the CSS
        # cascade (a few milliseconds a bill); it draws the same.
        chart=format_html('<img src="data:image/svg+xml;base64,{}" alt="{}">', b64encode(chart.encode()).decode(),
                          chart_words(points)),
        scanline=f"{account.account_no}  {bill.number}  {int(box.total_due * 100):010d}  "
                 f"{int(box.late_total * 100):010d}",
        message=message,
    )


def bill_views(*, bill_ids) -> list[BillView]:
    """Everything the bill template shows, for many bills in a fixed number of queries (in no set order)."""
    bills = _load(bill_ids)
    if not bills:
        return []
    latest = max(b.bill_date for b in bills)
    ordinance = ordinance_on(latest)
    utility = ordinance.utility
    # Each bill under its district's penalty (a town's; a village's bills have none and share one ordinance).
    ordinances = {code: ordinance if not code else ordinance_on(latest, code)
                  for code in {b.district_id or "" for b in bills}}
    summaries = {}
    for code, own in ordinances.items():
        summaries.update(bill_figures(bills=[b for b in bills if (b.district_id or "") == code], ordinance=own))
    town = districts(installed=utility)
    messages = bill_messages(bills)
    history = consumption_history(account_ids=sorted({b.account_id for b in bills}), through=latest)
    address_text = _lines_of(utility.office_address)
    portal_url = settings.SITE_URL.rstrip("/") + "/portal/"
    views = []
    for bill in bills:
        # Each bill in its account's language (the ordinance's citations and words stay as written).
        with customer_language(bill.account):
            views.append(_bill_view(bill, summary=summaries[bill.pk],
                                    scheme=ordinances[bill.district_id or ""].penalties, utility=utility,
                                    address_text=address_text, portal_url=portal_url,
                                    history=history.get(bill.account_id, []), message=messages.get(bill.pk, ""),
                                    district=town.get(bill.district_id or "")))
    return views
