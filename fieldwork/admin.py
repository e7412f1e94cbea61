"""Work orders in the admin: made at the office; the crew's day sheet in route order, each stop completed from the
field (a phone will do); the shut-off list with its door hangers."""

from datetime import date

from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.dateparse import parse_date

from core.admin import ServicePagesAdmin
from core.clock import today
from core.dates import fmt_day

from .documents import shutoff_pdf
from .forms import CancelForm, CompleteForm, FieldOrderForm
from .models import FieldOrder
from .services import day_sheet, previous_reads, shutoff_list


def _day(request) -> date:
    day = parse_date(request.GET.get("on") or "") if request.GET.get("on") else None
    return day if day and day <= today() else today()


@admin.register(FieldOrder)
class FieldOrderAdmin(ServicePagesAdmin):
    form_class = FieldOrderForm
    intro = ("Work for the field crew: re-read a meter, change a meter, turn the water on or off. The crew completes "
             "it from the day sheet with what they found; the reading, the new meter or the account's service is "
             "recorded then. A shut-off for nonpayment is ordered on its termination case instead.")
    list_display = ("number", "kind", "account", "scheduled_on", "status", "reason", "done_on")
    list_filter = ("status", "kind")
    search_fields = ("account__account_no", "account__premises__service_address")
    list_select_related = ("account",)
    readonly_fields = ("number", "account", "kind", "status", "reason", "scheduled_on", "created_by", "done_on",
                       "done_by", "result", "reading", "new_meter")
    fields = readonly_fields

    @admin.display(description="Order")
    def number(self, obj):
        return obj.number

    def get_urls(self):
        view = self.admin_site.admin_view
        return [path("day/", view(self.day_view), name="fieldwork_fieldorder_day"),
                path("shutoffs/", view(self.shutoffs_view), name="fieldwork_fieldorder_shutoffs"),
                path("<int:pk>/complete/", view(self.complete_view), name="fieldwork_fieldorder_complete"),
                path("<int:pk>/cancel/", view(self.cancel_view), name="fieldwork_fieldorder_cancel"),
                *super().get_urls()]

    def _may_do(self, request) -> bool:
        return request.user.has_perm("fieldwork.change_fieldorder")

    def _may_cancel(self, request) -> bool:
        return request.user.has_perm("fieldwork.cancel_fieldorder")

    def header_links(self, request) -> list[tuple[str, str]]:
        return [("Today's day sheet", reverse("admin:fieldwork_fieldorder_day")),
                ("Shut-off list", reverse("admin:fieldwork_fieldorder_shutoffs"))]

    def page_buttons(self, request, obj) -> list[tuple[str, str]]:
        buttons = []
        if obj.status == FieldOrder.Status.OPEN and self._may_do(request):
            buttons.append(("Complete", reverse("admin:fieldwork_fieldorder_complete", args=[obj.pk])))
        if obj.status == FieldOrder.Status.OPEN and self._may_cancel(request):
            buttons.append(("Cancel the order", reverse("admin:fieldwork_fieldorder_cancel", args=[obj.pk])))
        return buttons

    def _order_page(self, request, pk, form_class, title: str):
        if not (self._may_cancel(request) if form_class is CancelForm else self._may_do(request)):
            raise PermissionDenied
        order = get_object_or_404(FieldOrder.objects.select_related("account__premises", "account__owner"), pk=pk)
        form = form_class(request.POST or None, order=order)
        account = order.account
        facts = [("Order", f"{order.number}: {order.get_kind_display()}"), ("Why", order.reason),
                 ("Account", f"{account.account_no}, {(account.occupant or account.owner).name}"),
                 ("Service address", account.premises.service_address),
                 ("Meter", ", ".join(f"{i.meter.serial} ({i.meter.size}\")" for i in account.installations.filter(
                     removed_on__isnull=True).select_related("meter")) or "—")]
        if account.premises.meter_location:
            facts.append(("Where the meter is", account.premises.meter_location))
        last_read, expected = previous_reads([account], on=today()).get(account.pk, ("", ""))
        if last_read:
            facts.append(("Previous reading", last_read))
        if expected:
            facts.append(("Expected today", expected))
        return self.run_form(request, form, done_url=reverse("admin:fieldwork_fieldorder_day"), obj=order,
                             facts=facts, title=f"{title} {order.number}")

    def complete_view(self, request, pk):
        return self._order_page(request, pk, CompleteForm, "Complete")

    def cancel_view(self, request, pk):
        return self._order_page(request, pk, CancelForm, "Cancel")

    def day_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        on = _day(request)
        carry_out = request.user.has_perm("termination.carry_out_terminationcase")
        carried = reverse("admin:termination_terminationcase_carried_out", args=[0])

        def shutoff_url(stop) -> str:
            if stop.work_order is None or not carry_out or stop.held:
                return ""
            return carried.replace("/0/", f"/{stop.work_order.case.pk}/") + f"?done_on={on.isoformat()}"

        return TemplateResponse(request, "admin/fieldwork/fieldorder/day.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta, "title": f"Day sheet for {fmt_day(on)}",
            "on": on, "stops": [(stop, shutoff_url(stop)) for stop in day_sheet(on=on)],
            "may_do": self._may_do(request)})

    def shutoffs_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        on = _day(request)
        stops = shutoff_list(as_of=on)
        if request.GET.get("format") == "pdf" and stops:
            response = HttpResponse(shutoff_pdf(stops, as_of=on), content_type="application/pdf")
            response["Content-Disposition"] = f'inline; filename="shutoff-list-{on}.pdf"'
            return response
        return TemplateResponse(request, "admin/fieldwork/fieldorder/shutoffs.html", {
            **self.admin_site.each_context(request), "opts": self.model._meta,
            "title": f"Shut-off list for {fmt_day(on)}", "on": on, "stops": stops})

    def added_url(self, form) -> str:
        return reverse("admin:fieldwork_fieldorder_change", args=[form.order.pk])
