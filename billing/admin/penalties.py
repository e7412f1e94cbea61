"""Penalties in the clerk's office: the preview of a night's assessment, the register of late charges posted,
and waivers (a clerk asks with a reason; above the office's limit a supervisor approves or refuses).

The pages hang under the ledger's admin (``/admin/billing/ledgerentry/penalties/…``); each calls one selector or
one service and checks the user's permission itself.
"""

import io

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.http import url_has_allowed_host_and_scheme

from core.admin import (
    DATE_WIDGET,
    TEXT_WIDGET,
    ApprovalPagesMixin,
    ReadOnlyAdmin,
    ServiceForm,
    act_on_each,
    action_page,
)
from core.commands import today
from core.csvout import csv_writer
from core.errors import ApplicationError
from core.money import fmt_amount, fmt_dollars

from ..models import LedgerEntry, PenaltyWaiver
from ..ordinance import ordinance_on
from ..penalties.plan import LATE_CHARGE_KINDS
from ..penalties.selectors import (
    PREVIEW_DAYS_AHEAD,
    penalties_preview,
    penalty_register,
    preview_day_refusal,
    preview_totals,
)
from ..services.waivers import SUPERVISOR_PERMISSION, penalty_waiver_decide, penalty_waiver_request
from .payments import LedgerEntryAdmin

KIND_WORDS = {"penalty": "penalty", "interest": "interest charge"}
PREVIEW_PAGE_ROWS = 500


def _csv_response(name: str, header: list[str], rows: list[list]) -> HttpResponse:
    out = io.StringIO()
    writer = csv_writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    response = HttpResponse(out.getvalue().encode("utf-8"), content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
    return response


class PreviewForm(forms.Form):
    on = forms.DateField(label="Assess as of", widget=DATE_WIDGET,
                         help_text=f"Today for tonight's run; up to {PREVIEW_DAYS_AHEAD} days ahead to plan.")

    def clean_on(self):
        day = self.cleaned_data["on"]
        try:
            preview_day_refusal(day)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.errors[0].message) from None
        return day


class RegisterForm(forms.Form):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["from"] = forms.DateField(label="From", widget=DATE_WIDGET)
        self.fields["to"] = forms.DateField(label="To", widget=DATE_WIDGET)


class WaiveForm(ServiceForm):
    reason = forms.CharField(widget=TEXT_WIDGET, help_text="Why the charge is waived (kept for the audit).")
    whole_fields = ("entry", "as_of")
    submit = "Waive"

    def __init__(self, *args, entry: LedgerEntry, **kwargs):
        super().__init__(*args, **kwargs)
        self.entry = entry

    def perform(self, *, actor) -> str:
        waiver = penalty_waiver_request(entry=self.entry, reason=self.cleaned_data["reason"], actor=actor,
                                        as_of=today())
        return waiver_message(waiver)


def waiver_message(waiver: PenaltyWaiver) -> str:
    """What the clerk is told: waived at once or waiting for a supervisor, and why (the office's limit)."""
    entry = waiver.entry
    what = (f"the {KIND_WORDS.get(entry.kind, entry.kind)} of {entry.posted_on} on bill {waiver.bill.number} "
            f"(account {waiver.account.account_no}, {fmt_dollars(waiver.amount.amount)})")
    limit = fmt_dollars(ordinance_on(today()).waiver_approval_above)
    if waiver.status == PenaltyWaiver.Status.APPROVED:
        return (f"Waived at once: {what} is at or below the office's limit of {limit} (office policy), which a "
                "clerk may waive; it is corrected to $0.00 on its own day and is not charged again.")
    return (f"Waits for a supervisor: {what} is above the office's limit of {limit} (office policy: a larger "
            "waiver needs a supervisor's approval). Nothing changes on the account until a supervisor approves it.")


@admin.register(LedgerEntry)
class PenaltyLedgerEntryAdmin(LedgerEntryAdmin):
    """The ledger's admin, with the penalty pages."""

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("penalties/", view(self.register_view), name="billing_penalties_register"),
                path("penalties/preview/", view(self.preview_view), name="billing_penalties_preview"),
                path("penalties/<int:entry_id>/waive/", view(self.waive_view), name="billing_penalty_waive"),
                *super().get_urls()]

    def _context(self, request, **extra) -> dict:
        return {**self.admin_site.each_context(request), "opts": self.model._meta, **extra}

    def preview_view(self, request):
        if not request.user.has_perm("billing.view_ledgerentry"):
            raise PermissionDenied
        now = today()
        form = PreviewForm(request.GET if "on" in request.GET else None, initial={"on": now})
        if form.is_bound:
            on = form.cleaned_data["on"] if form.is_valid() else None
        else:
            on = now
        rows, totals, refusal = [], None, ""
        if on is not None:
            try:
                rows = penalties_preview(as_of=on)
            except ApplicationError as exc:
                refusal = str(exc)
            else:
                totals = preview_totals(rows)
                if request.GET.get("format") == "csv":
                    return _csv_response(f"penalties-preview-{on}", [
                        "account_no", "owner", "bill", "day", "kind", "correction", "amount", "citation",
                        "description"], [[r.account_no, r.owner, r.bill_number, r.day.isoformat(), r.kind,
                                          "yes" if r.correction else "", fmt_amount(r.amount), r.citation,
                                          r.description] for r in rows])
        # A long preview is shown PREVIEW_PAGE_ROWS rows a page, the totals of all of it on each; the CSV has all.
        page = Paginator(rows, PREVIEW_PAGE_ROWS).get_page(request.GET.get("page"))
        query = request.GET.copy()
        query.pop("page", None)
        context = self._context(request, title="Preview of penalties", form=form, on=on, today=now, rows=rows,
                                page=page, page_query=query.urlencode(), totals=totals, refusal=refusal,
                                ahead=(on - now).days if on else 0)
        return TemplateResponse(request, "admin/billing/penalties/preview.html", context)

    def register_view(self, request):
        if not request.user.has_perm("billing.view_ledgerentry"):
            raise PermissionDenied
        now = today()
        bound = "from" in request.GET or "to" in request.GET
        form = RegisterForm(request.GET if bound else None, initial={"from": now.replace(day=1), "to": now})
        if bound:
            valid = form.is_valid()
            start, end = (form.cleaned_data["from"], form.cleaned_data["to"]) if valid else (None, None)
        else:
            start, end = now.replace(day=1), now
        register, refusal = None, ""
        if start is not None:
            try:
                register = penalty_register(start=start, end=end)
            except ApplicationError as exc:
                refusal = str(exc)
            else:
                if request.GET.get("format") == "csv":
                    return _csv_response(f"penalties-{start}-{end}", [
                        "account_no", "owner", "bill", "day", "kind", "citation", "description", "charged",
                        "corrected", "net", "waiver", "corrections"], [
                        [r.account_no, r.owner, r.bill_number, r.day.isoformat(), r.kind, r.citation, r.description,
                         fmt_amount(r.charged), fmt_amount(r.corrected), fmt_amount(r.net), r.waiver_status,
                         "; ".join(f"{fmt_amount(a)} {d}" for a, d in r.corrections)] for r in register.rows])
        context = self._context(request, title="Penalties posted", form=form, register=register, refusal=refusal,
                                start=start, end=end, query=request.GET.urlencode(),
                                can_waive=request.user.has_perm("billing.add_penaltywaiver"))
        return TemplateResponse(request, "admin/billing/penalties/register.html", context)

    def waive_view(self, request, entry_id: int):
        if not request.user.has_perm("billing.add_penaltywaiver"):
            raise PermissionDenied
        entry = get_object_or_404(LedgerEntry.objects.select_related("account", "bill"), pk=entry_id,
                                  kind__in=LATE_CHARGE_KINDS)
        back = request.POST.get("next") or request.GET.get("next") or ""
        if not url_has_allowed_host_and_scheme(back, allowed_hosts={request.get_host()}):
            back = ""
        back = back or reverse("admin:billing_penalties_register") + \
            f"?from={entry.posted_on.replace(day=1)}&to={entry.posted_on}"
        form = WaiveForm(request.POST if request.method == "POST" else None, entry=entry)
        if form.is_bound and form.is_valid():
            message = form.run(actor=request.user)
            if message is not None:
                self.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(back)
        limit = ordinance_on(today()).waiver_approval_above
        context = self._context(request, title=f"Waive a {KIND_WORDS[entry.kind]}", form=form, entry=entry,
                                back=back, limit=fmt_dollars(limit))
        return TemplateResponse(request, "admin/billing/penalties/waive.html", context)


class DecideForm(forms.Form):
    note = forms.CharField(widget=TEXT_WIDGET, required=False,
                           help_text="The supervisor's note (required to refuse: say why).")

    def __init__(self, *args, approve: bool, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["note"].required = not approve


@admin.register(PenaltyWaiver)
class PenaltyWaiverAdmin(ApprovalPagesMixin, ReadOnlyAdmin):
    list_display = ("requested_at", "account", "bill", "charge", "amount", "reason", "status", "requested_by",
                    "decided_by", "decided_at")
    list_filter = ("status",)
    search_fields = ("account__account_no", "bill__number", "reason")
    list_select_related = ("account", "bill", "entry", "requested_by", "decided_by")
    actions = ["approve", "refuse"]
    readonly_fields = ("entry", "account", "bill", "amount", "reason", "status", "requested_by", "requested_at",
                       "decided_by", "decided_at", "decision_note")

    @admin.display(description="charge")
    def charge(self, obj):
        return f"{LedgerEntry.Kind(obj.entry.kind).label} of {obj.entry.posted_on}"

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_penaltywaiver")

    def has_decide_permission(self, request):
        return request.user.has_perm(SUPERVISOR_PERMISSION)

    def _decide(self, request, queryset, *, approve: bool):
        form = DecideForm(request.POST if "apply" in request.POST else None, approve=approve)
        if not form.is_valid():
            return action_page(self, request, "admin/billing/penalties/decide.html", form=form,
                               waivers=queryset.select_related("account", "bill", "entry"),
                               action="approve" if approve else "refuse", approve=approve,
                               title="Approve waivers" if approve else "Refuse waivers")

        def what(waiver: PenaltyWaiver) -> str:
            return (f"{waiver.account.account_no}: the waiver of {fmt_dollars(waiver.amount.amount)} on bill "
                    f"{waiver.bill.number}")

        def decide(waiver: PenaltyWaiver) -> str:
            penalty_waiver_decide(waiver=waiver, approve=approve, note=form.cleaned_data["note"], actor=request.user)
            return (f"{what(waiver)} is approved: the charge is corrected to $0.00 on its own day." if approve
                    else f"{what(waiver)} is refused: the charge stands.")

        act_on_each(self, request, queryset.select_related("account", "bill", "entry"), decide,
                    refused=lambda waiver, exc: f"{what(waiver)} is not decided: {exc}")
        return None

    @admin.action(description="Approve the selected waivers", permissions=["decide"])
    def approve(self, request, queryset):
        return self._decide(request, queryset, approve=True)

    @admin.action(description="Refuse the selected waivers", permissions=["decide"])
    def refuse(self, request, queryset):
        return self._decide(request, queryset, approve=False)

