"""What the office told each customer, for the clerk: read only, with the paper notices to print and mail (the
action prints them in one PDF, with the bill's letterhead, sorted by ZIP code as the bills' print file is, and marks
them sent)."""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template import Context, Engine
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme

from accounts.models import Account
from core.admin import HistoryAdmin, ReadOnlyAdmin
from core.dates import iso_date
from core.errors import ApplicationError
from ordinance.selectors import installed_utility

from .models import CustomerNotice, NoticePreference, NoticeTemplate, TextConsent, TextNumber
from .printing import paper_notices_pdf, print_file_path
from .services import notice_on_paper, notice_send_again
from .wording import VARIABLES, shipped_words, variables_of, wording_check


@admin.register(CustomerNotice)
class CustomerNoticeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "kind", "channel", "language", "sent_to", "sent_at", "printed_on",
                    "state")
    list_filter = ("kind", "channel", ("sent_at", admin.EmptyFieldListFilter),
                   ("failed_at", admin.EmptyFieldListFilter), ("withdrawn_at", admin.EmptyFieldListFilter), "language")
    search_fields = ("account__account_no", "sent_to", "subject")
    list_select_related = ("account",)
    date_hierarchy = "created_at"
    readonly_fields = ("account", "kind", "fact", "language", "channel", "sent_to", "subject", "body", "created_at",
                       "send_after", "sent_at", "printed_on", "state", "attempts", "next_try_at", "tries_shown")
    fields = readonly_fields
    actions = ["print_paper", "send_again"]

    @admin.display(description="state")
    def state(self, obj):
        return obj.state

    @admin.display(description="every try")
    def tries_shown(self, obj):
        tries = list(obj.tries.all())
        if not tries:
            return "—"
        return format_html_join("", "<div>{}: {}</div>", ((timezone.localtime(t.at).strftime("%b %-d, %Y %-I:%M %p"),
                                                            "sent" if t.sent else t.error) for t in tries))

    @admin.action(description="Send the notices chosen again (those that failed or wait to be tried again)")
    def send_again(self, request, queryset):
        sent = tried = 0
        for notice in queryset.filter(sent_at__isnull=True, withdrawn_at__isnull=True).exclude(
                channel=CustomerNotice.Channel.PAPER).exclude(error=""):
            tried += 1
            sent += notice_send_again(notice)
        self.message_user(request, f"{sent} of {tried} sent.", messages.SUCCESS if sent == tried else messages.WARNING)

    def _one(self, request, pk: int, do) -> HttpResponseRedirect:
        if request.method != "POST" or not self.has_change_permission(request):
            raise PermissionDenied
        notice = get_object_or_404(CustomerNotice, pk=pk)
        try:
            said = do(notice)
        except ApplicationError as exc:
            self.message_user(request, str(exc), messages.ERROR)
        else:
            self.message_user(request, said, messages.SUCCESS)
        back = request.META.get("HTTP_REFERER") or reverse("admin:accounts_account_change", args=[notice.account_id])
        return HttpResponseRedirect(back if url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()})
                                    else reverse("admin:accounts_account_change", args=[notice.account_id]))

    def send_again_view(self, request, pk: int):
        def do(notice):
            if notice_send_again(notice):
                return f"Sent: {notice.subject}."
            notice.refresh_from_db()
            return f"Not sent: {notice.state}."
        return self._one(request, pk, do)

    def on_paper_view(self, request, pk: int):
        def do(notice):
            paper = notice_on_paper(notice)
            return f"A paper copy of {paper.subject!r} is ready to print and mail (Notices to customers → print)."
        return self._one(request, pk, do)
    change_list_template = "admin/notices/customernotice/change_list.html"

    def has_change_permission(self, request, obj=None):
        # Viewing, and the print action (which marks paper notices sent), need the change permission; the notice
        # itself is never edited (its fields are read only).
        return request.user.has_perm("notices.change_customernotice")

    @admin.action(description="Print the paper notices chosen (PDF) and mark them mailed")
    def print_paper(self, request, queryset):
        paper = list(queryset.filter(channel=CustomerNotice.Channel.PAPER).select_related("account__owner"))
        if not paper:
            self.message_user(request, "None of these is a paper notice.", messages.WARNING)
            return None
        today = timezone.localdate()
        response = HttpResponse(paper_notices_pdf(paper, on=today), content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="notices-{today:%Y%m%d}.pdf"'
        return response

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("print-files/<str:day>/", view(self.print_file), name="notices_customernotice_print_file"),
                path("<int:pk>/send-again/", view(self.send_again_view), name="notices_customernotice_send_again"),
                path("<int:pk>/on-paper/", view(self.on_paper_view), name="notices_customernotice_on_paper"),
                *super().get_urls()]

    def print_file(self, request, day: str):
        """The nightly job's print file of a day's paper notices."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        try:
            found = print_file_path(iso_date(day))
        except ValueError:
            raise Http404("no such day") from None
        if not found.exists():
            raise Http404("no print file that day")
        return FileResponse(found.open("rb"), as_attachment=True, filename=found.name)

    def changelist_view(self, request, extra_context=None):
        folder = print_file_path(timezone.localdate()).parent
        files = sorted(folder.glob("paper-notices-*.pdf"), reverse=True)[:10] if folder.exists() else []
        days = [f.stem.removeprefix("paper-notices-") for f in files]
        return super().changelist_view(request, {**(extra_context or {}), "print_files": days})


@admin.register(NoticePreference)
class NoticePreferenceAdmin(ReadOnlyAdmin):
    """How each customer chose to hear from the office (set on the portal), and why texts stopped if they did."""

    list_display = ("account", "by_email", "by_text", "text_number", "by_paper", "email_problem", "text_problem",
                    "updated_at")
    list_filter = ("by_email", "by_text", "by_paper", ("email_problem", admin.EmptyFieldListFilter),
                   ("text_problem", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "text_number")
    list_select_related = ("account",)


@admin.register(TextConsent)
class TextConsentAdmin(ReadOnlyAdmin):
    """Each consent to text messages as given (the words, when, the number, by whom) and how it ended."""

    list_display = ("account", "number", "given_at", "given_how", "ended_at", "ended_how")
    search_fields = ("account__account_no", "number")
    list_select_related = ("account",)


@admin.register(TextNumber)
class TextNumberAdmin(ReadOnlyAdmin):
    """Each mobile number as a number: whether it replied STOP (and START since), and every consent any account gave
    for it, with how each ended — the number's consent history."""

    list_display = ("number", "stopped_at", "stopped_how", "started_at")
    list_filter = (("stopped_at", admin.EmptyFieldListFilter),)
    search_fields = ("number",)
    fields = readonly_fields = ("number", "stopped_at", "stopped_how", "started_at", "consents")

    @admin.display(description="consents given for this number")
    def consents(self, obj):
        rows = TextConsent.objects.filter(number=obj.number).select_related("account").order_by("given_at", "id")
        return format_html_join("", "<div>{} · {} · {}{}</div>", (
            (c.account.account_no, timezone.localtime(c.given_at).strftime("%b %-d, %Y %-I:%M %p"), c.given_how,
             f" · ended {timezone.localtime(c.ended_at):%b %-d, %Y}: {c.ended_how}" if c.ended_at else "")
            for c in rows)) or "—"


class NoticeWordingForm(forms.ModelForm):
    class Meta:
        model = NoticeTemplate
        fields = ("kind", "language", "subject", "body")
        widgets = {"body": forms.Textarea(attrs={"rows": 16, "cols": 100})}

    def clean(self):
        data = super().clean()
        if data.get("kind") and data.get("subject") is not None and data.get("body") is not None:
            try:
                wording_check(data["kind"], data["subject"], data["body"])
            except ApplicationError as exc:
                for error in exc.errors:
                    self.add_error(error.field or None, error.message)
        return data


# What the preview fills in where the notice's own facts would be (the account and the office are real).
PREVIEW_SAMPLES = {"bill_number": "202602-1-0001", "amount": "$186.13", "due_on": "March 1, 2026",
                   "past_due": "$195.44", "pay_by": "April 1, 2026", "next_on": "April 2, 2026",
                   "next_charge": "Late payment penalty: 1% (month 2)", "citation": "§ 45.29 E",
                   "read_on": "April 1, 2026", "detail": "36,000 gal in 90 days (400 gal/day)", "alert_kind": "high",
                   "paid_on": "February 20, 2026", "why": "your bank returned the check unpaid", "fee": "$20.00",
                   "owed": "$186.13", "code": "R01", "reason": "Insufficient funds", "closed_on": "March 31, 2026",
                   "on": "April 25, 2026", "payment": {"reference": "CHK-1042"},
                   "enrolment": {"account_last4": "6789"}, "case": {"number": "T-2026-0007"}}


@admin.register(NoticeTemplate)
class NoticeWordingAdmin(HistoryAdmin):
    """The office's words for each notice, in English and Spanish: start from the shipped words, use the variables
    listed, preview on a real account (``?preview=ACCOUNT_NO``); every change is kept (History)."""

    form = NoticeWordingForm
    list_display = ("kind", "language", "subject", "updated_at")
    list_filter = ("kind", "language")
    readonly_fields = ("variables", "preview")

    def get_fields(self, request, obj=None):
        return ("kind", "language", "subject", "body", "variables", "preview")

    def get_changeform_initial_data(self, request):
        initial = super().get_changeform_initial_data(request)
        kind, language = request.GET.get("kind"), request.GET.get("language", "en")
        if kind in VARIABLES and language in dict(settings.LANGUAGES):
            initial["subject"], initial["body"] = shipped_words(kind, language)
        else:
            initial.setdefault("body", "Choose the notice and language above, then open "
                                       "?kind=KIND&language=en to start from the shipped words.")
        return initial

    def get_form(self, request, obj=None, **kwargs):
        self._request = request
        return super().get_form(request, obj, **kwargs)

    @admin.display(description="variables it may use")
    def variables(self, obj):
        kind = obj.kind if obj and obj.pk else self._request.GET.get("kind", "")
        return format_html_join("", "<div><code>{{{{ {} }}}}</code>: {}</div>", variables_of(kind).items()) or \
            "Choose the notice first."

    @admin.display(description="preview on a real account")
    def preview(self, obj):
        if not obj or not obj.pk:
            return "Save to see it on a real account."
        account_no = self._request.GET.get("preview", "")
        account = (Account.objects.filter(account_no=account_no).first() if account_no else None) or \
            Account.objects.filter(notices__kind=obj.kind).order_by("-notices__created_at").first() or \
            Account.objects.order_by("account_no").first()
        if account is None:
            return "No account to preview on yet."
        utility = installed_utility()
        context = Context({**PREVIEW_SAMPLES, "account": account, "utility": utility,
                           "site_url": settings.SITE_URL}, autoescape=False)
        engine = Engine(autoescape=False, builtins=[])
        text = engine.from_string(obj.subject).render(context) + "\n\n" + engine.from_string(obj.body).render(context)
        return format_html("<p>Account {} (another: add <code>?preview=ACCOUNT_NO</code> to the address).</p>"
                           "<pre style='white-space: pre-wrap'>{}</pre>", account.account_no, text)
