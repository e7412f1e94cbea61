"""The Conversion page of the admin: import the old system's accounts (through the mapping), check an
opening-balances file (or another system's export through a mapping),
post it as a batch on its cutover, reconcile the posted batches with the books (on the page, or as CSV, JSON and
PDF), roll a batch back, and run a period's bills in parallel with the old system's — the same as ``manage.py
convert check``, ``post``, ``reconcile``, ``rollback`` and ``parallel``, with every problem listed under the file
it is in.

``core.admin.admin_page_register`` adds the page to the admin site at ``admin:conversion``, under the admin's
login: staff who may view bills may check, compare and reconcile; importing accounts needs the permission to add
accounts; asking for a post needs the permission to add conversion batches, and a second supervisor (one who did
not ask) approves it before a worker checks and posts it; a rollback needs the permission to change them.
"""


from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse

from core.admin import DATE_WIDGET, admin_page_register
from core.approval import approval_who, approval_withdraw
from core.clock import today
from core.errors import ApplicationError
from reports.admin import DOWNLOADS, report_download
from reports.render import printed

from .account_file import accounts_import_job_start
from .control import control_refuse
from .jobs import conversion_job_create, conversion_job_decide
from .models import ConversionBatch, ConversionJob
from .opening import KINDS, mapping_parse
from .parallel import STATUS_WORDS, parallel_run
from .posting import conversion_read, conversion_rollback, rollback_refusal
from .reconcile import reconciliation, reconciliation_view
from .tasks import conversion_job_run

PERMISSION = "conversion.view_conversionbatch"  # the clerk's (check, bring accounts over), the supervisor's
POST_PERMISSION = "conversion.add_conversionbatch"
ACCOUNTS_PERMISSION = "accounts.add_account"
ROLLBACK_PERMISSION = "conversion.change_conversionbatch"


class AccountsForm(forms.Form):
    file = forms.FileField(label="Accounts (CSV)",
                           help_text="The old system's account master: import_accounts' columns (account_no,book,"
                                     "category,owner_name,…,initial_read_date[,status]) — or its own export with a "
                                     "mapping.")
    mapping = forms.FileField(label="Mapping (TOML)", required=False,
                              help_text="Its [accounts] tables rename the export's columns and its class, meter-size "
                                        "and status codes (fixtures/conversion/example_mapping.toml is a worked one).")
    as_of = forms.DateField(label="Import date", widget=DATE_WIDGET, initial=today,
                            help_text="Nothing in the file may be dated after it.")


class CheckForm(forms.Form):
    file = forms.FileField(label="Opening balances (CSV)",
                           help_text="account_no,bill_no,bill_date,due_date,kind,amount,description — or another "
                                     "system's export with a mapping.")
    mapping = forms.FileField(label="Mapping (TOML)", required=False,
                              help_text="Renames the export's columns, charge codes and date format "
                                        "(fixtures/conversion/example_mapping.toml is a worked one).")
    history = forms.FileField(label="Past bills (CSV)", required=False,
                              help_text="account_no,bill_no,bill_date,due_date,period_start,period_end,gallons,kind,"
                                        "amount — shown and read for usage, never owed.")
    payments = forms.FileField(label="Past payments (CSV)", required=False,
                               help_text="account_no,paid_on,amount,reference — paid to the old system.")
    devices = forms.FileField(label="Backflow devices (CSV)", required=False,
                              help_text="account_no,serial,type,size,make,model,location,installed_on,tested_on,result,"
                                        "tester_certification,tester_name,tester_certification_expires")
    contacts = forms.FileField(label="E-mail and paperless (CSV)", required=False,
                               help_text="account_no,email,paperless — the owner's address; paperless yes or no.")
    notes = forms.FileField(label="Account notes (CSV)", required=False,
                            help_text="account_no,written_on,author,note — the notes the old system kept, dated.")
    plans = forms.FileField(label="Payment plans in force (CSV)", required=False,
                            help_text="account_no,agreed_on,due_on,amount — one row per installment still to pay.")
    cases = forms.FileField(label="Termination cases in progress (CSV)", required=False,
                            help_text="account_no,opened_on,served_on,method,article_number,hearing_on,"
                                      "request_received_on,determined_on,outcome — each at its stage.")
    relevied = forms.FileField(label="Already relevied to the tax roll (CSV)", required=False,
                               help_text="account_no,relevied_on,tax_roll,amount — history, not owed.")
    control = forms.FileField(label="The old system's control report (CSV)", required=False,
                              help_text="total,value rows (accounts, open_bills, water, fee, …, owed): the file is "
                                        "refused when any total differs from it by a cent.")


class PostForm(CheckForm):
    cutover = forms.DateField(label="Cutover", widget=DATE_WIDGET,
                              help_text="The first day on our books: the file is what was owed at the close of the "
                                        "day before. Not after today.")
    confirm = forms.BooleanField(label="Post it", help_text="The file is checked again; any problem posts nothing, "
                                                           "and the same file posts once.")


class ReconcileForm(forms.Form):
    cutover = forms.DateField(label="Cutover", widget=DATE_WIDGET)


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


def _mapping(form: forms.Form):
    upload = form.cleaned_data["mapping"]
    return mapping_parse(upload.read(), name=upload.name) if upload else None


def _bound(cls, request, chosen: str, name: str):
    return cls(request.POST if chosen == name else None, request.FILES if chosen == name else None, prefix=name)


def conversion_view(request):
    if not request.user.has_perm(PERMISSION):
        raise PermissionDenied
    chosen = request.POST.get("form") if request.method == "POST" else None
    if chosen == "rollback":
        return _rollback(request)
    if chosen == "decide":
        return _decide(request)
    accounts = _bound(AccountsForm, request, chosen, "accounts")
    if chosen == "accounts":
        if not request.user.has_perm(ACCOUNTS_PERMISSION):
            raise PermissionDenied
        started = _accounts_start(request, accounts)
        if started is not None:
            return started
    check, post = _bound(CheckForm, request, chosen, "check"), _bound(PostForm, request, chosen, "post")
    parallel = _bound(ParallelForm, request, chosen, "parallel")
    reconcile = ReconcileForm(request.GET if "reconcile-cutover" in request.GET else None, prefix="reconcile")
    can_post, can_roll_back = request.user.has_perm(POST_PERMISSION), request.user.has_perm(ROLLBACK_PERMISSION)
    context = {"accounts": accounts if request.user.has_perm(ACCOUNTS_PERMISSION) else None,
               "check": check, "post": post if can_post else None, "parallel": parallel, "reconcile": reconcile,
               "kinds": KINDS, "status_words": STATUS_WORDS, "problems": [],
               "waiting": ConversionJob.objects.filter(status=ConversionJob.Status.WAITING)
               .select_related("created_by"),
               "batches": [(batch, rollback_refusal(batch) if can_roll_back else "you may not roll back conversions")
                           for batch in ConversionBatch.objects.select_related("posted_by")[:50]]}
    if chosen == "check" and check.is_valid():
        try:
            checked, history = conversion_read(check.cleaned_data["file"], as_of=today(), mapping=_mapping(check),
                                               bills=check.cleaned_data["history"],
                                               payments=check.cleaned_data["payments"],
                                               devices=check.cleaned_data["devices"],
                                               contacts=check.cleaned_data["contacts"],
                                               notes=check.cleaned_data["notes"],
                                               plans=check.cleaned_data["plans"],
                                               cases=check.cleaned_data["cases"],
                                               relevied=check.cleaned_data["relevied"])
            if check.cleaned_data["control"]:
                control_refuse(checked, check.cleaned_data["control"].read())
        except ApplicationError as exc:
            context["problems"] = _refused(check, exc, field="control" if any(
                e.field == "control" for e in exc.errors) else "file")
        else:
            context["checked"], context["history"] = checked, history
            context["by_kind"] = [(kind, checked.by_kind.get(kind)) for kind in KINDS]
    if chosen == "post":
        if not can_post:
            raise PermissionDenied
        if post.is_valid():
            if post.cleaned_data["cutover"] > today():
                post.add_error("cutover", f"{post.cleaned_data['cutover']} is after today: post the files on or after "
                                          "their cutover, when the old system's books are closed")
            else:
                job = conversion_job_create(cutover=post.cleaned_data["cutover"], opening=post.cleaned_data["file"],
                                           history=post.cleaned_data["history"],
                                           payments=post.cleaned_data["payments"],
                                           devices=post.cleaned_data["devices"],
                                           contacts=post.cleaned_data["contacts"],
                                           notes=post.cleaned_data["notes"], plans=post.cleaned_data["plans"],
                                           cases=post.cleaned_data["cases"],
                                           relevied=post.cleaned_data["relevied"], control=post.cleaned_data["control"],
                                           mapping=post.cleaned_data["mapping"], actor=request.user)
                messages.info(request, f"Conversion post {job.pk} asked for: a supervisor other than you approves it, "
                                       "and only then is it checked again and posted.")
                return HttpResponseRedirect(f"{reverse('admin:conversion')}?job={job.pk}")
    job = _job(request)
    if job is not None:
        context["job"] = job
        context["can_decide"] = (job.status == ConversionJob.Status.WAITING and job.created_by_id != request.user.pk
                                 and request.user.has_perm(ConversionJob.approval.permission))
        context["approval_who"] = approval_who(job)
        if job.status in (ConversionJob.Status.POSTED, ConversionJob.Status.ALREADY) and job.batch \
                and "reconcile-cutover" not in request.GET:
            reconcile = ReconcileForm({"reconcile-cutover": job.batch.cutover}, prefix="reconcile")
            context["reconcile"] = reconcile
    if reconcile.is_bound and reconcile.is_valid():
        try:
            view = reconciliation_view(reconciliation(cutover=reconcile.cleaned_data["cutover"]))
        except ApplicationError as exc:
            for error in exc.errors:
                reconcile.add_error("cutover", error.message)
        else:
            wanted = request.GET.get("format")
            if wanted in DOWNLOADS:
                return report_download(view, wanted)
            context["reconciled"] = view
            context["reconciled_tables"] = [printed(table) for table in view.tables]
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


def _accounts_start(request, form: AccountsForm):
    """The accounts import started as a job (its page next), or None with the form's refusals."""
    if not form.is_valid():
        return None
    as_of = form.cleaned_data["as_of"]
    if as_of > today():
        form.add_error("as_of", f"{as_of} is after today: accounts are imported as of a day that has come")
        return None
    try:
        mapping = _mapping(form)
        job, closed = accounts_import_job_start(form.cleaned_data["file"], mapping=mapping and mapping.accounts,
                                                as_of=as_of, actor=request.user)
    except ApplicationError as exc:
        for error in exc.errors:
            form.add_error("mapping" if error.field == "mapping" else "file",
                           f"line {error.line}: {error.field}: {error.message}" if error.line else error.message)
        return None
    if closed:
        messages.info(request, f"{closed} closed account{'s' if closed != 1 else ''} of the export left out. To bring "
                               "closed accounts over with their final bills, name the column of the day each "
                               "closed in the mapping's [accounts.columns] closed_on.")
    return HttpResponseRedirect(reverse("admin:accounts_account_import_job", args=[job.pk]))


def _job(request) -> ConversionJob | None:
    try:
        number = int(request.GET.get("job", ""))
    except ValueError:
        return None
    return ConversionJob.objects.select_related("batch").filter(pk=number).first()


def _decide(request):
    """A second supervisor approves a conversion post (handed to the workers) or refuses it with a note."""
    job = ConversionJob.objects.filter(pk=int(request.POST.get("job", "0") or 0)
                                       if request.POST.get("job", "").isdigit() else 0).first()
    if job is None:
        messages.error(request, "Nothing decided: there is no such conversion post.")
        return HttpResponseRedirect(reverse("admin:conversion"))
    if "withdraw" in request.POST:
        try:
            approval_withdraw(job, actor=request.user, note=request.POST.get("note", ""))
        except ApplicationError as exc:
            messages.error(request, "Not withdrawn: " + "; ".join(e.message for e in exc.errors) + ".")
        else:
            messages.success(request, f"Conversion post {job.pk} withdrawn: nothing was posted.")
        return HttpResponseRedirect(f"{reverse('admin:conversion')}?job={job.pk}")
    approve = "approve" in request.POST
    try:
        conversion_job_decide(job, approve=approve, note=request.POST.get("note", ""), actor=request.user)
    except ApplicationError as exc:
        messages.error(request, "Nothing decided: " + "; ".join(e.message for e in exc.errors) + ".")
    else:
        if approve:
            transaction.on_commit(lambda: conversion_job_run.delay(job.pk))
        else:
            messages.success(request, f"Conversion post {job.pk} refused: nothing was posted.")
    return HttpResponseRedirect(f"{reverse('admin:conversion')}?job={job.pk}")


def _rollback(request):
    if not request.user.has_perm(ROLLBACK_PERMISSION):
        raise PermissionDenied
    try:
        batch = conversion_rollback(int(request.POST.get("batch", "0") or 0), actor=request.user)
    except (ApplicationError, ValueError) as exc:
        words = "; ".join(e.message for e in exc.errors) if isinstance(exc, ApplicationError) else "no such batch"
        messages.error(request, f"Not rolled back: {words}.")
    else:
        messages.success(request, f"Rolled back conversion {batch.pk} ({batch.file_name}): what it brought over is "
                                  "removed; the books are as they were before it.")
    return HttpResponseRedirect(reverse("admin:conversion"))


admin_page_register(admin.site, "conversion/", conversion_view, "conversion")
