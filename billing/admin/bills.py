"""Bills in the admin (read-only: issued bills never change), voids and credit/debit memos, and the messages
printed on bills.
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.urls import path

from core.admin import CsvExportMixin, HistoryAdmin, ReadOnlyAdmin, ReadOnlyInline, ServiceForm, ServiceFormMixin
from core.commands import today
from core.csvimport import dollars_at_most
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ADJUSTMENT_MAX, fmt_dollars, fmt_gallons, fmt_rate
from meters.services import reading_value

from ..models import (
    Adjustment,
    Bill,
    BillLine,
    BillMessage,
    LedgerEntry,
)
from ..services.adjustments import adjustment_create, bill_void
from ..services.rebill import bill_rebill
from .account import (
    BillNumberField,
    bill_pdf_view,
)
from .final import final_bill_urls

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


class VoidForm(ServiceForm):
    whole_fields = ("", "bill", "status")
    submit = "Void this bill"

    reason = forms.CharField(label="Internal note", widget=forms.Textarea(attrs={"rows": 3}),
                             help_text="Why the bill is voided; kept with the bill for staff, never shown to the "
                                       "customer.")
    description = forms.CharField(label="What the customer reads", required=False, max_length=200,
                                  help_text=CUSTOMER_TEXT_HELP)

    def __init__(self, *args, bill: Bill, **kwargs):
        super().__init__(*args, **kwargs)
        self.bill = bill

    def perform(self, *, actor) -> str:
        bill_void(bill=self.bill, reason=self.cleaned_data["reason"], description=self.cleaned_data["description"],
                  as_of=today(), actor=actor)
        return f"Bill {self.bill.number} is void; the next run can bill the period again."


class RebillForm(VoidForm):
    """Void the bill and bill its date again now, with its closing reading corrected."""

    aliases = {"value": "reading", "read_on": "reading"}
    submit = "Void and bill again"

    reading = forms.CharField(
        label="Corrected closing reading", required=False, max_length=20,
        help_text="What the register read on the bill's closing reading day, as it should have been entered. Leave "
                  "empty to bill the same reading again (a rate or charge was wrong).")

    def __init__(self, *args, bill: Bill, **kwargs):
        super().__init__(*args, bill=bill, **kwargs)
        self.fields["reason"].help_text = ("Why the bill is billed again; kept with the void bill for staff, never "
                                           "shown to the customer.")

    def clean_reading(self):
        text = self.cleaned_data["reading"].strip().replace(",", "")  # as the bill prints it: 1,262,500
        if not text:
            return None
        try:
            return reading_value(text)
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def perform(self, *, actor) -> str:
        data = self.cleaned_data
        return bill_rebill(bill=self.bill, reason=data["reason"], description=data["description"],
                           reading=data["reading"], as_of=today(), actor=actor).words


@admin.register(Bill)
class BillAdmin(ServiceFormMixin, CsvExportMixin, ReadOnlyAdmin):
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
            return f"{r.shown} on {fmt_day(r.read_on)}" + (" (estimated)" if r.read_type == "estimated" else "")
        if not obj.end_reading_id:
            return "—"
        return f"{show(obj.start_reading)} → {show(obj.end_reading)}"

    def get_urls(self):
        return [path("<int:pk>/void/", self.admin_site.admin_view(self.void_view), name="billing_bill_void"),
                path("<int:pk>/rebill/", self.admin_site.admin_view(self.rebill_view), name="billing_bill_rebill"),
                path("<int:pk>/pdf/", self.admin_site.admin_view(bill_pdf_view), name="billing_bill_pdf"),
                *final_bill_urls(self),
                *super().get_urls()]

    def rebill_view(self, request, pk):
        if not request.user.has_perm("billing.change_bill"):
            raise PermissionDenied
        bill = get_object_or_404(Bill.objects.select_related("account", "end_reading__meter"), pk=pk)
        end = bill.end_reading
        form = RebillForm(request.POST or None, bill=bill, initial={"reading": end.value if end else ""})

        def done(form) -> str:
            new = Bill.objects.filter(account=bill.account, bill_date=bill.bill_date).exclude(
                status=Bill.Status.VOID).order_by("-id").first()
            return self.object_url(new or bill)

        facts = [("Bill", f"{bill.number}, {fmt_dollars(bill.total.amount)}, dated {fmt_day(bill.bill_date)}"),
                 ("Account", f"{bill.account.account_no}, {bill.account.owner}")]
        if end is not None:
            facts.append(("Closing reading", f"{end.shown} {end.meter.unit} on {fmt_day(end.read_on)} "
                                             f"(meter {end.meter.serial})"))
        return self.run_form(
            request, form, done_url=done, obj=bill, facts=facts, title=f"Void bill {bill.number} and bill it again",
            intro=f"Bill {bill.number} is kept on record, marked void, with a reversing entry of "
                  f"{fmt_dollars(bill.total.amount)}, and its date ({fmt_day(bill.bill_date)}) is billed again now "
                  "for this account alone, from the corrected reading: issued today, due by the calendar's rule "
                  "from today, and no billing run is made. Nothing is voided if the corrected bill cannot be made.")

    def void_view(self, request, pk):
        if not request.user.has_perm("billing.change_bill"):
            raise PermissionDenied
        bill = get_object_or_404(Bill, pk=pk)
        return self.run_form(
            request, VoidForm(request.POST or None, bill=bill), done_url=self.object_url(bill), obj=bill,
            title=f"Void bill {bill.number}",
            intro=f"Voiding keeps bill {bill.number} on record, marked void, and posts a reversing entry of "
                  f"{fmt_dollars(bill.total.amount)}; its penalties are taken back on their own days. The next "
                  f"billing run for {bill.bill_date} issues a corrected bill, issued today and due by the calendar's "
                  "rule from today. The internal note stays with the clerks; the customer reads only the second "
                  "text (or a plain wording).")


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
