"""The Conversion page of the admin: check an opening-balances file (or another system's export through a mapping)
and run a period's bills in parallel with the old system's — the same as ``manage.py convert check`` and
``convert parallel``, with every problem listed under the file it is in. Nothing on this page saves anything.

Like the Reports page, conversion has no model to hang a ModelAdmin on: ``register_urls`` adds the page to the
admin site at ``admin:conversion``, under the admin's login; staff who may view bills may use it.
"""

from django import forms
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.template.response import TemplateResponse
from django.urls import path

from core.clock import today
from core.errors import ApplicationError

from .opening import KINDS, mapping_parse, opening_balances_read
from .parallel import STATUS_WORDS, parallel_run

PERMISSION = "billing.view_bill"
DATE_WIDGET = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})


class CheckForm(forms.Form):
    file = forms.FileField(label="Opening balances (CSV)",
                           help_text="account_no,bill_no,bill_date,due_date,kind,amount,description — or another "
                                     "system's export with a mapping.")
    mapping = forms.FileField(label="Mapping (TOML)", required=False,
                              help_text="Renames the export's columns, charge codes and date format "
                                        "(fixtures/conversion/example_mapping.toml is a worked one).")


class ParallelForm(forms.Form):
    legacy = forms.FileField(label="The old system's bills (CSV)", help_text="account_no,bill_date,kind,amount")
    bill_date = forms.DateField(label="Our bill date", widget=DATE_WIDGET,
                                help_text="The run that bills the same period (previewed, nothing issued).")


def _refused(form: forms.Form, exc: ApplicationError, *, field: str) -> list:
    """The refusals of a file: those naming a line listed below the form, the others under the field."""
    lines = [error for error in exc.errors if error.line]
    for error in exc.errors:
        if not error.line:
            form.add_error(field if error.field not in form.fields else error.field, error.message)
    if lines:
        form.add_error(field, f"{exc.error_count} problem(s) on {exc.error_lines or len(lines)} line(s); nothing "
                              "was saved")
    return lines


def conversion_view(request):
    if not request.user.has_perm(PERMISSION):
        raise PermissionDenied
    chosen = request.POST.get("form") if request.method == "POST" else None
    check = CheckForm(request.POST if chosen == "check" else None, request.FILES if chosen == "check" else None,
                      prefix="check")
    parallel = ParallelForm(request.POST if chosen == "parallel" else None,
                            request.FILES if chosen == "parallel" else None, prefix="parallel")
    context = {"check": check, "parallel": parallel, "kinds": KINDS, "status_words": STATUS_WORDS, "problems": []}
    if chosen == "check" and check.is_valid():
        try:
            mapping = None
            if check.cleaned_data["mapping"]:
                upload = check.cleaned_data["mapping"]
                mapping = mapping_parse(upload.read(), name=upload.name)
            checked = opening_balances_read(check.cleaned_data["file"], as_of=today(), mapping=mapping)
        except ApplicationError as exc:
            context["problems"] = _refused(check, exc, field="file")
        else:
            context["checked"] = checked
            context["by_kind"] = [(kind, checked.by_kind.get(kind)) for kind in KINDS]
    if chosen == "parallel" and parallel.is_valid():
        try:
            result = parallel_run(legacy=parallel.cleaned_data["legacy"], run_on=parallel.cleaned_data["bill_date"],
                                  today=today())
        except ApplicationError as exc:
            context["problems"] = _refused(parallel, exc, field="legacy")
        else:
            context["compared"] = result
            context["counts"] = [(words, result.count(status)) for status, words in STATUS_WORDS.items()]
    return TemplateResponse(request, "admin/conversion/conversion.html", {
        **admin.site.each_context(request), "title": "Conversion from another system", **context})


def register_urls(site: admin.AdminSite) -> None:
    """Put the Conversion page at ``conversion/`` of the site, in its ``admin`` namespace."""
    site_urls = site.get_urls

    def get_urls():
        return [path("conversion/", site.admin_view(conversion_view), name="conversion"), *site_urls()]

    site.get_urls = get_urls


register_urls(admin.site)
