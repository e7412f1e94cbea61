"""The admin's bases for every app (history with clerk's words, read-only pages and inlines, the small forms
that call one service and show its refusals under their fields), import jobs and nightly jobs to look at, and
the status history any model with a workflow shows.

An import job links to its page on the importing model's upload page.
"""

import datetime
import html
import re
from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.options import IncorrectLookupParameters
from django.contrib.admin.utils import label_for_field, lookup_field
from django.contrib.auth import get_permission_codename
from django.contrib.contenttypes.admin import GenericTabularInline
from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import HttpResponseRedirect, StreamingHttpResponse
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils import timezone
from django.utils.html import strip_tags
from django.utils.safestring import SafeData
from django.utils.text import capfirst
from simple_history.admin import SimpleHistoryAdmin
from simple_history.template_utils import HistoricalRecordContextHelper

from .clock import refuse_future
from .csvout import csv_writer, neutralised
from .dates import iso_date
from .errors import ApplicationError, FieldError
from .models import ImportJob, NightlyRun, NightlyStep, StatusChange

DATE_WIDGET = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})
TEXT_WIDGET = forms.Textarea(attrs={"rows": 3, "cols": 60})
LINE_WIDGET = forms.TextInput(attrs={"class": "vTextField"})


def parse_day(value) -> datetime.date | None:
    """A day given in a link or a form (``YYYY-MM-DD``, or a date already), or None when it is missing or is not
    one: the page then falls back to its own default day."""
    if isinstance(value, datetime.date) or not value:
        return value or None
    try:
        return iso_date(str(value))
    except ValueError:
        return None


class DayField(forms.DateField):
    """The day something happened: never after today."""

    def __init__(self, *, doing: str = "recorded", **kwargs):
        self.doing = doing
        kwargs.setdefault("widget", DATE_WIDGET)
        super().__init__(**kwargs)

    def validate(self, value):
        super().validate(value)
        if value:
            try:
                refuse_future(value, doing=self.doing)
            except ApplicationError as exc:
                raise forms.ValidationError(exc.errors[0].message) from None


class ServiceForm(forms.Form):
    """A form whose ``perform`` calls one service. ``aliases`` maps a service's field names to the form's
    (the service's ``date``, the day it acts as of, is the form's date field); a refusal naming a field
    the form has shows under that field, any other above the form (with its field's name, unless the
    field is one of ``whole_fields``: the object the form is about as a whole)."""

    aliases: dict[str, str] = {}
    whole_fields: tuple[str, ...] = ("",)
    submit = "Save"

    def perform(self, *, actor) -> str:
        raise NotImplementedError

    def run(self, *, actor) -> str | None:
        """The success message, or None with the refusals added to the form as errors."""
        try:
            return self.perform(actor=actor)
        except ApplicationError as exc:
            self.add_refusals(exc.errors)
            return None

    def add_refusals(self, errors: list[FieldError]) -> None:
        for error in errors:
            name = self.aliases.get(error.field, error.field)
            if name in self.fields:
                self.add_error(name, error.message)
            else:
                self.add_error(None, error.message if error.field in self.whole_fields else str(error))


def action_page(model_admin, request, template: str, **context) -> TemplateResponse:
    """The page an admin action shows before it acts (what was selected and the form asking why), posting back
    to the action with the rows still selected."""
    return TemplateResponse(request, template, {
        **model_admin.admin_site.each_context(request), "opts": model_admin.model._meta,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME, **context})


def act_on_each(model_admin, request, rows, act, *, refused) -> int:
    """An admin action's work, row by row: ``act(row)`` calls one service and returns what happened in words
    (shown, unless empty); a row the service refuses is reported by ``refused(row, error)`` and the others go on.
    How many were done."""
    done = 0
    for row in rows:
        try:
            words = act(row)
        except ApplicationError as exc:
            model_admin.message_user(request, refused(row, exc), messages.WARNING)
            continue
        done += 1
        if words:
            model_admin.message_user(request, words, messages.SUCCESS)
    return done


def button_post(model_admin, request, act, *, back: str, refused: str) -> HttpResponseRedirect:
    """A page's button (a POST): ``act()`` calls one service and returns what happened in words; refused, the
    message is ``refused`` and why. Back to ``back`` either way."""
    try:
        words = act()
    except ApplicationError as exc:
        model_admin.message_user(request, f"{refused}: " + "; ".join(str(e) for e in exc.errors), messages.ERROR)
    else:
        model_admin.message_user(request, words, messages.SUCCESS)
    return HttpResponseRedirect(back)


def installed(load):
    """What ``load()`` returns (an installed preset's rules), or None when no preset with them is installed."""
    try:
        return load()
    except ApplicationError:
        return None


class ServiceFormMixin:
    """Pages of forms that each call one service, for any admin: ``form_page`` shows a form on
    ``admin/service_form.html`` with an introduction and facts to read before acting, and ``run_form`` is the
    whole of a form page: on a valid POST it runs the form's one service and, with its message, goes on to the
    next page; otherwise (or refused) the form again with what was wrong, answering 400."""

    intro = ""
    form_template = "admin/service_form.html"

    def need(self, request, perm: str) -> None:
        if not request.user.has_perm(perm):
            raise PermissionDenied

    def page_context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def object_url(self, obj) -> str:
        return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_change", args=[obj.pk])

    def form_page(self, request, form, *, title: str, intro: str | None = None, facts=(), obj=None,
                  status: int | None = None, **extra):
        """``form`` on the service form page: ``obj`` is the record it acts on (linked in the breadcrumbs and
        the back link), ``facts`` (label, value) rows to read before acting; a form with errors answers 400."""
        return TemplateResponse(request, self.form_template, self.page_context(
            request, title=title, form=form, intro=self.intro if intro is None else intro, facts=facts, obj=obj,
            obj_url=self.object_url(obj) if obj is not None else "", **extra),
            status=status or (400 if form is not None and form.errors else 200))

    def run_form(self, request, form, *, done_url, level=messages.SUCCESS, **page):
        """A form page whose valid POST runs the form (``form.run``) and goes on to ``done_url`` (a URL, or a
        callable given the form) with the service's message at ``level`` (or ``level(form)``)."""
        if request.method == "POST" and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, level(form) if callable(level) else level)
                return HttpResponseRedirect(done_url(form) if callable(done_url) else done_url)
        return self.form_page(request, form, **page)


class WithdrawForm(ServiceForm):
    """Whoever asked ends their own request before anyone decides it (``core.approval.approval_withdraw``)."""

    note = forms.CharField(widget=TEXT_WIDGET, required=False, label="Why (optional)",
                           help_text="Kept with the request: a mistake, asked again another way, no longer needed.")
    whole_fields = ("", "actor", "status")
    submit = "Withdraw my request"

    def __init__(self, *args, obj, **kwargs):
        super().__init__(*args, **kwargs)
        self.obj = obj

    def perform(self, *, actor) -> str:
        from .approval import approval_of, approval_withdraw

        approval_withdraw(self.obj, actor=actor, note=self.cleaned_data["note"])
        return f"Your {approval_of(self.obj).noun} ({self.obj}) is withdrawn: nobody will decide it."


class ApprovalPagesMixin(ServiceFormMixin):
    """The pages of a model whose records wait for a second person (``core.approval``): a waiting record's page says
    who may decide it (by name, or what the office does when nobody can) and offers whoever asked a button to
    withdraw it. Put before the admin's base: ``class RefundAdmin(ApprovalPagesMixin, ServicePagesAdmin)``."""

    change_form_template = "admin/service_change_form.html"

    def get_urls(self):
        name = f"{self.model._meta.app_label}_{self.model._meta.model_name}_withdraw"
        return [path("<int:pk>/withdraw/", self.admin_site.admin_view(self.withdraw_view), name=name),
                *super().get_urls()]

    def withdraw_url(self, obj) -> str:
        return reverse(f"admin:{obj._meta.app_label}_{obj._meta.model_name}_withdraw", args=[obj.pk])

    def can_withdraw(self, request, obj) -> bool:
        from .approval import approval_withdraw_problems

        return not approval_withdraw_problems(obj, actor=request.user)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        from .approval import approval_who

        obj = self.get_object(request, object_id) if str(object_id).isdigit() else None
        extra = {"approval_who": approval_who(obj) if obj is not None else ""}
        if obj is not None and self.has_view_permission(request, obj):
            own = getattr(self, "page_buttons", None)
            extra["page_buttons"] = [*(own(request, obj) if own is not None else []),
                                     *([("Withdraw my request", self.withdraw_url(obj))]
                                       if self.can_withdraw(request, obj) else [])]
        return super().change_view(request, object_id, form_url, {**extra, **(extra_context or {})})

    def withdraw_view(self, request, pk):
        obj = self.get_object(request, str(pk))
        if obj is None or not self.has_view_permission(request, obj):
            raise PermissionDenied
        form = WithdrawForm(request.POST or None, obj=obj)
        from .approval import approval_of, approval_who

        return self.run_form(request, form, done_url=self.object_url(obj), obj=obj,
                             title=f"Withdraw {approval_of(obj).noun} {obj}", intro=approval_who(obj),
                             facts=[("Status", getattr(obj, f"get_{obj.workflow.field}_display")())])


class ServicePagesAdmin(ServiceFormMixin, admin.ModelAdmin):
    """Read-only pages of records made by services, the admin kit every app's service pages share.

    - "Add" is a ``ServiceForm`` (``form_class``, or ``add_form``) run on the service form page
      (``ServiceFormMixin``), as is every other form of the admin.
    - A record's page has a button per thing that can be done to it (``page_buttons``); the list has the app's
      other pages in its header (``header_links``) and an add button that says what it does (``add_label``).
    - Pages that need an installed preset's rules name the loader (``rules``, raising ``ApplicationError`` when
      none is installed) and the words for them (``rules_words``): ``installed_rules`` is None, and
      ``no_rules_redirect`` the admin's index with a message naming the command that installs them.
    """

    form_class = None
    add_label = ""
    change_list_template = "admin/service_change_list.html"
    change_form_template = "admin/service_change_form.html"
    rules = None
    rules_words = ""

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    # -- the installed rules

    def installed_rules(self):
        return installed(self.rules) if self.rules is not None else None

    def no_rules_redirect(self, request) -> HttpResponseRedirect:
        messages.error(request, f"No preset with {self.rules_words} rules is installed "
                                "(manage.py setup_utility PRESET).")
        return HttpResponseRedirect(reverse("admin:index"))

    def add_view(self, request, form_url="", extra_context=None):
        if not self.has_add_permission(request):
            raise PermissionDenied
        if self.rules is not None and self.installed_rules() is None:
            return self.no_rules_redirect(request)
        form = self.add_form(request)
        return self.run_form(request, form, done_url=self.added_url, title=self.add_title(),
                             intro=self.add_intro(), facts=self.add_facts(request, form))

    def add_form(self, request):
        return self.form_class(request.POST or None, initial=self.add_initial(request))

    def add_title(self) -> str:
        return f"Add {self.model._meta.verbose_name}"

    def add_intro(self) -> str:
        return self.intro

    def add_initial(self, request) -> dict:
        return {"account_no": request.GET.get("account", "")}

    def add_facts(self, request, form):
        return ()

    def added_url(self, form) -> str:
        return reverse(f"admin:{self.model._meta.app_label}_{self.model._meta.model_name}_changelist")

    # -- the list and a record's page

    def header_links(self, request) -> list[tuple[str, str]]:
        return []

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        return []

    def changelist_view(self, request, extra_context=None):
        return super().changelist_view(request, {**(extra_context or {}), "add_label": self.add_label,
                                                 "header_links": self.header_links(request)})

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, object_id) if str(object_id).isdigit() else None
        buttons = self.page_buttons(request, obj) if obj is not None and self.has_view_permission(request, obj) else []
        return super().change_view(request, object_id, form_url, {"page_buttons": buttons, **(extra_context or {})})


class _ClerkWords(HistoricalRecordContextHelper):
    """History deltas with choice labels instead of stored codes, and a dash for empty."""

    def prepare_delta_change_value(self, change, value):
        field = self.model._meta.get_field(change.field)
        if field.choices and not isinstance(value, list):
            value = dict(field.flatchoices).get(value, value)
        if value is None or value == "":
            return "—"
        return super().prepare_delta_change_value(change, value)


class HistoryAdmin(SimpleHistoryAdmin):
    """The base of every clerk admin for a model with history."""

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        parts = getattr(field, "widget", None) and getattr(field.widget, "widgets", None)
        if parts and len(parts) == 2 and isinstance(parts[1], forms.Select):
            # An amount drawn as two inputs, the number and its currency: the label is the first one's only.
            parts[0].attrs.setdefault("aria-label", capfirst(db_field.verbose_name))
            parts[1].attrs.setdefault("aria-label", f"{capfirst(db_field.verbose_name)}: currency")
        return field

    def get_historical_record_context_helper(self, request, historical_record):
        return _ClerkWords(self.model, historical_record)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class TabularInline(admin.TabularInline):
    """A tabular inline whose fields name themselves to a screen reader (``aria-label``): a column's heading is no
    label of the fields under it (WCAG 1.3.1, 4.1.2)."""

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        field = super().formfield_for_dbfield(db_field, request, **kwargs)
        if field is not None:
            field.widget.attrs.setdefault("aria-label", capfirst(db_field.verbose_name))
        return field


class ReadOnlyInline(TabularInline):
    extra = 0
    can_delete = False

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin):
    list_display = ("created_at", "file_name", "noun", "status", "rows_done", "rows_total", "created", "updated",
                    "skipped", "errors_total", "created_by")
    list_filter = ("status", "noun")
    search_fields = ("file_name",)
    exclude = ("content", "errors")
    readonly_fields = ("importer", "noun", "file_name", "file_size", "as_of", "created_by", "created_at", "status",
                       "stage", "rows_total", "rows_done", "started_at", "finished_at", "created", "updated",
                       "skipped", "errors_total", "error_lines", "failure")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class StatusChangeInline(GenericTabularInline):
    """The status history of the object on its admin page, oldest first, read-only. Seen by whoever may
    see the object: ``inlines = (StatusChangeInline,)`` in any admin whose model has a workflow."""

    model = StatusChange
    ct_field, ct_fk_field = "content_type", "object_id"
    fields = readonly_fields = ("at", "from_status", "to_status", "actor", "note")
    extra = 0
    can_delete = False
    verbose_name, verbose_name_plural = "status change", "status history"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    def has_view_permission(self, request, obj=None):
        opts = self.parent_model._meta
        return request.user.has_perm(f"{opts.app_label}.{get_permission_codename('view', opts)}")


class NightlyStepInline(ReadOnlyInline):
    model = NightlyStep
    fields = readonly_fields = ("position", "name", "status", "progress", "started_at", "finished_at", "counts",
                                "error")


@admin.register(NightlyRun)
class NightlyRunAdmin(admin.ModelAdmin):
    """Each night's job, to look at: how far it got, what each step counted, where it stopped and why."""

    list_display = ("run_on", "status", "started_at", "finished_at")
    list_filter = ("status",)
    date_hierarchy = "run_on"
    fields = readonly_fields = ("run_on", "status", "started_at", "finished_at")
    inlines = (NightlyStepInline,)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False


# --- list export to CSV ------------------------------------------------------------------------------------

DOLLARS = re.compile(r"^−?\$[0-9,]+\.[0-9]{2}$")


class _Echo:
    """A file-like object that hands back what the csv writer writes, so each row can be streamed."""

    def write(self, value: str) -> str:
        return value


class CsvExportMixin:
    """An "Export CSV" button on a change list: the list as it stands (its filters, search and ordering, every
    page) with its columns, as text a spreadsheet reads: money as ``123.45``, dates as ``2026-12-01``, choices
    in words. Streamed a chunk at a time, so a long list neither times out nor fills the memory.

    Mix it in first: ``class BillAdmin(CsvExportMixin, ReadOnlyAdmin)``. A column computed for a page at once
    (say the accounts' balances) sets it on the objects in ``csv_rows_prepare``, called with each chunk, and
    a display method may name its CSV value with ``method.csv_value = lambda obj: ...``.
    """

    csv_chunk_size = 500

    def _csv_url_name(self) -> str:
        opts = self.model._meta
        return f"{opts.app_label}_{opts.model_name}_export_csv"

    def get_urls(self):
        return [path("export.csv", self.admin_site.admin_view(self.csv_export_view), name=self._csv_url_name()),
                *super().get_urls()]

    def changelist_view(self, request, extra_context=None):
        extra_context = dict(extra_context or {})
        if self.has_view_or_change_permission(request):
            url = reverse(f"{self.admin_site.name}:{self._csv_url_name()}")
            query = request.GET.urlencode()
            extra_context["export_csv_url"] = f"{url}?{query}" if query else url
        return super().changelist_view(request, extra_context=extra_context)

    def csv_rows_prepare(self, request, objects: list) -> None:
        """Called with each chunk of objects before its rows are written."""

    def csv_export_view(self, request):
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        opts = self.model._meta
        try:
            changelist = self.get_changelist_instance(request)
        except IncorrectLookupParameters:
            changelist_url = reverse(f"{self.admin_site.name}:{opts.app_label}_{opts.model_name}_changelist")
            return HttpResponseRedirect(f"{changelist_url}?e=1")
        columns = [name for name in changelist.list_display if name != "action_checkbox"]
        headers = [" ".join(str(label_for_field(name, self.model, self)).split()) for name in columns]
        queryset = changelist.queryset
        writer = csv_writer(_Echo())

        def rows():
            yield writer.writerow(headers)
            chunk = []
            for obj in queryset.iterator(chunk_size=self.csv_chunk_size):
                chunk.append(obj)
                if len(chunk) == self.csv_chunk_size:
                    yield from self._csv_chunk(request, writer, chunk, columns)
                    chunk = []
            if chunk:
                yield from self._csv_chunk(request, writer, chunk, columns)

        response = StreamingHttpResponse(rows(), content_type="text/csv; charset=utf-8")
        name = f"{opts.verbose_name_plural}-{timezone.localdate().isoformat()}.csv".replace(" ", "-")
        response["Content-Disposition"] = f'attachment; filename="{name}"'
        return response

    def _csv_chunk(self, request, writer, objects: list, columns: list[str]):
        self.csv_rows_prepare(request, objects)
        for obj in objects:
            yield writer.writerow([self._csv_cell(obj, name) for name in columns])

    def _csv_cell(self, obj, name: str) -> str:
        try:
            field, attr, value = lookup_field(name, obj, self)
        except (AttributeError, ObjectDoesNotExist):
            return ""
        if attr is not None and getattr(attr, "csv_value", None) is not None:
            value = attr.csv_value(obj)
        elif field is not None and getattr(field, "flatchoices", None) and not isinstance(value, (list, dict)):
            value = dict(field.flatchoices).get(value, value)
        return csv_text(value)


def csv_text(value) -> str:
    """A value as a spreadsheet cell: plain numbers, ISO dates, words for yes/no, text without HTML, and a
    text that a spreadsheet would take for a formula quoted with an apostrophe."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    amount = getattr(value, "amount", None)
    if isinstance(amount, Decimal):  # a django-money Money
        return f"{amount:.2f}"
    if isinstance(value, Decimal | int | float):
        return str(value)
    if isinstance(value, datetime.datetime):
        return (timezone.localtime(value) if timezone.is_aware(value) else value).strftime("%Y-%m-%d %H:%M")
    if isinstance(value, datetime.date):
        return value.isoformat()
    text = str(value)
    if isinstance(value, SafeData):
        text = html.unescape(strip_tags(text))
    text = " ".join(text.split()) if "\n" in text else text
    if text == "—":  # the admin's "empty"
        return ""
    if DOLLARS.match(text):  # a column showing dollars for people (``fmt_dollars``): the plain amount
        return ("-" if text[0] == "−" else "") + text.lstrip("−$").replace(",", "")
    return neutralised(text)


def admin_page_register(site: admin.AdminSite, route: str, view, name: str) -> None:
    """Put a page with no model (Reports, Conversion) at ``route`` of the site, under its login, as
    ``admin:<name>``; before the site's own URLs, which end with a catch-all."""
    site_urls = site.get_urls

    def get_urls():
        return [path(route, site.admin_view(view), name=name), *site_urls()]

    site.get_urls = get_urls
