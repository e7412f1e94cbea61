"""A town's premises put in their water districts, each from a day (``billing.services.districts``): the clerk records
a district's boundaries, or a premises moved by the Town Board, and sees each premises' history. A change is a new
row from its day; a recorded one is not edited (a wrong one is corrected by a later row), since bills rest on it."""

from django import forms
from django.contrib import admin

from accounts.models import PremisesDistrict
from core.admin import HistoryAdmin
from core.errors import ApplicationError
from ordinance.selectors import districts

from ..services.districts import premises_district_check, premises_district_set


class PremisesDistrictForm(forms.ModelForm):
    class Meta:
        model = PremisesDistrict
        fields = ("premises", "district", "effective_on", "note")

    def clean(self):
        data = super().clean()
        premises, district, effective_on = data.get("premises"), data.get("district"), data.get("effective_on")
        if premises and district and effective_on:
            try:
                premises_district_check(premises=premises, district=district.code, effective_on=effective_on)
            except ApplicationError as exc:
                for error in exc.errors:
                    self.add_error(error.field if error.field in self.fields else None, error.message)
        return data


@admin.register(PremisesDistrict)
class PremisesDistrictAdmin(HistoryAdmin):
    form = PremisesDistrictForm
    list_display = ("premises", "district", "effective_on", "note")
    list_filter = ("district",)
    list_select_related = ("premises", "district")
    search_fields = ("premises__service_address", "premises__sbl", "premises__accounts__account_no")
    autocomplete_fields = ("premises",)
    date_hierarchy = "effective_on"

    def changelist_view(self, request, extra_context=None):
        # A village names no districts: the page says so rather than listing nothing.
        extra_context = {**(extra_context or {}), "subtitle": None if districts() else (
            "This installation names no water districts: a village is one district, and every premises is billed "
            "by its own tables. A town's preset names its districts ([[district]]).")}
        return super().changelist_view(request, extra_context=extra_context)

    def has_change_permission(self, request, obj=None):
        return obj is None and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return False

    def save_model(self, request, obj, form, change):
        saved = premises_district_set(premises=obj.premises, district=obj.district.code,
                                      effective_on=obj.effective_on, actor=request.user, note=obj.note)
        obj.pk = saved.pk
