"""What the office told each customer, for the clerk: read only, with the paper notices to print and mail (the
action prints them in one PDF, with the bill's letterhead, sorted by ZIP code as the bills' print file is, and marks
them sent)."""

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, Http404, HttpResponse
from django.urls import path
from django.utils import timezone

from core.admin import ReadOnlyAdmin
from core.dates import iso_date

from .models import CustomerNotice, NoticePreference, TextConsent
from .printing import paper_notices_pdf, print_file_path


@admin.register(CustomerNotice)
class CustomerNoticeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "kind", "channel", "language", "sent_to", "sent_at", "printed_on",
                    "error")
    list_filter = ("kind", "channel", ("sent_at", admin.EmptyFieldListFilter), "language")
    search_fields = ("account__account_no", "sent_to", "subject")
    list_select_related = ("account",)
    date_hierarchy = "created_at"
    readonly_fields = ("account", "kind", "fact", "language", "channel", "sent_to", "subject", "body", "created_at",
                       "send_after", "sent_at", "printed_on", "error")
    actions = ["print_paper"]
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
        return [path("print-files/<str:day>/", self.admin_site.admin_view(self.print_file),
                     name="notices_customernotice_print_file"), *super().get_urls()]

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

    list_display = ("account", "by_email", "by_text", "text_number", "by_paper", "text_problem", "updated_at")
    list_filter = ("by_email", "by_text", "by_paper", ("text_problem", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "text_number")
    list_select_related = ("account",)


@admin.register(TextConsent)
class TextConsentAdmin(ReadOnlyAdmin):
    """Each consent to text messages as given (the words, when, the number, by whom) and how it ended."""

    list_display = ("account", "number", "given_at", "given_how", "ended_at", "ended_how")
    search_fields = ("account__account_no", "number")
    list_select_related = ("account",)
