"""The billing office in the admin: runs and their exceptions, bills (read-only), payments, corrections.

Issued bills never change here: the bill page is read-only and offers "Void" and credit/debit memos,
which are new records with a reason and the clerk. Writes go through the services, as everywhere.
"""

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html, format_html_join

from accounts.models import Account
from core.admin import CsvExportMixin, HistoryAdmin, ReadOnlyAdmin, ReadOnlyInline, StatusChangeInline
from core.admin_imports import CsvImportAdminMixin
from core.commands import today
from core.csvimport import CsvRow, dollars_at_most
from core.errors import ApplicationError
from core.money import ADJUSTMENT_MAX, fmt_dollars, fmt_gallons, fmt_rate

from .admin_account import (
    AccountBillingAdmin,  # noqa: F401  (the account page's part: waterbilling/admin.py)
    BillNumberField,
    bill_pdf_view,
)
from .admin_final import final_bill_urls
from .admin_payments import COUNTER_TENDERS, PaymentOfficeMixin
from .admin_rates import RateScheduleOwrsMixin
from .admin_runs import BillingExceptionPagesMixin, BillingRunPagesMixin
from .fees import fee_rule, fees_in_force
from .models import (
    Adjustment,
    Bill,
    BillingException,
    BillingRun,
    BillLine,
    BillMessage,
    Deposit,
    Fee,
    LedgerEntry,
    Payment,
    PendingCharge,
    RateSchedule,
    Utility,
)
from .rate_tables import fee_tables, schedule_summary, schedule_tables
from .runs.exceptions import billing_exception_release
from .runs.lifecycle import billing_run_retry
from .services.adjustments import adjustment_create, bill_void
from .services.charges import charge_cancel, charge_create, charge_figures_parse
from .services.deposits import deposit_receive, deposit_refund
from .services.payments import PAYMENT_FIELDS, PAYMENTS_LAYOUT, payments_rows_post

# --- ordinance ------------------------------------------------------------------------------------

@admin.register(Utility)
class UtilityAdmin(admin.ModelAdmin):
    list_display = ("name", "preset", "demo_site", "calendar_scheme", "penalty_scheme")
    # Set by `setup_utility PRESET --demo N`, not by a click: a real site billed on sample rates by mistake
    # is worse than a trip to the command line.
    exclude = ("is_demo_site", "payment_order")
    readonly_fields = ("preset", "demo_site", "payment_policy", "text_discrepancies")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.display(description="Demo/training site")
    def demo_site(self, obj):
        if obj.is_demo_site:
            return "Yes: billing on the preset's sample rates is allowed (set by setup_utility --demo)."
        return ("No: a real site. Billing refuses while the rate schedule in force is the preset's sample one, "
                "unless a run accepts the sample rates (recorded on the run); setup_utility "
                f"{obj.preset} --demo N marks a demo/training site.")

    @admin.display(description="What a payment pays first")
    def payment_policy(self, obj):
        return format_html(
            "<p><strong>{}</strong></p><p>Office policy, not in the ordinance: "
            "penalties are computed on unpaid principal, and paying principal first keeps an unpaid penalty "
            "from turning into principal that draws more penalties. Set in the preset file "
            "(<code>[policy] payment_order</code>) and installed with <code>setup_utility {}</code>.</p>",
            obj.get_payment_order_display(), obj.preset)

    @admin.display(description="where the preset departs from the printed text")
    def text_discrepancies(self, obj):
        return format_html_join("\n", "<p><strong>{}</strong>: {}</p>",
                                ((n.get("citation", ""), n.get("text", "")) for n in obj.notes)) or "—"


def _rule_tables(tables) -> str:
    return render_to_string("admin/billing/_rule_tables.html", {"tables": tables})


@admin.register(RateSchedule)
class RateScheduleAdmin(RateScheduleOwrsMixin, HistoryAdmin):
    """A schedule shown as the ordinance's tables; the rules as stored (JSON) only under "Advanced", and
    only while the schedule has rated no bill. A new schedule can come from an OWRS rate file ("Import an
    OWRS rate file" on the list), and each schedule downloads as one ("Download as OWRS")."""

    list_display = ("effective_on", "citation", "summary", "is_sample", "bills_using")
    readonly_fields = ("rates", "bills_using")
    change_list_template = "admin/billing/rateschedule/change_list.html"  # "Import an OWRS rate file"
    change_form_template = "admin/billing/rateschedule/change_form.html"  # "Download as OWRS"

    @admin.display(description="bills rated with it")
    def bills_using(self, obj):
        return obj.bills.count() if obj.pk else 0

    @admin.display(description="rates")
    def summary(self, obj):
        return schedule_summary(obj.rules or {})

    @admin.display(description="rates")
    def rates(self, obj):
        return _rule_tables(schedule_tables(obj.rules or {})) if obj.pk else "—"

    def _has_bills(self, obj) -> bool:
        return obj is not None and obj.pk is not None and obj.bills.exists()

    def get_fieldsets(self, request, obj=None):
        main = (None, {"fields": ("effective_on", "citation", "is_sample", "bills_using", "rates")})
        if self._has_bills(obj) or not self.has_change_permission(request, obj):
            return (main,)
        return (main, ("Advanced: the rules as the preset declares them", {
            "fields": ("rules",), "classes": ("collapse",),
            "description": "The schedule's rules in the preset's form (billing/rating.py reads them). Editable "
                           "only while no bill has been rated with this schedule."}))

    def get_readonly_fields(self, request, obj=None):
        # A schedule that has rated bills is history: a change takes a new effective date.
        if self._has_bills(obj):
            return ("effective_on", "citation", "is_sample", "rates", "bills_using")
        return self.readonly_fields

    def get_urls(self):
        return [*self.owrs_urls(), *super().get_urls()]


@admin.register(Fee)
class FeeAdmin(HistoryAdmin):
    list_display = ("code", "description", "terms", "citation", "effective_on")
    list_filter = ("code",)
    readonly_fields = ("terms", "size_and_terms")

    def get_fieldsets(self, request, obj=None):
        main = (None, {"fields": ("code", "effective_on", "description", "rule", "amount", "rate", "citation", "note",
                                  "terms", "size_and_terms")})
        if not self.has_change_permission(request, obj):
            return (main,)
        return (main, ("Advanced: sizes and terms as the preset declares them", {
            "fields": ("by_size", "params"), "classes": ("collapse",)}))

    @admin.display(description="charge")
    def terms(self, obj):
        if obj.pk is None:
            return "—"
        try:
            return fee_rule(obj).terms()
        except ApplicationError as exc:
            return str(exc)

    @admin.display(description="by size and terms")
    def size_and_terms(self, obj):
        return _rule_tables(fee_tables(by_size=obj.by_size or {}, params=obj.params or {})) if obj.pk else "—"


# --- billing runs -----------------------------------------------------------------------------------

class ExceptionInline(ReadOnlyInline):
    model = BillingException
    fields = ("account", "kind", "detail", "status")
    readonly_fields = fields
    show_change_link = True


@admin.register(BillingRun)
class BillingRunAdmin(BillingRunPagesMixin, ReadOnlyAdmin):
    list_display = ("id", "run_on", "status", "progress", "bills_created", "already_billed", "exceptions_count",
                    "total_billed", "started_by", "created_at")
    list_filter = ("status", "run_on")
    readonly_fields = ("summary", "run_on", "status", "progress", "accounts_due", "bills_created", "already_billed",
                       "exceptions_count", "total_billed", "accept_sample_rates", "started_by", "created_at",
                       "finished_at", "error")
    fields = readonly_fields
    inlines = (ExceptionInline, StatusChangeInline)
    change_form_template = "admin/billing/billingrun/change_form.html"
    change_list_template = "admin/billing/billingrun/change_list.html"

    def has_add_permission(self, request, obj=None):
        return request.user.has_perm("billing.add_billingrun")

    @admin.display(description="progress")
    def progress(self, obj):
        return format_html('<progress max="100" value="{}" aria-label="run progress">{}%</progress> {}%',
                           obj.progress_percent, obj.progress_percent, obj.progress_percent)

    @admin.display(description="summary")
    def summary(self, obj):
        return format_html(
            '<div class="run-summary"><p>Status: <strong>{}</strong></p><p>Bills issued: <strong>{}</strong></p>'
            "<p>Already billed: {} · Exceptions: {} · Total billed: {}</p>{}{}</div>",
            obj.get_status_display(), obj.bills_created, obj.already_billed, obj.exceptions_count,
            fmt_dollars(obj.total_billed),
            format_html("<p><strong>{}</strong> {}</p>", "Accepted sample rates:",
                        "billed on the preset's sample rate schedule at the clerk's choice.")
            if obj.accept_sample_rates else "",
            format_html('<p class="errornote">Failed: {}</p>', obj.error) if obj.error else "")

    def get_urls(self):
        return [*self.run_page_urls(),
                path("<int:run_id>/retry/", self.admin_site.admin_view(self.retry_view),
                     name="billing_billingrun_retry"),
                *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        return super().change_view(request, object_id, form_url,
                                   {**(extra_context or {}), "can_retry": self.has_add_permission(request),
                                    **self.run_page_context(object_id)})

    def retry_view(self, request, run_id):
        """The "Retry" button of a failed run: bill its unfinished chunks again (POST only)."""
        if not self.has_add_permission(request) or request.method != "POST":
            raise PermissionDenied
        try:
            billing_run_retry(run_id=run_id, actor=request.user)
        except ApplicationError as exc:
            self.message_user(request, f"The run was not retried: {exc}", messages.ERROR)
        else:
            self.message_user(request, f"Billing run {run_id} retried.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:billing_billingrun_change", args=[run_id]))

    def add_view(self, request, form_url="", extra_context=None):
        return HttpResponseRedirect(reverse("admin:billing_billingrun_start"))


@admin.register(BillingException)
class BillingExceptionAdmin(BillingExceptionPagesMixin, admin.ModelAdmin):
    list_display = ("account", "bill_date", "kind", "status", "detail", "run")
    list_filter = ("status", "kind", "bill_date")
    search_fields = ("account__account_no",)
    readonly_fields = ("account", "bill_date", "kind", "detail", "status", "run", "created_at", "resolved_by",
                       "resolved_at")
    actions = ("release",)

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Release held bills: bill as read on the next run", permissions=["change"])
    def release(self, request, queryset):
        released, refused = 0, []
        for exception in queryset:
            try:
                billing_exception_release(exception=exception, actor=request.user)
                released += 1
            except ApplicationError as exc:
                refused.append(f"{exception.account}: {exc}")
        if released:
            self.message_user(request, f"Released {released}; the next billing run bills them.", messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.WARNING)


# --- bills ------------------------------------------------------------------------------------------

class BillLineInline(ReadOnlyInline):
    model = BillLine
    fields = ("description", "citation", "quantity_shown", "rate_shown", "amount")
    readonly_fields = fields
    classes = ("bill-lines",)

    @admin.display(description="quantity")
    def quantity_shown(self, obj):
        return f"{obj.quantity.normalize():,f}"

    @admin.display(description="rate")
    def rate_shown(self, obj):
        return fmt_rate(obj.rate)


class BillLedgerInline(ReadOnlyInline):
    model = LedgerEntry
    fields = ("posted_on", "kind", "description", "citation", "amount")
    readonly_fields = fields
    verbose_name_plural = "ledger entries on this bill"


class AdjustmentInline(ReadOnlyInline):
    model = Adjustment
    fields = ("adjusted_on", "kind", "amount", "description", "reason", "created_by")
    readonly_fields = fields


memo_amount = dollars_at_most(ADJUSTMENT_MAX, what="a memo")

CUSTOMER_TEXT_HELP = ("What the customer reads on the statement and in the portal. Leave empty for a plain "
                      "wording; never put internal notes here.")


class VoidForm(forms.Form):
    reason = forms.CharField(label="Internal note", widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="Why the bill is voided; kept with the bill for staff, never shown to the "
                                       "customer.")
    description = forms.CharField(label="What the customer reads", required=False, max_length=200,
                                  help_text=CUSTOMER_TEXT_HELP)


@admin.register(Bill)
class BillAdmin(CsvExportMixin, ReadOnlyAdmin):
    list_display = ("number", "account", "bill_date", "due_date", "total", "status", "final", "estimated")
    list_filter = ("status", "bill_date", "frequency", "estimated")
    search_fields = ("number", "account__account_no", "account__owner__name")
    list_select_related = ("account",)
    date_hierarchy = "bill_date"
    readonly_fields = ("number", "account", "status", "frequency", "bill_date", "issued_on", "due_date", "period_start",
                       "period_end", "readings", "gallons_shown", "total", "rate_schedule", "run", "created_at",
                       "voided_at", "voided_by", "void_reason", "void_description")
    fields = readonly_fields
    inlines = (BillLineInline, AdjustmentInline, BillLedgerInline)
    change_form_template = "admin/billing/bill/change_form.html"

    def has_change_permission(self, request, obj=None):
        # Nothing on an issued bill is editable, but the page shows for viewing and for "Void".
        return False

    @admin.display(description="gallons")
    def gallons_shown(self, obj):
        return fmt_gallons(obj.gallons)

    @admin.display(description="readings")
    def readings(self, obj):
        def show(r):
            return f"{r.value:,} on {r.read_on}" + (" (estimated)" if r.read_type == "estimated" else "")
        if not obj.end_reading_id:
            return "—"
        return f"{show(obj.start_reading)} → {show(obj.end_reading)}"

    def get_urls(self):
        return [path("<int:pk>/void/", self.admin_site.admin_view(self.void_view), name="billing_bill_void"),
                path("<int:pk>/pdf/", self.admin_site.admin_view(bill_pdf_view), name="billing_bill_pdf"),
                *final_bill_urls(self),
                *super().get_urls()]

    def void_view(self, request, pk):
        if not request.user.has_perm("billing.change_bill"):
            raise PermissionDenied
        bill = get_object_or_404(Bill, pk=pk)
        form = VoidForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            try:
                bill_void(bill=bill, reason=form.cleaned_data["reason"],
                          description=form.cleaned_data["description"], as_of=today(), actor=request.user)
            except ApplicationError as exc:
                form.add_error("reason", str(exc))
            else:
                self.message_user(request, f"Bill {bill.number} is void; the next run can bill the period again.",
                                  messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:billing_bill_change", args=[bill.pk]))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "bill": bill, "title": f"Void bill {bill.number}"}
        return TemplateResponse(request, "admin/billing/bill/void.html", context)


class AdjustmentForm(forms.ModelForm):
    bill = BillNumberField(help_text="The number printed on the bill the memo corrects (e.g. 202602-1-00001).")
    amount = forms.CharField(label="Amount ($)", max_length=40,
                             help_text=f"At most {fmt_dollars(ADJUSTMENT_MAX)}; a bill wrong by more is voided and "
                                       "billed again.")
    description = forms.CharField(label="What the customer reads", required=False, max_length=200,
                                  help_text=CUSTOMER_TEXT_HELP)

    class Meta:
        model = Adjustment
        fields = ("bill", "kind", "amount", "reason", "description")
        labels = {"reason": "Internal note"}
        help_texts = {"reason": "Why; kept for staff, never shown to the customer."}

    def clean_amount(self):
        try:
            return memo_amount(self.cleaned_data["amount"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None



@admin.register(Adjustment)
class AdjustmentAdmin(admin.ModelAdmin):
    form = AdjustmentForm
    list_display = ("adjusted_on", "account", "bill", "kind", "amount", "description", "reason", "created_by")
    list_filter = ("kind",)
    search_fields = ("account__account_no", "bill__number", "reason")

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        try:
            created = adjustment_create(bill=form.cleaned_data["bill"], kind=form.cleaned_data["kind"],
                                        amount=form.cleaned_data["amount"], reason=form.cleaned_data["reason"],
                                        description=form.cleaned_data["description"], as_of=today(),
                                        actor=request.user)
        except ApplicationError as exc:
            raise forms.ValidationError(str(exc)) from exc
        # The admin logs the addition against ``obj``: make it the row the service wrote.
        obj.__dict__.update({f.attname: getattr(created, f.attname) for f in Adjustment._meta.concrete_fields})


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


@admin.register(LedgerEntry)
class LedgerEntryAdmin(CsvExportMixin, ReadOnlyAdmin):
    list_display = ("posted_on", "account", "kind", "amount", "bill", "citation", "description")
    list_filter = ("kind", "posted_on")
    search_fields = ("account__account_no", "bill__number", "description")
    list_select_related = ("account", "bill")
    date_hierarchy = "posted_on"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_ledgerentry")




# --- fees and fines charged between bills -------------------------------------------------------------

class ChargeForm(forms.Form):
    code = forms.ChoiceField(label="Fee", widget=forms.Select(attrs={"style": "max-width: 100%"}))
    amount = forms.CharField(label="Amount ($)", required=False, max_length=40,
                             help_text="Only for a fee whose amount the ordinance leaves open.")
    base = forms.CharField(label="Base ($)", required=False, max_length=40,
                           help_text="Only for a fee computed from a cost (e.g. construction cost).")
    size = forms.CharField(label="Size (inches)", required=False, max_length=20,
                           help_text="Only for a fee by supply or meter size.")
    note = forms.CharField(label="Internal note", required=False, widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="Kept for staff; the customer reads the fee's description and citation.")
    charged_on = forms.DateField(label="Charged on", widget=forms.DateInput(attrs={"type": "date"}),
                                 help_text="It goes on the account's first bill dated on or after this day.")

    def __init__(self, *args, fees, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["code"].choices = [("", "—")] + [
            (fee.code, f"{fee.description} ({fee.citation}): {fee_rule(fee).terms()}") for fee in fees]


class ChargeStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return (("pending", "Pending: waiting for the next bill"), ("billed", "Billed"), ("cancelled", "Cancelled"))

    def queryset(self, request, queryset):
        return {"pending": queryset.filter(bill__isnull=True, cancelled_at__isnull=True),
                "billed": queryset.filter(bill__isnull=False),
                "cancelled": queryset.filter(cancelled_at__isnull=False)}.get(self.value(), queryset)


class CancelChargesForm(forms.Form):
    reason = forms.CharField(label="Why", widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Kept with the charge for staff.")


@admin.register(PendingCharge)
class PendingChargeAdmin(CsvExportMixin, ReadOnlyAdmin):
    """Fees and fines waiting for the account's next bill, and those bills carried. A charge is made from
    the account's page ("Charge a fee"), and cancelled here, with a reason, while it still waits."""

    list_display = ("charged_on", "account", "description", "citation", "amount", "status_shown", "bill",
                    "earliest_bill_on", "created_by")
    list_filter = (ChargeStatusFilter, "kind", "code")
    search_fields = ("account__account_no", "description", "bill__number")
    list_select_related = ("account", "bill", "created_by")
    date_hierarchy = "charged_on"
    fields = ("account", "code", "kind", "description", "citation", "amount", "quantity", "rate", "base", "size",
              "note", "charged_on", "earliest_bill_on", "status_shown", "bill", "reissue_of", "created_by",
              "created_at", "cancelled_at", "cancelled_by", "cancel_reason")
    readonly_fields = fields
    actions = ("cancel",)

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_pendingcharge")

    def has_cancel_permission(self, request):
        return request.user.has_perm("billing.change_pendingcharge")

    @admin.display(description="status")
    def status_shown(self, obj):
        if obj.status == "billed":
            return f"Billed on {obj.bill.number}" + (" (void: charged again)" if obj.bill.status == Bill.Status.VOID
                                                    else "")
        return {"pending": f"Pending: the first bill dated on or after {obj.earliest_bill_on}",
                "cancelled": f"Cancelled: {obj.cancel_reason}"}[obj.status]

    @admin.action(description="Cancel the selected pending charges", permissions=["cancel"])
    def cancel(self, request, queryset):
        form = CancelChargesForm(request.POST if "apply" in request.POST else None)
        if not form.is_valid():
            context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                       "charges": queryset.select_related("account", "bill"), "title": "Cancel pending charges",
                       "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME}
            return TemplateResponse(request, "admin/billing/pendingcharge/cancel.html", context)
        cancelled, refused = 0, []
        for charge in queryset.select_related("account"):
            try:
                charge_cancel(charge=charge, reason=form.cleaned_data["reason"], actor=request.user)
                cancelled += 1
            except ApplicationError as exc:
                refused.append(f"{charge.account}: {charge.description}: {exc}")
        if cancelled:
            self.message_user(request, f"Cancelled {cancelled} charge(s); no bill will carry them.", messages.SUCCESS)
        for line in refused:
            self.message_user(request, line, messages.WARNING)
        return None

    def get_urls(self):
        return [path("charge/<int:account_pk>/", self.admin_site.admin_view(self.charge_view),
                     name="billing_pendingcharge_charge"), *super().get_urls()]

    def charge_view(self, request, account_pk):
        if not request.user.has_perm("billing.add_pendingcharge"):
            raise PermissionDenied
        account = get_object_or_404(Account, pk=account_pk)
        form = ChargeForm(request.POST or None, fees=fees_in_force(on=today()), initial={"charged_on": today()})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                amount, base = charge_figures_parse(amount=data["amount"], base=data["base"])
                charge = charge_create(account=account, code=data["code"], as_of=data["charged_on"],
                                       actor=request.user, amount=amount, base=base, size=data["size"],
                                       note=data["note"])
            except ApplicationError as exc:
                for error in exc.errors:
                    field = error.field if error.field in form.fields else None
                    form.add_error(field, error.message if field else str(error))
            else:
                self.message_user(request, (
                    f"Charged {fmt_dollars(charge.amount.amount)} to account {account.account_no}: "
                    f"{charge.description} ({charge.citation}). It goes on the account's next bill dated on or "
                    f"after {charge.earliest_bill_on}."), messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        waiting = account.pending_charges.filter(bill__isnull=True, cancelled_at__isnull=True).order_by("charged_on")
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "account": account, "waiting": waiting, "title": f"Charge a fee to account {account.account_no}"}
        return TemplateResponse(request, "admin/billing/pendingcharge/charge.html", context)



# --- messages on bills ---------------------------------------------------------------------------------------

@admin.register(BillMessage)
class BillMessageAdmin(HistoryAdmin):
    """A message printed on the bills of a date range (a run's date: the same day twice), of one book or all:
    flushing of hydrants, a rate change, the office's holiday hours. The print file and the bill PDFs made
    after it carry it; a book's own message is printed instead of one for every book."""

    list_display = ("text", "book_words", "first_bill_date", "last_bill_date", "created_by")
    fields = ("text", "book", "first_bill_date", "last_bill_date")
    list_filter = ("book",)

    @admin.display(description="Book")
    def book_words(self, obj):
        return f"Book {obj.book}" if obj.book else "Every book"

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


# --- refundable deposits ---------------------------------------------------------------------------------

class DepositReceiveForm(forms.Form):
    account_no = forms.CharField(label="Account number", max_length=20)
    received_on = forms.DateField(label="Received on", widget=forms.DateInput(attrs={"type": "date"}))
    reference = forms.CharField(label="Check or receipt number", max_length=80, required=False)


class DepositRefundForm(forms.Form):
    refunded_on = forms.DateField(label="Refunded on", widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(label="Discontinuance", widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="How the service it secured was satisfactorily discontinued (kept for staff).")


class DepositHeldFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "held"

    def lookups(self, request, model_admin):
        return (("yes", "Held"), ("no", "Refunded"))

    def queryset(self, request, queryset):
        return {"yes": queryset.filter(refunded_on__isnull=True),
                "no": queryset.filter(refunded_on__isnull=False)}.get(self.value(), queryset)


@admin.register(Deposit)
class DepositAdmin(ReadOnlyAdmin):
    """Refundable deposits (Washingtonville's hydrant deposit, § 169-4): money held for the customer, never
    revenue and never part of what an account owes. Received here ("Add"), refunded with the action."""

    list_display = ("received_on", "account", "description", "citation", "amount", "reference", "refunded_on")
    list_filter = (DepositHeldFilter,)
    search_fields = ("account__account_no", "reference")
    list_select_related = ("account",)
    fields = ("account", "code", "description", "citation", "amount", "received_on", "reference", "received_by",
              "refunded_on", "refunded_by", "refund_note")
    readonly_fields = fields
    actions = ("refund",)

    def has_add_permission(self, request):
        return request.user.has_perm("billing.add_deposit")

    def has_refund_permission(self, request):
        return request.user.has_perm("billing.change_deposit")

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied  # a staff login without "add deposit" never reaches deposit_receive
        form = DepositReceiveForm(request.POST or None, initial={"received_on": today()})
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            account = Account.objects.filter(account_no=data["account_no"].strip()).first()
            if account is None:
                form.add_error("account_no", f"unknown account '{data['account_no']}'")
            else:
                try:
                    deposit = deposit_receive(account=account, received_on=data["received_on"], actor=request.user,
                                              reference=data["reference"])
                except ApplicationError as exc:
                    for error in exc.errors:
                        field = {"account_no": "account_no", "received_on": "received_on",
                                 "reference": "reference"}.get(error.field)
                        form.add_error(field, error.message)
                else:
                    self.message_user(request, f"Received {fmt_dollars(deposit.amount.amount)} from account "
                                               f"{account.account_no}: {deposit.description} ({deposit.citation}), "
                                               "held for the customer.", messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:billing_deposit_changelist"))
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "title": "Receive a refundable deposit"}
        return TemplateResponse(request, "admin/billing/deposit/receive.html", context)

    @admin.action(description="Refund the selected deposits", permissions=["refund"])
    def refund(self, request, queryset):
        form = DepositRefundForm(request.POST if "apply" in request.POST else None, initial={"refunded_on": today()})
        if not form.is_valid():
            context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                       "deposits": queryset.select_related("account"), "title": "Refund deposits",
                       "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME}
            return TemplateResponse(request, "admin/billing/deposit/refund.html", context)
        for deposit in queryset.select_related("account"):
            try:
                deposit_refund(deposit=deposit, refunded_on=form.cleaned_data["refunded_on"],
                               note=form.cleaned_data["note"], actor=request.user)
            except ApplicationError as exc:
                self.message_user(request, f"{deposit.account}: not refunded: {exc}", messages.WARNING)
            else:
                self.message_user(request, f"{deposit.account}: {fmt_dollars(deposit.amount.amount)} refunded "
                                           "without interest.", messages.SUCCESS)
        return None


from . import admin_penalties  # noqa: E402,F401
