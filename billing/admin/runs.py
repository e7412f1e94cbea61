"""Billing runs in the admin: the start form with the proposed bill dates, the proof register before issuing,
the run page's bills and exceptions, and a held bill's own page with its release.

The pages are thin: each reads through ``billing.runs.preview`` or calls one service
(``billing_run_start``, ``billing_exception_release``), and shows a refusal as the service words it.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html
from django.utils.http import urlencode

from core.admin import ReadOnlyAdmin, ReadOnlyInline, StatusChangeInline, act_on_each, button_post
from core.clock import refuse_future
from core.commands import today
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import fmt_dollars
from meters.models import Reading
from ordinance.selectors import installed_utility, section_params

from ..models import (
    Bill,
    BillingException,
    BillingRun,
    BillMessage,
    MailFile,
)
from ..ordinance import schedule_in_force
from ..runs.exceptions import billing_exception_release
from ..runs.lifecycle import billing_run_retry, billing_run_start
from ..runs.preview import (
    PREVIEW_DAYS_AHEAD,
    billing_date_proposals,
    billing_run_proof,
    billing_run_register,
    last_billing_date,
    refuse_beyond_preview,
)
from ..services.mail_files import mail_file_request

# What a held bill's page shows of the account's history.
HISTORY_ROWS = 6


class StartRunForm(forms.Form):
    run_on = forms.DateField(label="Bill date", widget=forms.DateInput(attrs={"type": "date"}),
                             help_text="Bills the books whose billing date this is, and monthly meters on a 1st.")
    accept_sample_rates = forms.BooleanField(
        label="Accept sample rates", required=False,
        help_text="Matters only while the rate schedule in force on the bill date is the preset's sample one "
                  "and this is not a demo/training site: tick to bill real accounts on those values anyway. "
                  "Your choice is recorded on the run.")
    again = forms.BooleanField(
        label="Run this bill date again", required=False,
        help_text="Only when a run of this date was made already: the new run bills just the accounts still not "
                  "billed for it (none is billed twice).")

    def __init__(self, *args, preview: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        self.preview = preview

    def clean_run_on(self):
        """Issuing refuses a date after today; a preview looks up to ``PREVIEW_DAYS_AHEAD`` days ahead."""
        run_on = self.cleaned_data["run_on"]
        try:
            if self.preview:
                refuse_beyond_preview(run_on, today=today())
            else:
                refuse_future(run_on, doing="billed")
        except ApplicationError as exc:
            raise forms.ValidationError(str(exc)) from None
        return run_on


def _calendar_citation() -> str:
    utility = installed_utility()
    return section_params("calendar", installed=utility).get("citation", "") if utility else ""


def _sample_rates_today() -> dict:
    """What the start page says about sample rates: the schedule in force today, when it is a sample one."""
    utility = installed_utility()
    try:
        schedule, _ = schedule_in_force(today())
    except ApplicationError:
        return {}
    return {"demo_site": bool(utility and utility.is_demo_site), "preset": utility.preset if utility else "PRESET",
            "sample_schedule": schedule if schedule.is_sample else None}


def _preview_url(run_on, accept_sample_rates: bool) -> str:
    return reverse("admin:billing_billingrun_preview") + "?" + urlencode(
        {"run_on": run_on.isoformat(), **({"accept_sample_rates": "1"} if accept_sample_rates else {})})


def _earlier_run_words(run_on) -> str:
    """A warning when ``run_on`` was run already: what that run billed and what is left for another."""
    runs = list(BillingRun.objects.filter(run_on=run_on).order_by("created_at"))
    if not runs:
        return ""
    billed = Bill.objects.filter(bill_date=run_on).exclude(status=Bill.Status.VOID).count()
    try:
        left = next((d.unbilled for d in [last_billing_date(on_or_before=run_on)] if d and d.on == run_on), None)
    except ApplicationError:
        left = None
    left_words = "" if left is None else (
        f"; {left} account{'s' if left != 1 else ''} due on it {'are' if left != 1 else 'is'} not yet billed")
    return (f"{run_on} was run already ({len(runs)} run{'s' if len(runs) != 1 else ''}, the first on "
            f"{runs[0].created_at:%Y-%m-%d}; {billed} bill{'s' if billed != 1 else ''} dated {run_on}{left_words}). "
            "Tick this box to run it again: the new run bills only the accounts not yet billed for the date.")


def _field_of(error) -> str:
    return "accept_sample_rates" if error.field == "accept_sample_rates" else "run_on"


class BillingRunPagesMixin:
    """Start, preview and run pages of ``BillingRunAdmin``."""

    def run_page_urls(self):
        view = self.admin_site.admin_view
        return [path("start/", view(self.start_view), name="billing_billingrun_start"),
                path("preview/", view(self.preview_view), name="billing_billingrun_preview"),
                path("<int:run_id>/print-file/", view(self.print_file_view), name="billing_billingrun_print_file"),
                path("print-file/<int:pk>.pdf", view(self.print_file_download), name="billing_mailfile_download")]

    def print_file_view(self, request, run_id):
        """POST: make the run's print file for the mail house (a worker makes it; the run's page shows it)."""
        if request.method != "POST" or not self.has_view_permission(request):
            raise PermissionDenied
        run = get_object_or_404(BillingRun, pk=run_id)

        def request_file() -> str:
            mail_file_request(run=run, actor=request.user)
            return "The print file is being made, sorted by ZIP code; it is listed below when ready."

        return button_post(self, request, request_file, refused="No print file",
                           back=reverse("admin:billing_billingrun_change", args=[run.pk]) + "#mail")

    def print_file_download(self, request, pk):
        if not self.has_view_permission(request):
            raise PermissionDenied
        mail_file = get_object_or_404(MailFile, pk=pk, status=MailFile.Status.DONE)
        if not mail_file.file:
            raise Http404("this print file has no bills")
        response = FileResponse(mail_file.file.open("rb"), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="run-{mail_file.run_id}-print-file.pdf"'
        return response

    def start_view(self, request):
        """The start form: GET proposes a date (``?run_on=`` fills one in); POST with "Preview" shows the
        proof register, POST with "Start billing run" (or "Issue these bills" on the preview) starts a run."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method == "POST" and "_preview" in request.POST:
            form = StartRunForm(request.POST, preview=True)
            if form.is_valid():
                return HttpResponseRedirect(_preview_url(form.cleaned_data["run_on"],
                                                         form.cleaned_data["accept_sample_rates"]))
            return self._start_page(request, form)
        if request.method == "POST":
            form = StartRunForm(request.POST)
            if form.is_valid() and not form.cleaned_data["again"]:
                earlier = _earlier_run_words(form.cleaned_data["run_on"])
                if earlier:
                    form.add_error("again", earlier)
            if form.is_valid():
                try:
                    run = billing_run_start(run_on=form.cleaned_data["run_on"], actor=request.user,
                                            accept_sample_rates=form.cleaned_data["accept_sample_rates"])
                except ApplicationError as exc:
                    for error in exc.errors:
                        form.add_error(_field_of(error), error.message)
                else:
                    self.message_user(request, f"Billing run for {run.run_on} started.", messages.SUCCESS)
                    return HttpResponseRedirect(reverse("admin:billing_billingrun_change", args=[run.pk]))
            return self._start_page(request, form)
        return self._start_page(request, None)

    def _start_page(self, request, form: StartRunForm | None):
        try:
            proposals = billing_date_proposals(today=today())
        except ApplicationError:
            proposals = None  # no preset installed: the form still shows, and starting says why it cannot
        if form is None:
            try:
                chosen = forms.DateField().to_python(request.GET.get("run_on"))
            except forms.ValidationError:
                chosen = None  # a mistyped link: the proposed date instead
            form = StartRunForm(initial={
                # Nothing proposed (every account due is billed): the date is left for the clerk to choose.
                "run_on": chosen or (proposals.initial if proposals else today()),
                "accept_sample_rates": bool(request.GET.get("accept_sample_rates"))})
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "title": "Start a billing run", "proposals": proposals.dates if proposals else [],
                   "proposed": proposals.initial if proposals else None, "today": today(),
                   "preview_days": PREVIEW_DAYS_AHEAD, **_sample_rates_today(),
                   "calendar_citation": _calendar_citation()}
        return TemplateResponse(request, "admin/billing/billingrun/start.html", context)

    def preview_view(self, request):
        """The proof register of a run on ``?run_on=`` before issuing it (GET: writes nothing)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        if not request.GET.get("run_on"):
            # Linked without a date (the dashboard): the date the start form proposes.
            try:
                proposed = billing_date_proposals(today=today()).initial
            except ApplicationError:
                proposed = None
            if proposed is not None:
                return HttpResponseRedirect(_preview_url(proposed, bool(request.GET.get("accept_sample_rates"))))
        form = StartRunForm(request.GET, preview=True)
        if not form.is_valid():
            return self._start_page(request, form)
        run_on, accept = form.cleaned_data["run_on"], form.cleaned_data["accept_sample_rates"]
        try:
            proof = billing_run_proof(run_on=run_on, today=today(), accept_sample_rates=accept)
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(_field_of(error), error.message)
            return self._start_page(request, form)
        back = reverse("admin:billing_billingrun_start") + "?" + urlencode(
            {"run_on": run_on.isoformat(), **({"accept_sample_rates": "1"} if accept else {})})
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "proof": proof,
                   "title": f"Preview of the billing run for {fmt_day(run_on)}", "accept_sample_rates": accept,
                   "back": back, "can_issue": self.has_add_permission(request) and proof.issuable,
                   "may_start": self.has_add_permission(request)}
        return TemplateResponse(request, "admin/billing/billingrun/preview.html", context)

    def run_page_context(self, object_id) -> dict:
        """The run page's links to its bills and exceptions, and its bills by book."""
        run = BillingRun.objects.filter(pk=object_id).first() if str(object_id).isdigit() else None
        if run is None:
            return {}
        return {"run_bills": Bill.objects.filter(run=run).count(),
                "run_voided": Bill.objects.filter(run=run, status=Bill.Status.VOID).count(),
                "run_exceptions": BillingException.objects.filter(run=run).count(),
                "run_register": billing_run_register(run=run),
                "mail_files": list(run.mail_files.all()[:5]),
                "mail_file_waiting": run.mail_files.filter(status=MailFile.Status.QUEUED).exists(),
                "mail_file_url": reverse("admin:billing_billingrun_print_file", args=[run.pk]),
                "mail_messages": list(BillMessage.objects.filter(first_bill_date__lte=run.run_on,
                                                                 last_bill_date__gte=run.run_on))}


class BillingExceptionPagesMixin:
    """A held bill's own page: the account's recent readings and bills, and "Release: bill as read"."""

    change_form_template = "admin/billing/billingexception/change_form.html"

    def get_urls(self):
        return [path("<int:pk>/release/", self.admin_site.admin_view(self.release_view),
                     name="billing_billingexception_release"),
                *super().get_urls()]

    def change_view(self, request, object_id, form_url="", extra_context=None):
        exception = (BillingException.objects.filter(pk=object_id).select_related("account").first()
                     if str(object_id).isdigit() else None)
        context = {}
        if exception is not None:
            context = {
                "can_release": (exception.kind == BillingException.Kind.HIGH_USAGE
                                and exception.status == BillingException.Status.OPEN
                                and self.has_change_permission(request, exception)),
                "recent_readings": list(Reading.objects.filter(meter__installations__account=exception.account)
                                        .select_related("meter").order_by("-read_on", "-id")
                                        .distinct()[:HISTORY_ROWS]),
                "recent_bills": list(Bill.objects.filter(account=exception.account)
                                     .order_by("-bill_date", "-id")[:HISTORY_ROWS]),
            }
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), **context})

    def release_view(self, request, pk):
        """The "Release: bill as read" button of an open high-usage hold (POST only)."""
        exception = get_object_or_404(BillingException, pk=pk)
        if request.method != "POST" or not self.has_change_permission(request, exception):
            raise PermissionDenied

        def release() -> str:
            billing_exception_release(exception=exception, actor=request.user)
            return f"Released: {exception.account} is billed as read on the next run for {exception.bill_date}."

        return button_post(self, request, release, refused="Not released",
                           back=reverse("admin:billing_billingexception_change", args=[pk]))


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

        def retry() -> str:
            billing_run_retry(run_id=run_id, actor=request.user)
            return f"Billing run {run_id} retried."

        return button_post(self, request, retry, refused="The run was not retried",
                           back=reverse("admin:billing_billingrun_change", args=[run_id]))

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
        def release(exception: BillingException) -> str:
            billing_exception_release(exception=exception, actor=request.user)
            return ""  # one message for them all, below

        released = act_on_each(self, request, queryset, release,
                               refused=lambda exception, exc: f"{exception.account}: {exc}")
        if released:
            self.message_user(request, f"Released {released}; the next billing run bills them.", messages.SUCCESS)
