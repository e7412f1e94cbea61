"""Online payments and the processor's events, autopay enrolments, debit files and their debits, for the clerk to
look at: read only (the webhook, the portal, the commands and billing's services write them). A bank account is
shown by its last four digits; the sealed number is never shown.

The bank's files are read here as by their commands, with the same checks and every refusal by line, nothing kept
from a refused file: the lockbox file on the exceptions queue's page (``import_lockbox``; a large file is read by a
worker, its page showing the progress), the BAI2 report with its bill-pay credits on the bank deposits' page
(``import_bai2``), the returns file on the ACH files' page (``ach_returns``). The debit file is prepared there
too (``ach_file_prepare``, by a clerk) and approved by a supervisor who did not prepare it (``ach_file_decide``),
then downloaded; a file approved before is downloaded again, identical."""

from decimal import Decimal

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html

from core.admin import DATE_WIDGET, ApprovalPagesMixin, ReadOnlyAdmin, ReadOnlyInline, admin_page_register
from core.admin_imports import CsvImportAdminMixin, file_size
from core.approval import approval_who
from core.clock import refuse_future, today
from core.errors import ApplicationError
from ordinance.selectors import installed_utility

from .autopay import ach_export_again, ach_file_decide, ach_file_prepare, ach_returns
from .bank import deposits_reconcile
from .bank_report import bai2_import
from .configured import processor_configured
from .lockbox import LOCKBOX_LAYOUT, exception_post, exception_post_problems, exception_return
from .models import (
    AchFile,
    AutopayDebit,
    AutopayEnrolment,
    BankDeposit,
    OnlinePayment,
    PaymentException,
    ProcessorEvent,
)


class EventInline(ReadOnlyInline):
    model = ProcessorEvent
    fields = ("received_at", "kind", "event_id", "outcome")
    readonly_fields = fields


@admin.register(OnlinePayment)
class OnlinePaymentAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "amount", "status", "processor", "payment", "receipt_email")
    list_filter = ("status", "processor")
    search_fields = ("account__account_no", "checkout_id", "payment_ref", "payment__reference", "receipt_email")
    list_select_related = ("account", "payment")
    date_hierarchy = "created_at"
    inlines = [EventInline]


@admin.register(ProcessorEvent)
class ProcessorEventAdmin(ReadOnlyAdmin):
    list_display = ("received_at", "processor", "kind", "event_id", "outcome", "online_payment")
    list_filter = ("processor", "kind")
    search_fields = ("event_id", "outcome")
    list_select_related = ("online_payment__account",)


@admin.register(AutopayEnrolment)
class AutopayEnrolmentAdmin(ReadOnlyAdmin):
    list_display = ("account", "status", "account_type", "account_last4", "email", "authorized_at")
    list_filter = ("status", "account_type")
    search_fields = ("account__account_no", "holder_name", "email")
    list_select_related = ("account",)
    exclude = ("account_number_sealed",)


class DebitInline(ReadOnlyInline):
    model = AutopayDebit
    fields = ("trace_number", "account", "amount", "payment", "returned_code", "returned_on")
    readonly_fields = fields


@admin.register(AchFile)
class AchFileAdmin(ApprovalPagesMixin, ReadOnlyAdmin):
    """The debit files made: each kept sealed, so the file the bank did not get is downloaded again, identical."""

    list_display = ("created_on", "modifier", "effective_on", "same_day", "entries", "total", "status",
                    "download", "created_by", "decided_by")
    list_filter = ("status",)
    date_hierarchy = "created_on"
    exclude = ("sealed_text",)
    readonly_fields = ("download",)
    inlines = [DebitInline]

    change_list_template = "admin/remittance/achfile_change_list.html"

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("<int:pk>/nacha/", view(self.nacha_view), name="remittance_achfile_nacha"),
                path("make/", view(self.make_view), name="remittance_achfile_make"),
                path("<int:pk>/decide/", view(self.decide_view), name="remittance_achfile_decide"),
                path("returns/", view(self.returns_view), name="remittance_achfile_returns"),
                *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, extra_context={
            **(extra_context or {}), "can_make": request.user.has_perm(MAKE_ACH_FILE),
            "can_apply_returns": request.user.has_perm(APPLY_RETURNS)})

    def make_view(self, request):
        """Prepare the day's debit file: its debits listed for a supervisor, nothing posted until one approves."""
        if not request.user.has_perm(MAKE_ACH_FILE):
            raise PermissionDenied
        form = MakeAchForm(request.POST or None, initial={"on": today()})
        errors = []
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            try:
                file = ach_file_prepare(on=data["on"], settle=data["settle"], same_day=data["same_day"],
                                        actor=request.user)
            except ApplicationError as exc:
                errors = exc.errors
            else:
                if file is None:
                    messages.warning(request, f"Nothing to debit on {data['on']}: no autopay account has a noticed "
                                              "debit due by then.")
                    return redirect("admin:remittance_achfile_changelist")
                messages.success(request, f"File {file.pk} prepared: {file.entries} debit(s) for {file.total}. A "
                                          "supervisor who did not prepare it approves it; nothing is posted before.")
                return redirect("admin:remittance_achfile_decide", pk=file.pk)
        return _bank_file_page(request, self, form=form, errors=errors, title="Prepare the autopay debit file",
                               intro="The debits of every active enrolment whose notice of amount and day was sent "
                                     "the notice period before (Reg E), for the bank to settle on the day below. "
                                     "Preparing lists them; a supervisor who did not prepare the file approves it "
                                     "that day, and only then is each debit posted as a payment (the portal shows "
                                     "it as scheduled until the day it settles) and the file downloaded.",
                               submit="Prepare the file")

    def decide_view(self, request, pk):
        """The prepared file's debits, and a supervisor's approval (posted and downloaded) or refusal (a note)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        file = AchFile.objects.filter(pk=pk).select_related("created_by", "decided_by").first()
        if file is None:
            raise Http404("no such debit file")
        can_decide = request.user.has_perm(AchFile.approval.permission) and file.status == AchFile.Status.PENDING
        errors = []
        if request.method == "POST":
            if not can_decide:
                raise PermissionDenied
            approve = "approve" in request.POST
            try:
                exported = ach_file_decide(file, approve=approve, note=request.POST.get("note", ""),
                                           actor=request.user, on=today())
            except ApplicationError as exc:
                errors = exc.errors
            else:
                if not approve:
                    messages.success(request, f"File {file.pk} refused: nothing was posted.")
                    return redirect("admin:remittance_achfile_changelist")
                messages.success(request, f"File {file.pk} approved: {file.entries} debit(s) for {file.total}, "
                                          "each posted as a payment. Download it below for the bank.")
                return redirect("admin:remittance_achfile_decide", pk=exported.file.pk)
        return TemplateResponse(request, "admin/remittance/achfile_decide.html", {
            **self.admin_site.each_context(request), "opts": AchFile._meta, "title": f"Debit file {file.pk}",
            "file": file, "errors": errors, "can_decide": can_decide, "has_view_permission": True,
            "debits": [{**d, "amount": Decimal(d["amount"])} for d in file.proposed],
            "own": file.created_by_id == request.user.pk, "approval_who": approval_who(file),
            "can_withdraw": self.can_withdraw(request, file)})

    def returns_view(self, request):
        return _bank_file_read(
            request, self, permission=APPLY_RETURNS, done="admin:remittance_achfile_changelist",
            read=lambda data, on, actor: ach_returns(_nacha_text(data), as_of=on, actor=actor),
            title="Read the bank's ACH returns file", submit="Read the returns",
            intro="The NACHA returns file: each returned debit is reversed with its R-code, the returned-payment fee "
                  "charged, autopay suspended where the code ends the authorization, and the customer told. The "
                  "whole file is checked first: a file with any problem changes nothing.", sample="returns")

    @admin.display(description="The file for the bank")
    def download(self, obj):
        if obj.status == AchFile.Status.PENDING:
            return format_html('<a href="{}">Waiting for a supervisor: see its debits</a>',
                               reverse("admin:remittance_achfile_decide", args=[obj.pk]))
        if obj.status in (AchFile.Status.REFUSED, AchFile.Status.WITHDRAWN):
            return f"{obj.get_status_display().lower()}: nothing posted"
        if not obj.sealed_text:
            return "not kept (made before files were kept)"
        return format_html('<a href="{}">Download again (identical)</a>',
                           reverse("admin:remittance_achfile_nacha", args=[obj.pk]))

    def nacha_view(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            exported = ach_export_again(file_id=pk)
        except ApplicationError as exc:
            messages.error(request, exc.errors[0].message)
            return redirect("admin:remittance_achfile_changelist")
        response = HttpResponse(exported.text, content_type="text/plain; charset=us-ascii")
        response["Content-Disposition"] = (f'attachment; filename="ach-{exported.file.created_on}-'
                                           f'{exported.file.modifier}.txt"')
        response["Cache-Control"] = "no-store"
        return response


class ResolveForm(forms.ModelForm):
    post_to = forms.CharField(label="Post it to account", required=False, max_length=20,
                              help_text="The account number the payment belongs to (from the check, the payer's "
                                        "letter or a call).")
    sent_back = forms.BooleanField(label="It was sent back to the payer", required=False)
    resolution = forms.CharField(label="Note", required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                 help_text="How it was resolved; required when it was sent back.")

    user = None  # set by the admin (``get_form``)

    class Meta:
        model = PaymentException
        fields: list[str] = []

    def clean(self):
        data = super().clean()
        post_to, sent_back = (data.get("post_to") or "").strip(), data.get("sent_back")
        if bool(post_to) == bool(sent_back):
            raise forms.ValidationError("Either name the account to post it to, or say it was sent back.")
        if post_to:
            for problem in exception_post_problems(exception=self.instance, account_no=post_to, actor=self.user):
                self.add_error("post_to", problem.message)
        if sent_back and not (data.get("resolution") or "").strip():
            self.add_error("resolution", "is required: how it was sent back")
        return data


@admin.register(PaymentException)
class PaymentExceptionAdmin(CsvImportAdminMixin, admin.ModelAdmin):
    """The exceptions queue: payments the bank deposited that matched no account, each posted by a clerk to the
    account it belongs to or recorded as sent back. The day's lockbox file is read from here."""

    importer = "remittance.lockbox.lockbox_import"
    import_permission = "billing.add_payment"
    import_layout = LOCKBOX_LAYOUT
    import_title = "Read the bank's lockbox file"
    import_noun = "checks"
    import_help = ("The lockbox detail file the bank sends each day: a check whose bill stub's scan line names an "
                   "account and an amount it may pay is posted; any other comes to this queue with why. A check "
                   "already read is skipped, so the same file read twice posts nothing twice.")

    def import_sample_url(self) -> str:
        return sample_url("lockbox")

    form = ResolveForm
    list_display = ("received_on", "reference", "amount", "check_number", "reason", "status")
    list_filter = ("status", "source")
    search_fields = ("reference", "check_number", "read")
    readonly_fields = ("source", "reference", "received_on", "amount", "check_number", "read", "reason", "status",
                       "payment", "note", "resolved_at", "resolved_by")

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        form.user = request.user  # who posts: a supervisor may post what a clerk may not
        return form

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and (obj is None
                                                                 or obj.status == PaymentException.Status.OPEN)

    def get_fields(self, request, obj=None):
        fields = list(self.readonly_fields)
        if obj is not None and obj.status == PaymentException.Status.OPEN:
            fields += ["post_to", "sent_back", "resolution"]
        return fields

    def save_model(self, request, obj, form, change):
        data = form.cleaned_data
        if data.get("post_to"):
            exception_post(exception=obj, account_no=data["post_to"].strip(), note=data.get("resolution", ""),
                           actor=request.user)
            messages.success(request, f"{obj.reference} posted to account {data['post_to'].strip()}.")
        else:
            exception_return(exception=obj, note=data["resolution"], actor=request.user)


@admin.register(BankDeposit)
class BankDepositAdmin(ReadOnlyAdmin):
    list_display = ("posted_on", "channel", "type_code", "description", "amount", "bank_reference",
                    "customer_reference", "text", "payment")
    list_filter = ("channel", "type_code")
    list_select_related = ("payment",)
    date_hierarchy = "posted_on"
    search_fields = ("bank_reference", "customer_reference", "text")
    change_list_template = "admin/remittance/bankdeposit_change_list.html"

    def get_urls(self):
        return [path("import/", self.admin_site.admin_view(self.import_view), name="remittance_bankdeposit_import"),
                *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, extra_context={
            **(extra_context or {}), "can_read_report": request.user.has_perm(READ_BANK_REPORT)})

    def import_view(self, request):
        return _bank_file_read(
            request, self, permission=READ_BANK_REPORT, done="admin:remittance_bankdeposit_changelist",
            read=lambda data, on, actor: bai2_import(data), dated=False,
            title="Read the bank's BAI2 report", submit="Read the report",
            intro="The bank's BAI2 report of the village account: each credit kept with its channel for the deposits "
                  "reconciliation, and each bank bill-pay credit that names one of our accounts posted to it (the "
                  "others come to the exceptions queue). The whole report is checked first: a report with any "
                  "problem keeps nothing.", sample="bai2")


# Who may read and make the bank's files (accounts/roles.py gives them to the Clerk and the Supervisor).
READ_BANK_REPORT = "remittance.add_bankdeposit"
APPLY_RETURNS = "remittance.change_achfile"
MAKE_ACH_FILE = "remittance.add_achfile"


class BankFileForm(forms.Form):
    file = forms.FileField(label="File from the bank")
    on = forms.DateField(label="Date", widget=DATE_WIDGET, required=False,
                         help_text="The day the file is read as of (nothing in it may be later).")

    def clean_file(self):
        upload = self.cleaned_data["file"]
        if upload.size > settings.IMPORT_MAX_UPLOAD_BYTES:
            raise forms.ValidationError(f"{upload.name} is {file_size(upload.size)}; a file may be at most "
                                        f"{file_size(settings.IMPORT_MAX_UPLOAD_BYTES)}")
        return upload

    def clean_on(self):
        on = self.cleaned_data.get("on") or today()
        try:
            refuse_future(on, doing="read")
        except ApplicationError as exc:
            raise forms.ValidationError(str(exc)) from None
        return on


class MakeAchForm(forms.Form):
    on = forms.DateField(label="Made on", widget=DATE_WIDGET)
    settle = forms.DateField(label="Settles on", widget=DATE_WIDGET, required=False,
                             help_text="A banking day after the day it is made; empty: the next banking day.")
    same_day = forms.BooleanField(label="Same-day ACH (settles the day it is made)", required=False)


def _nacha_text(data: bytes) -> str:
    try:
        return data.decode("ascii")
    except UnicodeDecodeError:
        raise ApplicationError("is not a NACHA file: it holds characters other than ASCII", field="file") from None


def sample_url(kind: str) -> str:
    """On a demo or training site, where a sample of the bank's file of ``kind`` downloads (``demo.admin``)."""
    utility = installed_utility()
    if utility is None or not utility.is_demo_site:
        return ""
    try:
        return reverse("admin:demo_sample", args=[kind])
    except NoReverseMatch:
        return ""


def _bank_file_read(request, model_admin, *, permission, read, done, title, intro, submit, dated=True, sample=""):
    """A file from the bank, uploaded: ``read(bytes, on, actor)`` keeps it whole or refuses it with every problem
    (nothing kept); on success the clerk is sent to ``done`` with what was read."""
    if not request.user.has_perm(permission):
        raise PermissionDenied
    form = BankFileForm(request.POST or None, request.FILES or None, initial={"on": today()})
    errors = []
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            said = read(upload.read(), form.cleaned_data["on"], request.user)
        except ApplicationError as exc:
            errors = exc.errors
        else:
            messages.success(request, f"{upload.name}: {said}.")
            return redirect(done)
    return _bank_file_page(request, model_admin, form=form, errors=errors, title=title, intro=intro, submit=submit,
                           dated=dated, sample=sample)


def _bank_file_page(request, model_admin, *, form, errors, title, intro, submit, dated=True, sample=""):
    return TemplateResponse(request, "admin/remittance/bank_file.html", {
        **model_admin.admin_site.each_context(request), "opts": model_admin.model._meta, "title": title,
        "intro": intro, "form": form, "errors": errors, "submit": submit, "dated": dated,
        "has_view_permission": model_admin.has_view_permission(request), "sample_url": sample_url(sample)
        if sample else ""})


class DayForm(forms.Form):
    on = forms.DateField(label="Day", widget=DATE_WIDGET)


DEPOSITS_PERMISSION = "remittance.view_bankdeposit"  # the clerk's, the supervisor's, the treasurer's


def deposits_view(request):
    if not request.user.has_perm(DEPOSITS_PERMISSION):
        raise PermissionDenied
    form = DayForm(request.GET if "on" in request.GET else None, initial={"on": today()})
    result = None
    if form.is_bound and form.is_valid():
        result = deposits_reconcile(on=form.cleaned_data["on"], processor=processor_configured())
    return TemplateResponse(request, "admin/remittance/deposits.html", {
        **admin.site.each_context(request), "title": "Deposits reconciliation", "form": form, "result": result,
        "payout_days": settings.PROCESSOR_PAYOUT_DAYS})


admin_page_register(admin.site, "deposits/", deposits_view, "deposits")
