"""What the termination admin pages share: the installed policy, permissions, dates and PDFs."""

from datetime import date

from django.http import FileResponse

from core.admin import ServicePagesAdmin, installed, parse_day

from ..policy import TerminationPolicy, termination_policy

PERMISSIONS = {"change": "termination.change_terminationcase",
               "determine": "termination.determine_terminationcase",
               "order": "termination.order_terminationcase",
               # The crew that went: a shut-off carried out, service restored (the supervisor too).
               "carry_out": "termination.carry_out_terminationcase"}


def installed_policy() -> TerminationPolicy | None:
    return installed(termination_policy)


class TerminationAdmin(ServicePagesAdmin):
    """A termination page: its forms each call one service under the installed preset's termination rules."""

    rules = staticmethod(termination_policy)
    rules_words = "termination"
    form_template = "admin/termination/form.html"


def pdf_response(stored, filename: str) -> FileResponse:
    return FileResponse(stored.open("rb"), content_type="application/pdf", filename=filename)


def day_param(request, name: str) -> date | None:
    return parse_day(request.GET.get(name) or request.POST.get(name))
