"""Meters, their installations and readings in the clerk's admin, each with its change history.

A reading is added or corrected on the reading's own page, whose form is checked and saved by the same
writer as an imported file (``meters.services``); the meter page lists its readings read-only. A reading
that a bill in force used is final: its page is read-only and names the bills.
"""

from django import forms
from django.contrib import admin
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from core.admin import CsvExportMixin, HistoryAdmin, TabularInline
from core.commands import today
from core.csvimport import identifier_validator
from core.dates import fmt_day

from .admin_imports import AccountImportMixin, ReadingImportMixin
from .models import Installation, Meter, MeterTest, MissedRead, Reading, UsageAlert
from .rules import unit_problem
from .selectors import meter_policy, reading_held_by
from .services import reading_change, reading_delete, reading_final_problem, reading_problems, reading_record


class InstallationInline(TabularInline):
    model = Installation
    fields = ("account", "installed_on", "removed_on")
    autocomplete_fields = ("account",)
    ordering = ("-installed_on",)
    extra = 0


# --- the account page's meters part (composed in waterbilling/admin.py) ----------------------------------

RECENT_READINGS = 50


class AccountInstallationInline(TabularInline):
    """The account's meters. No delete boxes on the account page: a meter taken out is ended with its removal date
    (or changed by a work order); one entered in error is deleted from the meter's own page."""

    model = Installation
    fields = ("meter", "meter_size", "meter_unit", "installed_on", "removed_on")
    readonly_fields = ("meter_size", "meter_unit")
    autocomplete_fields = ("meter",)
    ordering = ("-installed_on",)
    extra = 0
    can_delete = False

    @admin.display(description="size")
    def meter_size(self, obj: Installation) -> str:
        return f'{obj.meter.size}"' if obj.meter_id else ""

    @admin.display(description="unit")
    def meter_unit(self, obj: Installation) -> str:
        return obj.meter.get_unit_display() if obj.meter_id else ""

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("meter")


def account_readings(account, *, limit: int = RECENT_READINGS):
    """Readings of every meter while it was installed on ``account``, newest first."""
    spans = Q(pk__in=[])
    for inst in account.installations.all():
        span = Q(meter_id=inst.meter_id, read_on__gte=inst.installed_on)
        if inst.removed_on:
            span &= Q(read_on__lte=inst.removed_on)
        spans |= span
    return (Reading.objects.filter(spans).select_related("meter", "entered_by")
            .order_by("-read_on", "-id")[:limit])


class AccountMetersAdmin(AccountImportMixin):
    """The account page's meters: its installations, its latest readings, and the account import (each
    row brings a meter and its first reading)."""

    def get_inlines(self, request, obj):
        return (AccountInstallationInline, *super().get_inlines(request, obj))

    def get_readonly_fields(self, request, obj=None):
        return (*super().get_readonly_fields(request, obj), "recent_readings")

    def get_fieldsets(self, request, obj=None):
        return [*super().get_fieldsets(request, obj), ("Meter readings", {"fields": ("recent_readings",)})]

    @admin.display(description=f"latest {RECENT_READINGS} readings, newest first")
    def recent_readings(self, obj) -> str:
        return readings_table(list(account_readings(obj))) if obj.pk is not None else "—"


def readings_table(readings) -> str:
    """Readings as the account page's table, newest first."""
    if not readings:
        return "No readings yet."
    rows = format_html_join(
        "\n", "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
        ((fmt_day(r.read_on), r.meter.serial, f"{r.value:,} {r.meter.unit}", r.get_read_type_display(),
          r.source, r.entered_by or "") for r in readings))
    return format_html(
        '<table class="account-readings"><thead><tr><th>date</th><th>meter</th><th>value</th>'
        "<th>type</th><th>source</th><th>entered by</th></tr></thead><tbody>{}</tbody></table>", rows)


class ReadingInline(TabularInline):
    """The meter's readings, to look at; each row links to the reading's page, where it can be corrected."""

    model = Reading
    fields = ("read_on", "value", "read_type", "source", "note", "entered_by", "entered_at")
    readonly_fields = fields
    ordering = ("-read_on", "-id")
    extra = 0
    can_delete = False
    show_change_link = True
    verbose_name_plural = "readings (add or correct one under Meters › Readings, where every rule is checked)"

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("entered_by")


def _unit_allowed(unit: str) -> None:
    """The preset's register units (``[meters] units``): a meter in another unit is refused."""
    if problem := unit_problem(meter_policy(), unit):
        raise ValidationError(problem)


@admin.register(Meter)
class MeterAdmin(HistoryAdmin):
    list_display = ("serial", "size", "unit", "make", "dials", "places")
    list_filter = ("size", "unit", "make")
    search_fields = ("serial",)
    inlines = (InstallationInline, ReadingInline)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        formfield = super().formfield_for_dbfield(db_field, request, **kwargs)
        if db_field.name == "serial":
            formfield.validators.append(identifier_validator)
        if db_field.name == "unit":
            formfield.validators.append(_unit_allowed)
        return formfield


@admin.register(Installation)
class InstallationAdmin(HistoryAdmin):
    list_display = ("meter", "account", "installed_on", "removed_on")
    list_select_related = ("meter", "account")
    search_fields = ("meter__serial", "account__account_no")
    autocomplete_fields = ("meter", "account")
    date_hierarchy = "installed_on"


class ReadingForm(forms.ModelForm):
    """A clerk's reading, held to the importer's rules with the importer's words, each on its field."""

    class Meta:
        model = Reading
        fields = ("meter", "read_on", "value", "read_type", "source", "note")
        help_texts = {"value": "The register in the meter's unit; for a meter whose register shows places (its "
                               "\"places\"), in those steps: 50082.16 cu ft on a 2-place meter is 5008216."}

    def clean(self):
        data = super().clean()
        original = self.instance if self.instance.pk else None
        wanted = ("meter", "read_on", "value", "read_type")
        if any(data.get(name) is None for name in wanted):
            # A value missing here is a field that failed its own check (its error is shown), or a form
            # with every field read-only: a final reading, which stays as it is.
            if original is not None and (problem := reading_final_problem(reading=original)):
                raise forms.ValidationError(problem)
            return data
        # The admin saves inside the transaction this runs in, so the meter locked here stays locked
        # until the reading is written.
        for error in reading_problems(**{name: data[name] for name in wanted}, as_of=today(), reading=original):
            self.add_error(error.field or None, error.message)
        return data


@admin.register(Reading)
class ReadingAdmin(CsvExportMixin, ReadingImportMixin, HistoryAdmin):
    list_display = ("meter", "read_on", "register", "read_type", "source", "entered_by")
    list_select_related = ("meter", "entered_by")
    list_filter = ("read_type", "source")
    search_fields = ("meter__serial", "meter__installations__account__account_no")
    date_hierarchy = "read_on"
    show_full_result_count = False  # a search need not count every reading on file as well
    autocomplete_fields = ("meter",)
    readonly_fields = ("entered_by", "entered_at")
    fields = ("meter", "read_on", "value", "read_type", "source", "note", "entered_by", "entered_at")
    form = ReadingForm

    @admin.display(description="reading", ordering="value")
    def register(self, obj: Reading) -> str:
        return obj.shown

    @staticmethod
    def _held_by(obj: Reading | None) -> list:
        """The records in force (bills) that rest on ``obj``, asked once per object and request."""
        if obj is None or obj.pk is None:
            return []
        if not hasattr(obj, "_held_by"):
            obj._held_by = reading_held_by(reading_id=obj.pk)
        return obj._held_by

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and not self._held_by(obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and not self._held_by(obj)

    def change_view(self, request, object_id, form_url="", extra_context=None):
        obj = self.get_object(request, unquote(object_id))
        held_by = [(f"{held._meta.verbose_name} {held}",
                    reverse(f"admin:{held._meta.app_label}_{held._meta.model_name}_change", args=[held.pk]))
                   for held in self._held_by(obj)]
        return super().change_view(request, object_id, form_url, {**(extra_context or {}), "held_by": held_by})

    def history_form_view(self, request, object_id, version_id, extra_context=None):
        # simple-history lets anyone who may view a reading post a revert; a revert is a change.
        if request.method == "POST":
            obj = self.get_object(request, unquote(object_id))
            if obj is None or not self.has_change_permission(request, obj):
                raise PermissionDenied
        return super().history_form_view(request, object_id, version_id, extra_context)

    def save_form(self, request, form, change):
        """The reading writer saves; the admin then logs and answers with the reading it saved."""
        form.save(commit=False)  # only readies form.save_m2m for save_related (a reading has none)
        data = form.cleaned_data
        values = {"meter": data["meter"], "read_on": data["read_on"], "value": data["value"],
                  "read_type": data["read_type"], "source": data["source"], "note": data["note"],
                  "as_of": today(), "actor": request.user}
        if change:
            return reading_change(reading=form.instance, **values)
        return reading_record(**values)

    def save_model(self, request, obj, form, change):
        """Saved already, by ``save_form`` through the reading writer."""

    def delete_model(self, request, obj):
        reading_delete(reading=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        with transaction.atomic():
            for reading in queryset:
                reading_delete(reading=reading, actor=request.user)


@admin.register(MeterTest)
class MeterTestAdmin(HistoryAdmin):
    """Meter tests at the customer's request; what a test costs is settled by billing (``settle_meter_test``)."""

    list_display = ("meter", "account", "requested_on", "tested_on", "settled_on")
    list_select_related = ("meter", "account")
    search_fields = ("meter__serial", "account__account_no")
    readonly_fields = ("outcome", "settled_on")
    date_hierarchy = "requested_on"


@admin.register(UsageAlert)
class UsageAlertAdmin(admin.ModelAdmin):
    """The meters' exceptions: use far above the account's usual, use on a vacant or shut-off account, none on an
    occupied one; the flags a meter system reported (leak, reverse flow, tamper, no flow, register mismatch);
    continuous flow in the daily reads; a reading outside its expected range (re-read). The clerk marks each looked
    at, with what was found."""

    list_display = ("created_at", "account", "meter", "kind", "read_on", "seen_through", "detail", "resolved_at")
    list_filter = ("kind", ("resolved_at", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "meter__serial")
    list_select_related = ("account", "meter")
    readonly_fields = ("account", "meter", "read_on", "seen_through", "reading", "kind", "detail", "created_at",
                       "resolved_at", "resolved_by")
    fields = ("account", "meter", "read_on", "seen_through", "reading", "kind", "detail", "created_at", "note",
              "resolved_at", "resolved_by")
    actions = ["mark_looked_at"]

    def has_add_permission(self, request):
        return False

    def has_delete_permission(self, request, obj=None):
        return False

    @admin.action(description="Mark the alerts chosen looked at")
    def mark_looked_at(self, request, queryset):
        from django.utils import timezone

        done = queryset.filter(resolved_at__isnull=True).update(resolved_at=timezone.now(), resolved_by=request.user)
        self.message_user(request, f"{done} alert(s) marked looked at.")


@admin.register(MissedRead)
class MissedReadAdmin(admin.ModelAdmin):
    """The meters a reader's file says were not read (its no-read code): nothing was recorded as a reading, so the
    account's bill waits in the run's exceptions (no reading in the read window) until a reading or an estimate."""

    list_display = ("read_on", "meter", "code", "source", "created_at")
    list_filter = ("code",)
    search_fields = ("meter__serial", "code")
    list_select_related = ("meter",)
    date_hierarchy = "read_on"

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
