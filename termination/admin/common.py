"""What the termination admin pages share: the installed policy, permissions, dates and PDFs."""

from datetime import date

from django.contrib import messages
from django.http import FileResponse, HttpResponseRedirect
from django.urls import reverse

from core.admin import parse_day
from core.errors import ApplicationError

from ..policy import TerminationPolicy, termination_policy

PERMISSIONS = {"change": "termination.change_terminationcase",
               "determine": "termination.determine_terminationcase",
               "order": "termination.order_terminationcase"}
FORM_TEMPLATE = "admin/termination/form.html"


def installed_policy() -> TerminationPolicy | None:
    try:
        return termination_policy()
    except ApplicationError:
        return None


def no_policy_redirect(request) -> HttpResponseRedirect:
    messages.error(request, "No preset with termination rules is installed (manage.py setup_utility PRESET).")
    return HttpResponseRedirect(reverse("admin:index"))


def pdf_response(stored, filename: str) -> FileResponse:
    return FileResponse(stored.open("rb"), content_type="application/pdf", filename=filename)


def day_param(request, name: str) -> date | None:
    return parse_day(request.GET.get(name) or request.POST.get(name))
