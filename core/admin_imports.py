"""The "Import CSV" page an importer gets on a ModelAdmin's change list, and the page of a file a worker imports.

``CsvImportAdminMixin`` puts an importer of ``core.csvimport`` behind an upload form: the same
importer as the management command, so both report the same errors the same way. An upload larger than
``settings.IMPORT_MAX_UPLOAD_BYTES`` is refused; one larger than ``settings.IMPORT_BACKGROUND_BYTES`` is
stored as an ``ImportJob`` and imported by a worker, while the job's page shows its progress.
"""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING, Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.module_loading import import_string

from core.clock import refuse_future
from core.commands import today
from core.csvimport import CsvLayout, ImportResult, ImportSource
from core.errors import ApplicationError, FieldError
from core.import_command import import_dry_run

from .models import ImportJob
from .services import import_job_start

if TYPE_CHECKING:
    from django.contrib.auth.models import AbstractBaseUser


def file_size(size: int) -> str:
    """A size exact and readable: "52,428,855 bytes (50.0 MB)"."""
    readable = f"{size / 1024 ** 2:.1f} MB" if size >= 1024 ** 2 else f"{size / 1024:.1f} KB"
    return f"{size:,} bytes ({readable})"


class CsvImportForm(forms.Form):
    file = forms.FileField(label="CSV file")
    # A date picker sends and shows ISO dates whatever the locale's display format.
    as_of = forms.DateField(label="Import date",
                            help_text="YYYY-MM-DD. Nothing in the file may be dated after it.",
                            widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        limit = settings.IMPORT_MAX_UPLOAD_BYTES
        self.fields["file"].help_text = f"UTF-8 text; the first row is the header. At most {file_size(limit)}."

    def clean_file(self):
        upload = self.cleaned_data["file"]
        limit = settings.IMPORT_MAX_UPLOAD_BYTES
        if upload.size > limit:
            raise forms.ValidationError(
                f"{upload.name} is {file_size(upload.size)}; an upload may be at most {file_size(limit)}. Split "
                "the file, or have it imported on the server with the import command.")
        return upload

    def clean_as_of(self) -> date:
        as_of = self.cleaned_data["as_of"]
        try:
            refuse_future(as_of, doing="recorded")
        except ApplicationError as exc:
            raise forms.ValidationError(str(exc)) from None
        return as_of


def _rejection(exc: ApplicationError) -> dict:
    """What the upload and job pages say about a rejected file."""
    return {"errors": exc.errors, "error_count": exc.error_count, "error_lines": exc.error_lines,
            "errors_unlisted": exc.unlisted}


class CsvImportAdminMixin:
    """Adds an "Import CSV" page to a ModelAdmin's change list; subclasses name the importer.

    Mix it in before the ModelAdmin base class: ``class AccountAdmin(AccountImportMixin, admin.ModelAdmin)``.
    ``importer`` is the dotted path of the importer function (``file``, ``as_of``, ``actor`` and
    ``progress`` in, an ``ImportResult`` out), so a worker can run it too.

    An upload larger than ``settings.IMPORT_BACKGROUND_BYTES`` is not imported inside the request: it is
    stored as an ``ImportJob`` for a worker (``core.services``), and the clerk is sent to the job's page,
    which refreshes itself with the progress until it shows the result or the errors.
    """

    change_list_template = "admin/imports/change_list_with_import.html"
    import_template = "admin/imports/import_form.html"
    import_job_template = "admin/imports/import_job.html"
    import_permission = ""
    import_layout: CsvLayout = CsvLayout(required=())
    importer = ""
    import_title = "Import CSV"
    import_noun = "rows"
    import_help = ""
    import_form = CsvImportForm

    def import_options(self, form) -> dict:
        """What else the importer is given from the form (``import_form``'s own fields): none by default."""
        return {}

    def run_import(self, *, file: ImportSource, as_of: date, actor: AbstractBaseUser, **options) -> ImportResult:
        return import_string(self.importer)(file=file, as_of=as_of, actor=actor, **options)

    def _import_url_name(self) -> str:
        opts = self.model._meta
        return f"{opts.app_label}_{opts.model_name}_import"

    def get_urls(self):
        view = self.admin_site.admin_view(self.import_view)
        job_view = self.admin_site.admin_view(self.import_job_view)
        return [path("import/", view, name=self._import_url_name()),
                path("import/<int:job_id>/", job_view, name=f"{self._import_url_name()}_job"),
                *super().get_urls()]

    def has_import_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return user.is_active and user.is_staff and user.has_perm(self.import_permission)

    def changelist_view(self, request: HttpRequest, extra_context: dict | None = None):
        extra_context = dict(extra_context or {})
        if self.has_import_permission(request):
            extra_context["import_url"] = reverse(f"{self.admin_site.name}:{self._import_url_name()}")
        return super().changelist_view(request, extra_context=extra_context)

    def import_sample_url(self) -> str:
        """Where a sample of the file downloads, or "" (a demo site's lockbox file: ``remittance.admin``)."""
        return ""

    def _import_context(self, request: HttpRequest) -> dict:
        return {
            **self.admin_site.each_context(request),
            "opts": self.model._meta,
            "title": self.import_title,
            "columns": self.import_layout.describe(),
            "import_help": self.import_help,
            "sample_url": self.import_sample_url(),
            "import_url": reverse(f"{self.admin_site.name}:{self._import_url_name()}"),
            "has_view_permission": self.has_view_permission(request),
        }

    def import_view(self, request: HttpRequest) -> HttpResponse:
        if not self.has_import_permission(request):
            raise PermissionDenied
        request.current_app = self.admin_site.name
        rejection: dict = {}
        if request.method == "POST":
            form = self.import_form(request.POST, request.FILES)
            if form.is_valid():
                upload, as_of = form.cleaned_data["file"], form.cleaned_data["as_of"]
                options = self.import_options(form)
                if "preview" in request.POST:
                    # The whole import, every check and every write, then rolled back: what would be saved.
                    try:
                        result = import_dry_run(lambda: self.run_import(file=upload, as_of=as_of, actor=request.user,
                                                                        **options))
                    except ApplicationError as exc:
                        rejection = _rejection(exc)
                    else:
                        rejection = {"preview": result, "preview_name": upload.name}
                    context = {**self._import_context(request), "form": form, "import_noun": self.import_noun,
                               **rejection}
                    return TemplateResponse(request, self.import_template, context)
                if upload.size > settings.IMPORT_BACKGROUND_BYTES:
                    job = import_job_start(importer=self.importer, noun=self.import_noun, file=upload, as_of=as_of,
                                           actor=request.user, options=options)
                    return HttpResponseRedirect(
                        reverse(f"{self.admin_site.name}:{self._import_url_name()}_job", args=[job.pk]))
                try:
                    result = self.run_import(file=upload, as_of=as_of, actor=request.user, **options)
                except ApplicationError as exc:
                    rejection = _rejection(exc)
                else:
                    self.message_user(request, f"Imported {upload.name}: {self.import_noun} {result}.",
                                      messages.SUCCESS)
                    for error in getattr(result, "held", ())[:50]:
                        self.message_user(request, f"Held with its meter: {error}", messages.WARNING)
                    opts = self.model._meta
                    return HttpResponseRedirect(
                        reverse(f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_changelist"))
        else:
            form = self.import_form(initial={"as_of": today()})
        context = {**self._import_context(request), "form": form, **rejection}
        return TemplateResponse(request, self.import_template, context)

    def import_job_view(self, request: HttpRequest, job_id: int) -> HttpResponse:
        """A file imported by a worker: its progress (the page refreshes itself), then its result."""
        if not self.has_import_permission(request):
            raise PermissionDenied
        request.current_app = self.admin_site.name
        job = get_object_or_404(ImportJob, pk=job_id, importer=self.importer)
        rejection = {}
        if job.status == ImportJob.Status.REJECTED:
            rejection = {"errors": [FieldError(**error) for error in job.errors], "error_count": job.errors_total,
                         "error_lines": job.error_lines, "errors_unlisted": job.errors_total - len(job.errors)}
        result = ImportResult(created=job.created, updated=job.updated, skipped=job.skipped)
        context = {**self._import_context(request), "job": job, "file_size": file_size(job.file_size),
                   "result": result, **rejection}
        return TemplateResponse(request, self.import_job_template, context)
