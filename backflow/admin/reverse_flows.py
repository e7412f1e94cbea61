"""Reverse flow a meter reported: the follow-ups the chapter asks for, and the inspector's "Followed up" (a dated
note of what was found and done)."""

from django import forms
from django.contrib import admin

from core.clock import today

from ..models import ReverseFlow
from ..services.compliance import reverse_flow_done, reverse_flow_problems
from .common import account_link


class FollowedUpForm(forms.ModelForm):
    done_on = forms.DateField(label="Followed up on", widget=forms.DateInput(attrs={"type": "date"}, format="%Y-%m-%d"))
    note = forms.CharField(label="What was found and done", widget=forms.Textarea(attrs={"rows": 4}))

    class Meta:
        model = ReverseFlow
        fields = ("done_on", "note")

    def clean(self):
        data = super().clean()
        for error in reverse_flow_problems(follow_up=self.instance, done_on=data.get("done_on"),
                                           note=data.get("note", "")):
            self.add_error(error.field or None, error.message)
        return data


@admin.register(ReverseFlow)
class ReverseFlowAdmin(admin.ModelAdmin):
    list_display = ("account_no", "read_on", "status", "action", "citation", "done_on")
    list_filter = ("status",)
    search_fields = ("account__account_no", "account__premises__service_address")
    list_select_related = ("account",)
    date_hierarchy = "read_on"
    form = FollowedUpForm

    @admin.display(description="account", ordering="account__account_no")
    def account_no(self, obj):
        return obj.account.account_no

    @admin.display(description="account")
    def account_shown(self, obj):
        return account_link(obj.account)

    def has_add_permission(self, request):
        return False  # opened by the meter's alert

    def has_delete_permission(self, request, obj=None):
        return False

    def get_fields(self, request, obj=None):
        shown = ["account_shown", "read_on", "action", "citation", "devices", "status"]
        return shown + (["done_on", "note", "done_by"] if obj and obj.status == ReverseFlow.Status.DONE
                        else ["done_on", "note"])

    def get_readonly_fields(self, request, obj=None):
        shown = ["account_shown", "read_on", "action", "citation", "devices", "status"]
        if obj is not None and obj.status == ReverseFlow.Status.DONE:
            return [*shown, "done_on", "note", "done_by"]
        return shown

    def get_changeform_initial_data(self, request):
        return {"done_on": today()}

    def save_model(self, request, obj, form, change):
        reverse_flow_done(follow_up=ReverseFlow.objects.get(pk=obj.pk), done_on=form.cleaned_data["done_on"],
                          note=form.cleaned_data["note"], actor=request.user)
