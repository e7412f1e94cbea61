"""Rate schedules from Open Water Rate Specification (OWRS) files, in the admin: upload or paste a file,
check it, see what it adds and preview a bill, then activate it; and a schedule downloaded as OWRS.

The import is three steps on one page (``import-owrs/``), each a POST that carries the file's text and
nothing else worth trusting: every step parses and checks the text again (``prepare_import``), so what is
activated is what the server read, never a hidden field's copy of the rules. Nothing is written until
"Activate this schedule" (``activate_import``). The pages only call ``billing.services.rate_import`` and
``billing.owrs.convert``, and show their refusals as those word them, on the field they name.
"""

from decimal import ROUND_HALF_UP

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.loader import render_to_string
from django.template.response import TemplateResponse
from django.urls import path, reverse

from accounts.admin import rate_field_names_from
from accounts.models import Account
from core.admin import HistoryAdmin
from core.commands import today
from core.dates import first_of_next_month
from core.errors import ApplicationError, FieldError
from core.money import fmt_dollars, fmt_gallons, fmt_rate
from meters.units import METER_SIZES
from ordinance.selectors import districts

from ..fees import fee_rule
from ..models import (
    Fee,
    RateSchedule,
)
from ..ordinance import ordinance_on
from ..owrs import ACCOUNT_FIELDS, CCF_GALLONS
from ..owrs.convert import export_text
from ..owrs.structure import class_for, class_targets
from ..rate_tables import category_words, fee_tables, schedule_summary, schedule_tables
from ..rating import RatingError
from ..services.rate_import import activate_import, parse_class_map, prepare_import, preview_bill

# A rate file is a page or two of YAML; a bigger upload is not one.
OWRS_MAX_BYTES = 1_000_000
# The frequencies a calendar may bill, for a site with no preset installed yet.
ALL_FREQUENCIES = ("semiannual", "quarterly", "monthly")

CLASS_MAP_HELP = (
    "One entry a line: OWRS_CLASS=category, where category is one of ours: "
    f"{', '.join(Account.Category.values)}. A class may bill several (COMMERCIAL=other, nonprofit, or one line "
    "each). Add @monthly, @semiannual or @quarterly to map only that category's bills of that frequency (e.g. "
    "LARGE=other@monthly). Leave empty to use the map the file carries (its waterbilling section).")


# The account page's "Rate facts" accept the fields an OWRS class may read from an account.
rate_field_names_from(lambda: ACCOUNT_FIELDS)


class OwrsImportForm(forms.Form):
    """Step 1: the file and what to do with it."""

    owrs_file = forms.FileField(label="OWRS file", required=False,
                                help_text="An Open Water Rate Specification file (YAML, e.g. rates.owrs).")
    owrs_text = forms.CharField(label="…or its text, pasted", required=False, strip=False,
                                widget=forms.Textarea(attrs={"rows": 14, "cols": 90, "spellcheck": "false",
                                                             "style": "font-family: monospace"}))
    effective_on = forms.DateField(label="Effective on", widget=forms.DateInput(attrs={"type": "date"}),
                                   help_text="Bills dated this day and later are rated by the new schedule.")
    citation = forms.CharField(label="Citation", required=False, max_length=80,
                               help_text="The ordinance or resolution that adopts the rates, printed on every bill "
                                         "line. Leave empty to use the file's metadata.citation.")
    class_map = forms.CharField(label="Class map", required=False, help_text=CLASS_MAP_HELP,
                                widget=forms.Textarea(attrs={"rows": 4, "cols": 60}))

    def clean(self):
        data = super().clean()
        upload = data.get("owrs_file")
        if upload:
            if upload.size > OWRS_MAX_BYTES:
                self.add_error("owrs_file", f"the file is {upload.size:,} bytes; a rate file is at most "
                                            f"{OWRS_MAX_BYTES:,}")
                return data
            try:
                data["text"] = upload.read().decode("utf-8-sig")
            except UnicodeDecodeError:
                self.add_error("owrs_file", "the file is not UTF-8 text; save it as UTF-8 and upload it again")
                return data
        else:
            data["text"] = data.get("owrs_text") or ""
        if not data["text"].strip():
            self.add_error("owrs_file", "choose an OWRS file, or paste its text below")
        return data


class CarriedImportForm(forms.Form):
    """Steps 2 and 3: what step 1 was given, carried in the page (and checked again on every POST)."""

    owrs_text = forms.CharField(strip=False, widget=forms.Textarea(attrs={"hidden": True}))
    effective_on = forms.DateField(widget=forms.HiddenInput)
    citation = forms.CharField(required=False, max_length=80, widget=forms.HiddenInput)
    class_map = forms.CharField(required=False, widget=forms.Textarea(attrs={"hidden": True}))

    def clean(self):
        data = super().clean()
        data["text"] = data.get("owrs_text") or ""
        return data


class PreviewBillForm(forms.Form):
    """One bill rated by the checked schedule, as the first bill of a billable year."""

    category = forms.ChoiceField(label="Category", choices=Account.Category.choices)
    meter_size = forms.ChoiceField(label="Meter size", choices=[(s, f'{s}"') for s in METER_SIZES])
    frequency = forms.ChoiceField(label="Bill frequency", required=False)
    gallons = forms.IntegerField(label="Gallons", required=False, min_value=0, max_value=999_999_999_999)
    ccf = forms.DecimalField(label="or ccf", required=False, min_value=0, max_digits=16, decimal_places=4,
                             help_text="Hundreds of cubic feet; turned into whole gallons (× 748.052, half-up).")
    cust_class = forms.ChoiceField(label="OWRS class", required=False,
                                   help_text="Leave as is to take the class the class map gives the category "
                                             "and frequency; an account's own class (its rate facts) wins.")

    def __init__(self, *args, frequencies, classes, fact_fields, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["frequency"].choices = [("", "as the calendar bills the meter size"),
                                            *((f, f) for f in frequencies)]
        self.fields["cust_class"].choices = [("", "by the class map"), *((c, c) for c in classes)]
        self.fact_names = [name for name in fact_fields if name != "cust_class"]
        for name in self.fact_names:
            self.fields[f"fact_{name}"] = forms.CharField(label=name, required=False, max_length=40,
                                                          help_text=fact_fields[name])

    def clean(self):
        data = super().clean()
        gallons, ccf = data.get("gallons"), data.get("ccf")
        if gallons is not None and ccf is not None:
            self.add_error("ccf", "give the usage in gallons or in ccf, not both")
        elif gallons is None and ccf is None:
            if not self.has_error("gallons") and not self.has_error("ccf"):
                self.add_error("gallons", "give the usage in gallons (or in ccf)")
        elif ccf is not None:
            data["usage_gal"] = int((ccf * CCF_GALLONS).to_integral_value(rounding=ROUND_HALF_UP))
            data["usage_note"] = (f"{ccf.normalize():,f} ccf = {fmt_gallons(data['usage_gal'])} gallons "
                                  "(× 748.052 gallons a ccf, rounded half-up to the whole gallon)")
        else:
            data["usage_gal"], data["usage_note"] = gallons, ""
        data["facts"] = {name: data[f"fact_{name}"].strip() for name in self.fact_names
                         if data.get(f"fact_{name}", "").strip()}
        if data.get("cust_class"):
            data["facts"]["cust_class"] = data["cust_class"]
        return data


def _refusal(error: FieldError) -> str:
    """A refusal as the clerk reads it: "line 7: tier_prices: …", the line and field once each."""
    message, line = error.message, error.line
    head, _, rest = message.partition(": ")
    if head.startswith("line ") and head[5:].isdigit():
        line, message = int(head[5:]), rest
    if error.field and error.field not in message and error.field not in ("effective_on", "citation",
                                                                          "class_map", "date"):
        message = f"{error.field}: {message}"
    return f"line {line}: {message}" if line is not None else message


def _add_refusals(form: forms.Form, exc: ApplicationError, *, text_field: str) -> None:
    """Each refusal on the form field it names; the file's own problems on the file (or the text)."""
    for error in exc.errors:
        field = {"date": "effective_on"}.get(error.field, error.field)
        form.add_error(field if field in ("effective_on", "citation", "class_map") else text_field,
                       _refusal(error))


def _calendar():
    try:
        return ordinance_on(today()).calendar
    except ApplicationError:
        return None  # no preset installed yet: the preview asks for the frequency


def _frequencies(calendar) -> list[str]:
    """The frequencies the installed calendar bills, in the order of the meter sizes."""
    if calendar is None:
        return list(ALL_FREQUENCIES)
    return list(dict.fromkeys(calendar.frequency_for(size) for size in METER_SIZES))


def _line_rows(rated) -> list[dict]:
    return [{"description": line.description, "citation": line.citation,
             "quantity": f"{line.quantity.normalize():,f}", "rate": fmt_rate(line.rate),
             "amount": fmt_dollars(line.amount)} for line in rated.lines]


class RateScheduleOwrsMixin:
    """The OWRS pages of ``RateScheduleAdmin``: import (check, preview, activate) and download."""

    def owrs_urls(self):
        return [path("import-owrs/", self.admin_site.admin_view(self.import_owrs_view),
                     name="billing_rateschedule_import_owrs"),
                path("<int:pk>/owrs/", self.admin_site.admin_view(self.export_owrs_view),
                     name="billing_rateschedule_export_owrs")]

    # --- download -------------------------------------------------------------------------------------

    def export_owrs_view(self, request, pk):
        """"Download as OWRS": the schedule as an OWRS file that imports back as it is."""
        schedule = get_object_or_404(RateSchedule, pk=pk)
        if not self.has_view_permission(request, schedule):
            raise PermissionDenied
        try:
            text = export_text(schedule)
        except ApplicationError as exc:
            self.message_user(request, f"The schedule cannot be written as OWRS: {exc}", messages.ERROR)
            return HttpResponseRedirect(reverse("admin:billing_rateschedule_change", args=[schedule.pk]))
        response = HttpResponse(text, content_type="text/yaml; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="rates-{schedule.effective_on.isoformat()}.owrs"'
        return response

    # --- import ---------------------------------------------------------------------------------------

    def import_owrs_view(self, request):
        """GET: the empty form (effective the first of next month). POST "_check": check the file and show
        what it adds; "_preview": the same, with one bill rated; "_activate": check again and add it;
        "_edit": back to the form with what was given."""
        if not self.has_add_permission(request):
            raise PermissionDenied
        if request.method != "POST":
            form = OwrsImportForm(initial={"effective_on": first_of_next_month(today())})
            return self._import_form_page(request, form)
        if "_check" in request.POST:
            form = OwrsImportForm(request.POST, request.FILES)
        else:
            form = CarriedImportForm(request.POST)
        if not form.is_valid():
            return self._import_form_page(request, self._as_import_form(form))
        if "_edit" in request.POST:
            return self._import_form_page(request, self._as_import_form(form))
        try:
            prepared = self._prepare(form.cleaned_data)
        except ApplicationError as exc:
            retry = self._as_import_form(form)
            _add_refusals(retry, exc, text_field="owrs_text")
            return self._import_form_page(request, retry)
        if "_activate" in request.POST:
            return self._activate(request, form, prepared)
        return self._checked_page(request, form.cleaned_data, prepared)

    def _prepare(self, data: dict):
        lines = (data.get("class_map") or "").splitlines()
        class_map = parse_class_map(lines) if any(line.strip() for line in lines) else None
        return prepare_import(data["text"], effective_on=data["effective_on"], class_map=class_map,
                              citation=(data.get("citation") or "").strip())

    def _activate(self, request, form, prepared):
        try:
            schedule = activate_import(prepared)
        except ApplicationError as exc:
            retry = self._as_import_form(form)
            _add_refusals(retry, exc, text_field="owrs_text")
            return self._import_form_page(request, retry)
        day = schedule.effective_on.isoformat()
        self.message_user(request, f"Rate schedule effective {day} added; bills dated {day} and later are rated "
                                   "by it.", messages.SUCCESS)
        return HttpResponseRedirect(reverse("admin:billing_rateschedule_change", args=[schedule.pk]))

    @staticmethod
    def _as_import_form(form: forms.Form) -> OwrsImportForm:
        """The step-1 form holding what was given, the uploaded file's text pasted in (a browser never
        sends a file twice), with the errors found so far."""
        cleaned = getattr(form, "cleaned_data", {}) or {}
        data = {name: form.data.get(name, "") for name in ("effective_on", "citation", "class_map")}
        data["owrs_text"] = cleaned.get("text") or form.data.get("owrs_text", "")
        retry = OwrsImportForm(data)
        retry.full_clean()  # finds again what was wrong with the date, the citation or an empty text
        if "owrs_file" in form.errors:
            retry.errors["owrs_file"] = form.errors["owrs_file"]  # the upload's own problem (size, encoding)
        return retry

    def _import_form_page(self, request, form: OwrsImportForm):
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "title": "Import an OWRS rate file", "step": 1}
        return TemplateResponse(request, "admin/billing/rateschedule/import_owrs.html", context)

    def _checked_page(self, request, data: dict, prepared):
        calendar = _calendar()
        frequencies = _frequencies(calendar)
        fact_fields = {name: ACCOUNT_FIELDS.get(name, "")
                       for name in sorted({n for needs in prepared.needs.values() for n in needs})}
        preview_form = PreviewBillForm(request.POST if "_preview" in request.POST else None,
                                       frequencies=frequencies, classes=prepared.classes, fact_fields=fact_fields,
                                       initial={"category": Account.Category.ONE_TWO_FAMILY, "meter_size": "5/8"})
        preview = None
        if preview_form.is_bound and preview_form.is_valid():
            wanted = preview_form.cleaned_data
            frequency = wanted["frequency"] or (calendar.frequency_for(wanted["meter_size"]) if calendar
                                                else ALL_FREQUENCIES[0])
            preview = {"category": category_words(wanted["category"]), "meter_size": wanted["meter_size"],
                       "frequency": frequency, "gallons": fmt_gallons(wanted["usage_gal"]),
                       "usage_note": wanted["usage_note"]}
            try:
                rated = preview_bill(prepared.rules, category=wanted["category"], meter_size=wanted["meter_size"],
                                     gallons=wanted["usage_gal"], frequency=frequency, facts=wanted["facts"])
            except (ApplicationError, RatingError) as exc:
                preview["refusal"] = str(exc)
            else:
                preview["lines"], preview["total"] = _line_rows(rated), fmt_dollars(rated.total)
        carried = CarriedImportForm(initial={"owrs_text": data["text"], "effective_on": data["effective_on"],
                                             "citation": data.get("citation", ""),
                                             "class_map": data.get("class_map", "")}, auto_id=False)
        by_target = class_targets(prepared.class_map)
        mapping = [{"category": category_words(category),
                    "classes": [class_for(by_target, category=category, frequency=f) or "—" for f in frequencies]}
                   for category in Account.Category.values]
        missing = [{"field": field, "count": count, "words": ACCOUNT_FIELDS.get(field, ""),
                    "classes": [c for c, needs in prepared.needs.items() if field in needs]}
                   for field, count in prepared.accounts_missing.items() if count]
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "step": 2,
                   "title": f"Check the OWRS rate file: effective {prepared.effective_on.isoformat()}",
                   "prepared": prepared, "carried": carried, "tables": schedule_tables(prepared.rules),
                   "frequencies": frequencies, "mapping": mapping, "missing": missing,
                   "needs": [{"owrs_class": c, "fields": prepared.needs.get(c, [])} for c in prepared.classes],
                   "preview_form": preview_form, "preview": preview}
        return TemplateResponse(request, "admin/billing/rateschedule/import_owrs.html", context)


def _rule_tables(tables) -> str:
    return render_to_string("admin/billing/_rule_tables.html", {"tables": tables})


@admin.register(RateSchedule)
class RateScheduleAdmin(RateScheduleOwrsMixin, HistoryAdmin):
    """A schedule shown as the ordinance's tables; the rules as stored (JSON) only under "Advanced", and
    only while the schedule has rated no bill. A new schedule can come from an OWRS rate file ("Import an
    OWRS rate file" on the list), and each schedule downloads as one ("Download as OWRS")."""

    list_display = ("effective_on", "citation", "summary", "is_sample", "bills_using")

    def get_list_display(self, request):
        # A town's schedules name their district (blank: the installation's).
        return ("district", *super().get_list_display(request)) if districts() else super().get_list_display(request)
    readonly_fields = ("rates", "bills_using")
    change_list_template = "admin/billing/rateschedule/change_list.html"  # "Import an OWRS rate file"
    change_form_template = "admin/billing/rateschedule/change_form.html"  # "Download as OWRS"

    @admin.display(description="bills rated with it")
    def bills_using(self, obj):
        return obj.bills.count() if obj.pk else 0

    @admin.display(description="rates")
    def summary(self, obj):
        return schedule_summary(obj.rules or {})

    @admin.display(description="rates")
    def rates(self, obj):
        return _rule_tables(schedule_tables(obj.rules or {})) if obj.pk else "—"

    def _has_bills(self, obj) -> bool:
        return obj is not None and obj.pk is not None and obj.bills.exists()

    def get_fieldsets(self, request, obj=None):
        main = (None, {"fields": ("effective_on", "citation", "is_sample", "bills_using", "rates")})
        if self._has_bills(obj) or not self.has_change_permission(request, obj):
            return (main,)
        return (main, ("Advanced: the rules as the preset declares them", {
            "fields": ("rules",), "classes": ("collapse",),
            "description": "The schedule's rules in the preset's form (billing/rating.py reads them). Editable "
                           "only while no bill has been rated with this schedule."}))

    def get_readonly_fields(self, request, obj=None):
        # A schedule that has rated bills is history: a change takes a new effective date.
        if self._has_bills(obj):
            return ("effective_on", "citation", "is_sample", "rates", "bills_using")
        return self.readonly_fields

    def get_urls(self):
        return [*self.owrs_urls(), *super().get_urls()]


@admin.register(Fee)
class FeeAdmin(HistoryAdmin):
    list_display = ("code", "description", "terms", "citation", "effective_on")

    def get_list_display(self, request):
        return ("district", *super().get_list_display(request)) if districts() else super().get_list_display(request)
    list_filter = ("code",)
    readonly_fields = ("terms", "size_and_terms")

    def get_fieldsets(self, request, obj=None):
        main = (None, {"fields": ("code", "effective_on", "description", "rule", "amount", "rate", "citation", "note",
                                  "terms", "size_and_terms")})
        if not self.has_change_permission(request, obj):
            return (main,)
        return (main, ("Advanced: sizes and terms as the preset declares them", {
            "fields": ("by_size", "params"), "classes": ("collapse",)}))

    @admin.display(description="charge")
    def terms(self, obj):
        if obj.pk is None:
            return "—"
        try:
            return fee_rule(obj).terms()
        except ApplicationError as exc:
            return str(exc)

    @admin.display(description="by size and terms")
    def size_and_terms(self, obj):
        return _rule_tables(fee_tables(by_size=obj.by_size or {}, params=obj.params or {})) if obj.pk else "—"
