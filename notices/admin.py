"""What the office told each customer, for the clerk: read only, with the paper notices to print and mail (the
action prints them in one PDF, with the bill's letterhead, sorted by ZIP code as the bills' print file is, and marks
them sent)."""

from django.contrib import admin, messages
from django.http import HttpResponse
from django.utils import timezone

from billing.ordinance import ordinance_on
from billing.services.mail_files import zip_code
from core.admin import ReadOnlyAdmin
from core.documents import PdfInfo, pdf_one_file
from core.papers import STYLESHEET, TEMPLATE, Paper
from termination.policy import termination_policy

from .models import CustomerNotice


@admin.register(CustomerNotice)
class CustomerNoticeAdmin(ReadOnlyAdmin):
    list_display = ("created_at", "account", "kind", "channel", "language", "sent_to", "sent_at", "error")
    list_filter = ("kind", "channel", ("sent_at", admin.EmptyFieldListFilter), "language")
    search_fields = ("account__account_no", "sent_to", "subject")
    list_select_related = ("account",)
    date_hierarchy = "created_at"
    readonly_fields = ("account", "kind", "fact", "language", "channel", "sent_to", "subject", "body", "created_at",
                       "sent_at", "error")
    actions = ["print_paper"]

    def has_change_permission(self, request, obj=None):
        # Viewing, and the print action (which marks paper notices sent), need the change permission; the notice
        # itself is never edited (its fields are read only).
        return request.user.has_perm("notices.change_customernotice")

    @admin.action(description="Print the paper notices chosen (PDF) and mark them mailed")
    def print_paper(self, request, queryset):
        paper = list(queryset.filter(channel=CustomerNotice.Channel.PAPER).select_related("account__owner"))
        # In the mail house's order, as the bills' print file: by the ZIP code of the address, then account.
        paper.sort(key=lambda n: (zip_code(n.sent_to), n.account.account_no, n.pk))
        if not paper:
            self.message_user(request, "None of these is a paper notice.", messages.WARNING)
            return None
        utility = ordinance_on(timezone.localdate()).utility
        policy = termination_policy()  # the office's address and telephone, as on every paper it sends
        header = "\n".join([policy.office_address, policy.phone]).strip()
        now = timezone.now()
        papers = [Paper(title=n.subject, utility_name=utility.name, utility_header=header,
                        facts=[("Account number", n.account.account_no)], addressee=n.sent_to,
                        paragraphs=[line.strip() for line in n.body.splitlines() if line.strip()], table=[],
                        warning="",
                        footer=f"{utility.name}, account {n.account.account_no}.", created_at=now,
                        lang=n.language) for n in paper]
        pdf = pdf_one_file(template=TEMPLATE, stylesheet=STYLESHEET, context_name="papers", documents=papers,
                           info=PdfInfo(title="Notices to mail", author=utility.name, created=now), batch=25)
        CustomerNotice.objects.filter(pk__in=[n.pk for n in paper], sent_at__isnull=True).update(sent_at=now)
        response = HttpResponse(pdf, content_type="application/pdf")
        response["Content-Disposition"] = f'attachment; filename="notices-{now:%Y%m%d}.pdf"'
        return response
