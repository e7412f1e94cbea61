"""The Reports page of the admin: a form per report (its dates and a format) that shows the report as a table
on the page or downloads it as CSV or PDF — the same reports as ``manage.py report``.

Reports have no model, so there is no ModelAdmin to hang the page on. Rather than invent one (an unmanaged
model would bring a migration, a content type and permissions for a table that does not exist), this
module adds one URL to the admin site the way ``admin.site.register`` adds a model's:
``core.admin.admin_page_register`` wraps the site's ``get_urls`` when the admin discovers this module, before
the URLconf reads the site's URLs. The page sits under the admin's login (``admin_view``) at ``admin:reports``;
staff who may run the reports (``reports.run_reportfile``: the clerk, the supervisor, the treasurer) may read it.
"""

import json
from dataclasses import dataclass, replace

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import escape
from django.utils.safestring import mark_safe

from core.admin import admin_page_register
from core.clock import today

from . import tasks
from .catalog import REPORTS
from .files import report_file_request, report_files_wanted
from .filters import ReportFilter, view_filtered
from .forms import ReportForm
from .models import ReportFile
from .render import as_csv, as_json, as_pdf, printed, report_view, subtitle

PERMISSION = "reports.run_reportfile"


SAVED = "report_settings"  # the session's last settings of each report, to open its form with


def reports_view(request):
    """The reports: the one chosen shown at the top, under its form (dates, filters, format); the others' forms
    below, each opening with the settings it was last run with."""
    if not request.user.has_perm(PERMISSION):
        raise PermissionDenied
    chosen = request.GET.get("report")
    saved = request.session.get(SAVED, {})
    forms_ = {name: ReportForm(request.GET if name == chosen else None, name=name, auto_id=f"id_{name}_%s",
                               initial=saved.get(name))
              for name in REPORTS}
    shown = None
    form = forms_.get(chosen)
    if form is not None and form.is_valid() and form.cleaned_data["format"] in ("csv", "pdf") \
            and report_files_wanted():
        asked = _report_file_request(request, form)
        if asked is not None:
            return asked
    elif form is not None and form.is_valid():
        report = form.build()
        if report is not None:
            filters = form.chosen()
            view = view_filtered(report_view(report), filters)
            fmt = form.cleaned_data["format"]
            request.session[SAVED] = {**saved, chosen: {
                key: value for key, value in request.GET.items() if key in form.fields and key not in (
                    "report", "format", "date", "bill_date", "levy_date", "start", "end")}}
            if fmt in ("csv", "pdf"):
                return report_download(view, fmt)
            page = _page_number(request.GET.get("page"))
            shown = {"view": view, "subtitle": subtitle(view), "filters": filters,
                     "tables": [_on_page(t, page=page, request=request,
                                         sorting=filters if t is view.main and not filters.totals_only else None)
                                for t in view.tables]}
    files = list(ReportFile.objects.filter(created_by=request.user)[:RECENT_FILES])
    return TemplateResponse(request, "admin/reports/reports.html", {
        **admin.site.each_context(request), "title": shown["view"].title if shown else "Reports",
        "report_files": files, "report_files_waiting": any(f.status in WAITING for f in files),
        "chosen_form": form if shown or (form is not None and form.errors) else None,
        "other_forms": [f for f in forms_.values() if f is not form or not (shown or form.errors)],
        "chosen": chosen, "shown": shown})


RECENT_FILES = 10  # the user's report files listed on the page, newest first
WAITING = (ReportFile.Status.QUEUED, ReportFile.Status.MAKING)


def _report_file_request(request, form):
    """A big village's CSV or PDF: checked as the form, then made by a worker; the page lists it until ready."""
    if not form.check():  # the dates and the report's own rules, now: a refusal shows under its field at once
        return None
    data = form.cleaned_data
    dates = ", ".join(f"{form.fields[key].label.lower()} {value:%b %-d, %Y}" for key, value in data.items()
                      if key in ReportForm.DATES and value)
    title = f"{form.kind.title}" + (f", {dates}" if dates else f", as of {today():%b %-d, %Y}")
    report_file_request(name=form.kind.name, title=title, params=form.params(), fmt=data["format"],
                        actor=request.user, task=tasks.report_file_make)
    messages.success(request, f"{title} ({data['format'].upper()}) is being made; it is listed under Report files, "
                              "ready to download when done.")
    return HttpResponseRedirect(reverse("admin:reports") + "#report-files")


def report_file_download(request, pk: int):
    if not request.user.has_perm(PERMISSION):
        raise PermissionDenied
    report_file = get_object_or_404(ReportFile, pk=pk, status=ReportFile.Status.DONE)
    response = FileResponse(report_file.file.open("rb"), content_type=DOWNLOADS[report_file.format])
    response["Content-Disposition"] = (f'attachment; filename="{report_file.name}-'
                                       f'{report_file.created_at:%Y-%m-%d}-{report_file.pk}.{report_file.format}"')
    return response


# Rows of a table shown on one page: a clerk reads a few hundred on screen; the CSV and the PDF have every row,
# and the totals row is always the whole report's.
PAGE_ROWS = 500


@dataclass(frozen=True)
class PageTable:
    title: str
    headers: list
    body: str  # the rows' HTML, made here: a template loop over thousands of cells is most of the page's time
    rows: int
    total: list
    first: int = 1  # the rows shown, counted from 1, of ``count``
    last: int = 0
    count: int = 0
    previous_url: str = ""
    next_url: str = ""


def _page_number(text: str | None) -> int:
    return int(text) if text and text.isdigit() and int(text) > 0 else 1


@dataclass(frozen=True)
class Header:
    text: str
    numeric: bool
    sort_url: str = ""
    aria_sort: str = ""  # "ascending" / "descending" on the column the rows are ordered by


def _headers(table, shown, *, sorting: ReportFilter | None, request) -> list:
    """The header cells; on the main table each is a link that orders the rows by it (again: the other way)."""
    if sorting is None:
        return [Header(cell.text, cell.numeric) for cell in shown.headers]
    headers = []
    for column, cell in zip(table.columns, shown.headers, strict=True):
        on = sorting.sort == column.key
        query = request.GET.copy()
        query["sort"] = column.key
        # Money and counts open largest first; words, A to Z.
        query["dir"] = ("asc" if sorting.descending else "desc") if on else (
            "desc" if cell.numeric else "asc")
        query.pop("page", None)
        headers.append(Header(cell.text, cell.numeric, sort_url=f"?{query.urlencode()}#report-result",
                              aria_sort=("descending" if sorting.descending else "ascending") if on else ""))
    return headers


def _on_page(table, *, page: int, request, sorting: ReportFilter | None = None) -> PageTable:
    """One page of a report's table (``PAGE_ROWS`` rows), formatted: only the rows shown are formatted."""
    count = len(table.rows)
    pages = max(1, -(-count // PAGE_ROWS))
    page = min(page, pages)
    start = (page - 1) * PAGE_ROWS
    shown = printed(replace(table, rows=table.rows[start:start + PAGE_ROWS]))
    numeric, plain = '<td class="r">', "<td>"
    body = "".join("<tr>" + "".join(f"{numeric if c.numeric else plain}{escape(c.text)}</td>" for c in row) + "</tr>\n"
                   for row in shown.rows)

    def url(number: int) -> str:
        query = request.GET.copy()
        query["page"] = str(number)
        return f"?{query.urlencode()}#report-result"

    return PageTable(title=shown.title, headers=_headers(table, shown, sorting=sorting, request=request),
                     body=mark_safe(body), rows=len(shown.rows),
                     total=shown.total, first=start + 1 if count else 0, last=start + len(shown.rows), count=count,
                     previous_url=url(page - 1) if page > 1 else "", next_url=url(page + 1) if page < pages else "")


DOWNLOADS = {"csv": "text/csv; charset=utf-8", "json": "application/json", "pdf": "application/pdf"}


def report_download(view, fmt: str) -> HttpResponse:
    """A report view as a file to download: CSV, JSON or PDF (``DOWNLOADS``)."""
    if fmt == "pdf":
        data = as_pdf(view)
    elif fmt == "json":
        data = json.dumps(as_json(view), indent=2).encode("utf-8")
    else:
        data = as_csv(view).encode("utf-8")
    response = HttpResponse(data, content_type=DOWNLOADS[fmt])
    name = f"{view.name}-{view.as_of.isoformat()}.{fmt}"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    return response


admin_page_register(admin.site, "reports/", reports_view, "reports")
admin_page_register(admin.site, "reports/files/<int:pk>/", report_file_download, "reports_file")
