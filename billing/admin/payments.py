"""The clerk's payment pages beside the Payment list: the counter, the receipt, the day's cash report and the
reversal of a payment. Each view checks its permission and calls one service or selector.

* ``counter/`` (``billing_payment_counter``, ``?account=ACCOUNT_NO``): look an account up (owner, service
  address, what is due now and what of it is past due), then take its payment (``payment_counter_post``);
  ``counter/lookup/?account=`` answers the same as JSON while the clerk types.
* ``<pk>/receipt.pdf`` (``billing_payment_receipt``): the receipt (``billing.documents.receipt``).
* ``cash/?on=YYYY-MM-DD`` (``billing_payment_cash``; ``&format=csv`` downloads it): ``billing.cash``.
* ``<pk>/reverse/`` (``billing_payment_reverse``): ``payment_reverse``.
"""

import io
from datetime import date

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from core.admin import (
    TEXT_WIDGET,
    CsvExportMixin,
    DayField,
    HistoryAdmin,
    ReadOnlyAdmin,
    ServiceForm,
)
from core.admin_imports import CsvImportAdminMixin
from core.commands import today
from core.csvimport import CsvRow
from core.csvout import csv_writer
from core.errors import ApplicationError
from core.money import fmt_amount, fmt_dollars

from ..cash import cash_day, cash_day_rows, counter_account, import_job_payments_posted
from ..documents.receipt import receipt_pdf
from ..models import (
    Payment,
    PaymentReversal,
)
from ..services.payments import (
    PAYMENT_FIELDS,
    PAYMENTS_LAYOUT,
    counter_reference_propose,
    payment_counter_post,
    payments_rows_post,
)
from ..services.reversals import REASONS_BY_TENDER, payment_reverse

COUNTER_TENDERS = [(t.value, t.label) for t in (Payment.Tender.CASH, Payment.Tender.CHECK, Payment.Tender.CARD)]


class CounterForm(ServiceForm):
    account_no = forms.CharField(label="Account number", max_length=20,
                                 widget=forms.TextInput(attrs={"autofocus": True, "autocomplete": "off"}))
    amount = forms.CharField(label="Amount ($)", max_length=20)
    paid_on = DayField(label="Paid on", doing="paid")
    tender = forms.ChoiceField(choices=COUNTER_TENDERS, initial=Payment.Tender.CASH)
    check_number = forms.CharField(label="Check number", max_length=40, required=False,
                                   help_text="Required for a check.")
    reference = forms.CharField(label="Reference (receipt number)", max_length=80, required=False)
    tendered = forms.CharField(label="Cash tendered ($)", max_length=20, required=False,
                               help_text="For cash: what the customer handed over; the change is shown and printed "
                                         "on the receipt.")
    submit = "Post payment"

    def __init__(self, *args, as_of: date, **kwargs):
        super().__init__(*args, **kwargs)
        self.as_of = as_of
        self.payment = None
        self.fields["reference"].help_text = (f"Leave blank for the next counter number "
                                              f"({counter_reference_propose(on=as_of)}).")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        self.payment = payment_counter_post(
            account_no=d["account_no"], amount=d["amount"], paid_on=d["paid_on"].isoformat(), tender=d["tender"],
            check_number=d.get("check_number") or "", reference=d.get("reference") or "", as_of=self.as_of,
            actor=actor, tendered=d.get("tendered") or "")
        said = (f"Posted {fmt_dollars(self.payment.amount.amount)} to account {self.payment.account.account_no}, "
                f"receipt {self.payment.reference}")
        if self.payment.tendered is not None:
            said += f"; tendered {fmt_dollars(self.payment.tendered)}, change {fmt_dollars(self.payment.change)}"
        return said


class ReverseForm(ServiceForm):
    reason = forms.ChoiceField(choices=PaymentReversal.Reason.choices)
    reversed_on = DayField(label="Reversed on", doing="reversed")
    note = forms.CharField(widget=TEXT_WIDGET, help_text="Internal: what happened (the bank's notice, who noticed).")
    transfer_to_account_no = forms.CharField(
        label="Transfer to account", max_length=20, required=False,
        help_text="For a payment posted to the wrong account: the account it belongs to. The payment is posted "
                  "there with the day it was paid.")
    whole_fields = ("payment",)
    submit = "Reverse the payment"

    def __init__(self, *args, payment: Payment, **kwargs):
        super().__init__(*args, **kwargs)
        self.payment = payment
        # Only what can happen to a payment of its tender: cash is never "returned".
        self.fields["reason"].choices = [(r.value, r.label) for r in REASONS_BY_TENDER[payment.tender]]

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        reversal = payment_reverse(payment=self.payment, reversed_on=d["reversed_on"], reason=d["reason"],
                                   note=d["note"], actor=actor,
                                   transfer_to_account_no=d.get("transfer_to_account_no") or None)
        said = f"Payment {self.payment.reference} reversed on {reversal.reversed_on.isoformat()}"
        if reversal.transferred_to_id:
            moved = reversal.transferred_to
            said += f"; posted to account {moved.account.account_no} as {moved.reference}"
        if reversal.fee is not None:
            said += (f"; the returned-payment fee of {fmt_dollars(reversal.fee.amount.amount)} "
                     f"({reversal.fee.citation}) goes on the next bill")
        return said


class CashForm(forms.Form):
    on = DayField(label="Day", doing="reported")


class PaymentOfficeMixin:
    """The counter, receipt, cash report and reversal pages of ``PaymentAdmin``."""

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("counter/", view(self.counter_view), name="billing_payment_counter"),
            path("counter/lookup/", view(self.counter_lookup_view), name="billing_payment_counter_lookup"),
            path("cash/", view(self.cash_view), name="billing_payment_cash"),
            path("<int:pk>/receipt.pdf", view(self.receipt_view), name="billing_payment_receipt"),
            path("<int:pk>/reverse/", view(self.reverse_view), name="billing_payment_reverse"),
            *super().get_urls(),
        ]

    def _context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def counter_stop(self, account_no: str, *, as_of) -> dict | None:
        """What stops a shut-off on the account, for the counter: ``{"case", "amount"}`` (the case's number and what
        of it is still unpaid), or None. Billing knows no cases; the composed admin (``waterbilling.admin``) says."""
        return None

    # --- the counter ---

    def counter_view(self, request):
        if not request.user.has_perm("billing.add_payment"):
            raise PermissionDenied
        as_of = today()
        if request.method == "POST":
            form = CounterForm(request.POST, as_of=as_of)
            if form.is_valid() and (said := form.run(actor=request.user)):
                # The page it returns to shows the posting again with its "Print receipt" button.
                self.message_user(request, f"{said}.", messages.SUCCESS)
                return HttpResponseRedirect(f'{reverse("admin:billing_payment_counter")}?posted={form.payment.pk}')
            account_no = request.POST.get("account_no", "")
        else:
            account_no = request.GET.get("account", "")
            form = CounterForm(initial={"account_no": account_no, "paid_on": as_of}, as_of=as_of)
        looked_up = counter_account(account_no=account_no, as_of=as_of) if account_no.strip() else None
        posted = None
        if request.method == "GET" and (posted_id := request.GET.get("posted", "")).isdigit():
            posted = Payment.objects.filter(pk=int(posted_id)).select_related("account").first()
        stop = self.counter_stop(looked_up.account_no, as_of=as_of) if looked_up else None
        return TemplateResponse(request, "admin/billing/payment/counter.html", self._context(
            request, title="Payment counter", form=form, account=looked_up, account_no=account_no.strip(),
            posted=posted, as_of=as_of, stop=stop))

    def counter_lookup_view(self, request):
        if not request.user.has_perm("billing.add_payment"):
            raise PermissionDenied
        found = counter_account(account_no=request.GET.get("account", ""), as_of=today())
        if found is None:
            return JsonResponse({"found": False}, status=404)
        return JsonResponse({"found": True, "account_no": found.account_no, "name": found.name,
                             "service_address": found.service_address, "amount_due": fmt_amount(found.amount_due),
                             "past_due": fmt_amount(found.past_due),
                             "due_date": found.due_date.isoformat() if found.due_date else None,
                             "stop": self.counter_stop(found.account_no, as_of=today())})

    # --- receipt ---

    def receipt_view(self, request, pk: int):
        if not request.user.has_perm("billing.view_payment"):
            raise PermissionDenied
        payment = get_object_or_404(Payment.objects.select_related("account__owner", "account__premises",
                                                                   "entered_by"), pk=pk)
        # The counter's receipt printer takes the 80 mm roll; "?size=letter" prints it on a page.
        response = HttpResponse(receipt_pdf(payment, narrow=request.GET.get("size") != "letter"),
                                content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="receipt-{payment.pk}.pdf"'
        return response

    # --- the day's cash report ---

    def cash_view(self, request):
        if not request.user.has_perm("billing.view_payment"):
            raise PermissionDenied
        form = CashForm(request.GET if "on" in request.GET else None, initial={"on": today()})
        day = None
        if not form.is_bound:
            day = cash_day(on=today())
        elif form.is_valid():
            day = cash_day(on=form.cleaned_data["on"])
        if day is not None and request.GET.get("format") == "csv":
            out = io.StringIO()
            csv_writer(out).writerows(cash_day_rows(day))
            response = HttpResponse(out.getvalue(), content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="cash-{day.on.isoformat()}.csv"'
            return response
        return TemplateResponse(request, "admin/billing/payment/cash.html", self._context(
            request, title="Cash report", form=form, day=day))

    # --- reversing a payment ---

    def reverse_view(self, request, pk: int):
        if not request.user.has_perm("billing.change_payment"):
            raise PermissionDenied
        payment = get_object_or_404(Payment.objects.select_related("account__owner"), pk=pk)
        if request.method == "POST":
            form = ReverseForm(request.POST, payment=payment)
            if form.is_valid() and (said := form.run(actor=request.user)):
                self.message_user(request, said, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:billing_payment_change", args=[payment.pk]))
        else:
            form = ReverseForm(initial={"reversed_on": today()}, payment=payment)
        reversal = PaymentReversal.objects.filter(payment=payment).first()
        return TemplateResponse(request, "admin/billing/payment/reverse.html", self._context(
            request, title=f"Reverse payment {payment.reference}", form=form, payment=payment, reversal=reversal,
            original=payment))

    def import_job_view(self, request, job_id: int):
        """A payment file imported by a worker: its page, and the dollars it posted (the job keeps only counts)."""
        response = super().import_job_view(request, job_id)
        job = getattr(response, "context_data", {}).get("job")
        if job is not None and job.status == job.Status.DONE:
            self.message_user(request, f"Payments {import_job_payments_posted(job=job)}.", messages.INFO)
        return response

    def change_view(self, request, object_id, form_url="", extra_context=None):
        extra = dict(extra_context or {})
        if str(object_id).isdigit():
            extra["reversal"] = PaymentReversal.objects.filter(payment_id=int(object_id)).first()
            extra["transferred_from"] = PaymentReversal.objects.filter(transferred_to_id=int(object_id)).first()
            extra["may_reverse"] = request.user.has_perm("billing.change_payment")
        return super().change_view(request, object_id, form_url, extra_context=extra)


# --- payments ---------------------------------------------------------------------------------------

class PaymentRowForm(forms.Form):
    account_no = forms.CharField(required=False, max_length=20)
    amount = forms.CharField(required=False, max_length=20)
    paid_on = forms.CharField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    reference = forms.CharField(required=False, max_length=80)
    tender = forms.ChoiceField(required=False, choices=COUNTER_TENDERS, initial=Payment.Tender.CHECK)
    check_number = forms.CharField(required=False, max_length=40, widget=forms.TextInput(attrs={"size": 8}))

    COLUMNS = {"account_no": "Account number", "amount": "Amount ($)", "paid_on": "Paid on", "reference": "Reference",
               "tender": "Tender", "check_number": "Check number"}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        # A row of the batch's table: each field says its column and row (the table's headings label nothing).
        row = (self.prefix or "form-0").rsplit("-", 1)[-1]
        row = int(row) + 1 if row.isdigit() else 1
        for name, field in self.fields.items():
            field.widget.attrs["aria-label"] = f"{self.COLUMNS[name]}, row {row}"

    def is_blank(self):
        return not any((self.cleaned_data or {}).get(k) for k in ("account_no", "amount", "reference"))


PaymentRowFormSet = forms.formset_factory(PaymentRowForm, extra=10)


@admin.register(Payment)
class PaymentAdmin(PaymentOfficeMixin, CsvExportMixin, CsvImportAdminMixin, HistoryAdmin):
    list_display = ("reference", "account", "amount", "tender", "check_number", "paid_on", "source", "entered_by",
                    "reversed")
    list_filter = ("source", "tender", "paid_on")
    search_fields = ("reference", "check_number", "account__account_no", "account__owner__name")
    date_hierarchy = "paid_on"
    readonly_fields = ("account", "amount", "paid_on", "reference", "tender", "check_number", "source", "entered_by",
                       "created_at")
    change_list_template = "admin/billing/payment/change_list.html"
    change_form_template = "admin/billing/payment/change_form.html"
    importer = "billing.services.payments.payments_import"
    import_permission = "billing.add_payment"
    import_layout = PAYMENTS_LAYOUT
    import_title = "Import payments"
    import_noun = "payments"
    import_help = ("A reference already posted for the same payment is skipped, never posted twice; references "
                   "compare without regard to case.")

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("account", "entered_by", "reversal")

    @admin.display(description="reversed")
    def reversed(self, obj):
        reversal = getattr(obj, "reversal", None)
        return f"{reversal.reversed_on.isoformat()} ({reversal.reason})" if reversal else ""

    def add_view(self, request, form_url="", extra_context=None):
        return HttpResponseRedirect(reverse("admin:billing_payment_batch"))

    def get_urls(self):
        return [path("batch/", self.admin_site.admin_view(self.batch_view), name="billing_payment_batch"),
                *super().get_urls()]

    def batch_view(self, request):
        if not request.user.has_perm("billing.add_payment"):
            raise PermissionDenied
        errors = []
        initial = [{"paid_on": today().isoformat()}] * 10
        formset = PaymentRowFormSet(request.POST or None, initial=None if request.POST else initial)
        if request.method == "POST" and formset.is_valid():
            rows = [CsvRow(line=i + 1, values={k: (f.cleaned_data.get(k) or "").strip() for k in PAYMENT_FIELDS})
                    for i, f in enumerate(formset.forms) if f.has_changed() and not f.is_blank()]
            try:
                result = payments_rows_post(rows=rows, as_of=today(), actor=request.user, source="counter")
            except ApplicationError as exc:
                errors = exc.errors
            else:
                by_tender = "; ".join(f"{Payment.Tender(t).label.lower()}: {count} for {fmt_dollars(total)}"
                                      for t, count, total in result.by_tender) if len(result.by_tender) > 1 else ""
                self.message_user(request, f"Posted {result.created} payments totalling {fmt_dollars(result.total)}"
                                           + (f" ({by_tender})" if by_tender else "")
                                           + (f"; {result.skipped} already posted, skipped" if result.skipped else ""),
                                  messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:billing_payment_changelist"))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "formset": formset,
                   "errors": errors, "title": "Post a batch of payments"}
        return TemplateResponse(request, "admin/billing/payment/batch.html", context)


class LedgerEntryAdmin(CsvExportMixin, ReadOnlyAdmin):
    """The ledger, read-only (registered with the penalty pages added: penalties.py)."""

    list_display = ("posted_on", "account", "kind", "amount", "bill", "citation", "description")
    list_filter = ("kind", "posted_on")
    search_fields = ("account__account_no", "bill__number", "description")
    list_select_related = ("account", "bill")
    date_hierarchy = "posted_on"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_ledgerentry")
