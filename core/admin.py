"""The admin's bases for every app (history with clerk's words, read-only pages and inlines, the small forms
that call one service and show its refusals under their fields), import jobs and nightly jobs to look at, and
the status history any model with a workflow shows.

An import job links to its page on the importing model's upload page.
"""

from django import forms
from django.contrib import admin
from django.contrib.auth import get_permission_codename
from django.contrib.contenttypes.admin import GenericTabularInline
from simple_history.admin import SimpleHistoryAdmin
from simple_history.template_utils import HistoricalRecordContextHelper

from .clock import refuse_future
from .errors import ApplicationError, FieldError
from .models import ImportJob, NightlyRun, NightlyStep, StatusChange

DATE_WIDGET = forms.DateInput(format="%Y-%m-%d", attrs={"type": "date"})
TEXT_WIDGET = forms.Textarea(attrs={"rows": 3, "cols": 60})
LINE_WIDGET = forms.TextInput(attrs={"class": "vTextField"})


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

    def get_historical_record_context_helper(self, request, historical_record):
        return _ClerkWords(self.model, historical_record)


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


class ReadOnlyInline(admin.TabularInline):
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
    fields = readonly_fields = ("position", "name", "status", "started_at", "finished_at", "counts", "error")


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
