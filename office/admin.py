"""The back office in the admin: refunds (asked for by a clerk, decided by a supervisor, drawn by accounts payable
from the check register), transfers between an owner's accounts, one-off invoices with their PDF, and the day's
close with the general ledger journal."""

import io

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from core.admin import ApprovalPagesMixin, ServicePagesAdmin
from core.clock import today
from core.csvout import csv_writer
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars

from .documents import invoice_pdf
from .forms import (
    DayCloseForm,
    DayReopenDecisionForm,
    DayReopenForm,
    InvoiceForm,
    RangeForm,
    RefundDecisionForm,
    RefundForm,
    TransferForm,
)
from .journal import journal_entries, journal_rows
from .models import DayClose, DayReopen, Invoice, Refund, Transfer
from .services import APPROVE_REFUND, account_credit, check_register_rows, drawer_expected


def _csv(rows, filename: str) -> HttpResponse:
    out = io.StringIO()
    csv_writer(out).writerows(rows)
    response = HttpResponse(out.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


@admin.register(Refund)
class RefundAdmin(ApprovalPagesMixin, ServicePagesAdmin):
    form_class = RefundForm
    intro = ("A credit balance paid back by check: a clerk asks, a supervisor (not the same person) approves or "
             "refuses. The approval posts the refund on the account and puts the check on the register accounts "
             "payable draws from.")
    list_display = ("number", "account", "amount", "payee_name", "status", "requested_on", "requested_by",
                    "refunded_on", "decided_by")
    list_filter = ("status", ("came_back_on", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "payee_name")
    list_select_related = ("account", "requested_by", "decided_by")
    readonly_fields = ("number", "account", "amount", "payee_name", "payee_address", "reason", "status",
                       "requested_on", "requested_by", "decided_by", "decided_at", "decision_note", "refunded_on",
                       "came_back", "came_back_on")
    fields = readonly_fields

    @admin.display(description="Refund")
    def number(self, obj):
        return obj.number

    def add_facts(self, request, form):
        from accounts.selectors import account_find

        account = account_find(form["account_no"].value() or "")
        if account is None:
            return ()
        return [("Account", f"{account.account_no}, {account.owner.name}"),
                *_credit_facts(account_credit(account, as_of=today()), credit_label="Credit today")]

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/decide/", view(self.decide_view), name="office_refund_decide"),
                path("check-register/", view(self.register_view), name="office_refund_register"),
                *super().get_urls()]

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        if obj.status == Refund.Status.PENDING and request.user.has_perm(APPROVE_REFUND):
            return [("Approve or refuse", reverse("admin:office_refund_decide", args=[obj.pk]))]
        return []

    def decide_view(self, request, pk):
        if not request.user.has_perm(APPROVE_REFUND):
            raise PermissionDenied
        refund = get_object_or_404(Refund.objects.select_related("account__owner"), pk=pk)
        form = RefundDecisionForm(request.POST or None, refund=refund)
        credit = account_credit(refund.account, as_of=today())
        facts = [("Refund", refund.number), ("Account", f"{refund.account.account_no}, {refund.account.owner.name}"),
                 ("Amount", fmt_dollars(refund.amount.amount)),
                 *_credit_facts(credit, credit_label="The account's credit today"),
                 ("Check to", f"{refund.payee_name}, {' '.join(refund.payee_address.split())}"),
                 ("Reason", refund.reason), ("Asked by", str(refund.requested_by or "")),
                 ("Asked on", str(refund.requested_on))]
        return self.run_form(request, form, done_url=self.object_url(refund), obj=refund, facts=facts,
                             title=f"Approve or refuse refund {refund.number}")

    def register_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RangeForm(request.GET or None)
        if form.is_bound and form.is_valid():
            d = form.cleaned_data
            try:
                rows = check_register_rows(start=d["start"], end=d["end"])
            except ApplicationError as exc:
                form.add_error("end", exc.errors[0].message)
            else:
                return _csv(rows, f"check-register-{d['start']}-{d['end']}.csv")
        form.submit = "Download the check register (CSV)"
        page = self.form_page(request, form, title="Check register for accounts payable")
        page.context_data["method"] = "get"
        return page

    def header_links(self, request) -> list[tuple[str, str]]:
        return [("Check register (CSV)", reverse("admin:office_refund_register"))]


def _books_of(day) -> str:
    """The day's cash report and journal in a line, with links: what closing the day fixes."""
    entries = journal_entries(start=day, end=day)
    debits = sum((entry.debits for entry in entries), ZERO)
    cash = reverse("admin:billing_payment_cash") + f"?on={day.isoformat()}"
    journal = reverse("admin:office_dayclose_journal") + f"?start={day.isoformat()}&end={day.isoformat()}"
    return format_html('<a href="{}">Cash report</a> · <a href="{}">Journal</a>: {} journal entr{}, {} debited and '
                       "credited", cash, journal, len(entries), "y" if len(entries) == 1 else "ies",
                       fmt_dollars(debits))


def _credit_facts(credit, *, credit_label: str) -> list[tuple[str, str]]:
    """The credit, and what of it is cleared money with the payments that hold the rest (``billing.clearing``)."""
    facts = [(credit_label, fmt_dollars(credit.credit)), ("Of it, cleared and refundable", fmt_dollars(credit.amount))]
    if credit.words:
        facts.append(("Not yet cleared", credit.words))
    return facts


@admin.register(Transfer)
class TransferAdmin(ServicePagesAdmin):
    form_class = TransferForm
    intro = ("A final balance, or a credit left after a final bill, moved from a closed account to the same owner's "
             "other account: a memo on each, naming the other. The closed account ends at $0.00.")
    list_display = ("transferred_on", "what", "amount_text", "from_account", "to_account", "created_by")
    search_fields = ("from_account__account_no", "to_account__account_no")
    list_select_related = ("from_account", "to_account", "created_by")
    readonly_fields = ("from_account", "to_account", "what", "amount_text", "transferred_on", "reason", "from_memo",
                       "to_memo", "created_by", "created_at")
    fields = readonly_fields

    @admin.display(description="Amount")
    def amount_text(self, obj):
        return fmt_dollars(abs(obj.amount))

    def add_initial(self, request) -> dict:
        return {"from_account_no": request.GET.get("account", "")}


@admin.register(Invoice)
class InvoiceAdmin(ServicePagesAdmin):
    form_class = InvoiceForm
    intro = ("A fee from the fee schedule billed on its own invoice with its own due date, instead of on the next "
             "water bill. It is owed from the invoice's date; the next water bill shows it with the balance until "
             "it is paid.")
    list_display = ("number", "account", "description", "amount", "invoiced_on", "due_on", "pdf")
    search_fields = ("account__account_no", "description")
    list_select_related = ("account",)
    readonly_fields = ("number", "account", "description", "citation", "amount", "invoiced_on", "due_on",
                       "recipient_name", "recipient_address", "note", "created_by", "pdf")
    fields = readonly_fields

    @admin.display(description="Invoice")
    def number(self, obj):
        return obj.number

    @admin.display(description="PDF")
    def pdf(self, obj):
        return format_html('<a href="{}">Invoice {} (PDF)</a>', reverse("admin:office_invoice_pdf", args=[obj.pk]),
                           obj.number)

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/invoice.pdf", view(self.pdf_view), name="office_invoice_pdf"), *super().get_urls()]

    def pdf_view(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        invoice = get_object_or_404(Invoice.objects.select_related("account__premises"), pk=pk)
        response = HttpResponse(invoice_pdf(invoice), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="invoice-{invoice.number}.pdf"'
        return response

    def added_url(self, form) -> str:
        return reverse("admin:office_invoice_change", args=[form.invoice.pk])


@admin.register(DayClose)
class DayCloseAdmin(ServicePagesAdmin):
    form_class = DayCloseForm
    intro = ("Close the day: count the counter's drawer against the day's cash report (the cash and checks taken at "
             "the counter, less those handed back), and the day's books go to the general ledger journal. An over or "
             "short is kept with its note. Once closed nothing dated the day changes its books: a late entry (a "
             "payment keyed late, a run issued for an earlier bill date, a reversal) reaches the books on the next "
             "open day, its own date shown. A supervisor may reopen a closed day at a clerk's request.")
    list_display = ("day", "state", "expected_total", "counted_total", "over_short_text", "closed_by")
    readonly_fields = ("day", "state", "expected_cash", "expected_checks", "counted_cash", "counted_checks",
                       "over_short_text", "note", "closed_by", "closed_at", "day_books")
    fields = readonly_fields

    @admin.display(description="State")
    def state(self, obj):
        return "Closed" if obj.is_closed else f"Reopened {obj.reopened_at:%b %-d, %Y %-I:%M %p}"

    @admin.display(description="The day's books")
    def day_books(self, obj):
        return _books_of(obj.day)

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        buttons = []
        pending = obj.reopenings.filter(status=DayReopen.Status.PENDING).first()
        if pending is not None and request.user.has_perm(DayReopen.approval.permission):
            buttons.append(("Approve or refuse reopening", reverse("admin:office_dayreopen_decide",
                                                                   args=[pending.pk])))
        elif obj.is_closed and pending is None and request.user.has_perm("office.add_dayreopen"):
            buttons.append(("Ask to reopen this day",
                            f'{reverse("admin:office_dayreopen_add")}?day={obj.day.isoformat()}'))
        return buttons

    @admin.display(description="Drawer should hold")
    def expected_total(self, obj):
        return fmt_dollars(obj.expected_cash + obj.expected_checks)

    @admin.display(description="Counted")
    def counted_total(self, obj):
        return fmt_dollars(obj.counted_cash + obj.counted_checks)

    @admin.display(description="Over (short)")
    def over_short_text(self, obj):
        off = obj.over_short
        return "Balanced" if not off else f"{'Over' if off > 0 else 'Short'} {fmt_dollars(abs(off))}"

    def add_initial(self, request) -> dict:
        return {"day": request.GET.get("day") or today()}

    def add_facts(self, request, form):
        day = form["day"].value()
        try:
            expected = drawer_expected(on=form.fields["day"].to_python(day) if day else today())
        except Exception:  # a day typed wrong: the form says so under its field
            return ()
        payments = f"{expected.count} payment{'' if expected.count == 1 else 's'} at the counter"
        return [("The drawer should hold",
                 f"{fmt_dollars(expected.cash)} cash and {fmt_dollars(expected.checks)} in checks ({payments})"),
                ("The day's books", _books_of(expected.day))]

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("journal/", view(self.journal_view), name="office_dayclose_journal"), *super().get_urls()]

    def journal_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = RangeForm(request.GET or {"start": today(), "end": today()})
        entries, start, end = [], None, None
        if form.is_valid():
            start, end = form.cleaned_data["start"], form.cleaned_data["end"]
            try:
                entries = journal_entries(start=start, end=end)
            except ApplicationError as exc:
                form.add_error("end", exc.errors[0].message)
            else:
                if request.GET.get("format") == "csv":
                    return _csv(journal_rows(entries), f"journal-{start}-{end}.csv")
        return TemplateResponse(request, "admin/office/journal.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": "General ledger journal",
            "form": form, "entries": entries, "start": start, "end": end}, status=400 if form.errors else 200)

    def header_links(self, request) -> list[tuple[str, str]]:
        return [("General ledger journal", reverse("admin:office_dayclose_journal"))]


@admin.register(DayReopen)
class DayReopenAdmin(ApprovalPagesMixin, ServicePagesAdmin):
    form_class = DayReopenForm
    intro = ("Ask to open a closed day again, saying why: a supervisor who is not you approves or refuses. Approved, "
             "entries dated the day reach its books again until the day is closed again.")
    list_display = ("day", "reason", "status", "requested_by", "decided_by", "decided_at")
    list_filter = ("status",)
    list_select_related = ("close", "requested_by", "decided_by")
    readonly_fields = ("day", "reason", "status", "requested_by", "requested_at", "decided_by", "decided_at",
                       "decision_note")
    fields = readonly_fields

    @admin.display(description="Day")
    def day(self, obj):
        return obj.close.day

    def add_initial(self, request) -> dict:
        return {"day": request.GET.get("day") or ""}

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/decide/", view(self.decide_view), name="office_dayreopen_decide"),
                *super().get_urls()]

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        if obj.status == DayReopen.Status.PENDING and request.user.has_perm(DayReopen.approval.permission):
            return [("Approve or refuse", reverse("admin:office_dayreopen_decide", args=[obj.pk]))]
        return []

    def decide_view(self, request, pk):
        if not request.user.has_perm(DayReopen.approval.permission):
            raise PermissionDenied
        reopen = get_object_or_404(DayReopen.objects.select_related("close", "requested_by"), pk=pk)
        form = DayReopenDecisionForm(request.POST or None, reopen=reopen)
        facts = [("Day", str(reopen.close.day)), ("Closed by", str(reopen.close.closed_by or "")),
                 ("The day's books", _books_of(reopen.close.day)), ("Reason", reopen.reason),
                 ("Asked by", str(reopen.requested_by or ""))]
        return self.run_form(request, form, done_url=self.object_url(reopen), obj=reopen, facts=facts,
                             title=f"Approve or refuse reopening {reopen.close.day}")
