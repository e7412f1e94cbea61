"""Compliance notices: serving, shortening, compliance, fines charged to the next bill, and the noncompliance
list."""

from datetime import date

from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import FileResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import NoReverseMatch, path, reverse
from django.utils.html import format_html

from accounts.selectors import account_get
from core.admin import ReadOnlyInline, StatusChangeInline, parse_day
from core.clock import refuse_future, today
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ZERO, fmt_dollars

from ..documents import notice_pdf_store
from ..models import ComplianceNotice, NoticeCharge
from ..policy import BackflowPolicy
from ..services import compliance as svc
from ..services import fines
from .common import BackflowAdmin, admin_url
from .forms import CureForm, FineForm, HearingRequestForm, ServeNoticeForm, ShortenForm

# --- compliance notices, fines and noncompliance --------------------------------------------------------


class NoticeChargeInline(ReadOnlyInline):
    model = NoticeCharge
    fields = readonly_fields = ("first_day", "last_day", "amount", "computation", "billed")
    verbose_name_plural = "charged to the bill"

    @admin.display(description="amount")
    def amount(self, obj):
        return fmt_dollars(obj.charge.amount.amount)

    @admin.display(description="bill")
    def billed(self, obj):
        return obj.charge.bill.number if obj.charge.bill_id else "waiting for the next bill"

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("charge", "charge__bill")


@admin.register(ComplianceNotice)
class ComplianceNoticeAdmin(BackflowAdmin):
    add_label = "Serve notice"
    list_display = ("served_on", "kind", "account_no", "device", "method", "deadline", "status", "cured_on", "citation")
    list_filter = ("kind", "method", ("cured_on", admin.EmptyFieldListFilter))
    search_fields = ("account__account_no", "account__owner__name", "device__serial", "article_number")
    list_select_related = ("account", "device")
    date_hierarchy = "served_on"
    fieldsets = (
        (None, {"fields": ("kind", "citation", "status", "account_link", "device_link", "due_for", "paper")}),
        ("Service", {"fields": ("served_on", "method", "article_number", "received_on", "served_by")}),
        ("Deadline", {"fields": ("deadline", "shortened_to", "shortened_by", "shortened_reason",
                                 "hearing_requested_on", "cured_on")}),
        ("Fine or fee", {"fields": ("largest_pipe_inches", "per_day", "amount", "test", "fine_link")}),
    )
    inlines = (NoticeChargeInline, StatusChangeInline)

    def get_readonly_fields(self, request, obj=None):
        return [name for _, options in self.fieldsets for name in options["fields"]]

    def has_add_permission(self, request):
        return request.user.has_perm("backflow.add_compliancenotice")

    @admin.display(description="device")
    def device_link(self, obj):
        if not obj.device_id:
            return "—"
        return format_html('<a href="{}">{} {}</a>', reverse("admin:backflow_device_change", args=[obj.device_id]),
                           obj.device.type, obj.device.serial)

    @admin.display(description="PDF")
    def paper(self, obj):
        return format_html('<a href="{}">Notice PDF</a>', reverse("admin:backflow_compliancenotice_pdf",
                                                                  args=[obj.pk]))

    @admin.display(description="fine accrued")
    def fine_link(self, obj):
        policy = self.installed_rules()
        if policy is None or policy.fine is None or obj.kind not in policy.fine.on_kinds:
            return "—"
        return format_html('<a href="{}">Fine accrued on the account\'s notices</a> ({})',
                           admin_url("backflow_compliancenotice_fine", account_no=obj.account.account_no),
                           policy.fine.citation)

    # -- the pages

    def _offered(self, notice: ComplianceNotice, policy: BackflowPolicy | None) -> dict[str, bool]:
        rule = policy.notices.get(notice.kind) if policy else None
        return {"shorten": bool(rule and rule.shortenable and notice.cured_on is None),
                "hearing": bool(rule and rule.shortenable and notice.status == ComplianceNotice.Status.OPEN),
                "cure": notice.cured_on is None}

    def page_buttons(self, request, obj):
        offered, buttons = self._offered(obj, self.installed_rules()), []
        if request.user.has_perm("backflow.change_compliancenotice"):
            if offered["shorten"]:
                buttons.append(("Shorten window", reverse("admin:backflow_compliancenotice_shorten", args=[obj.pk])))
            if offered["hearing"]:
                buttons.append(("Hearing requested",
                                reverse("admin:backflow_compliancenotice_hearing", args=[obj.pk])))
            if offered["cure"]:
                buttons.append(("Complied / paid", reverse("admin:backflow_compliancenotice_cure", args=[obj.pk])))
        return buttons

    def get_urls(self):
        view = self.admin_site.admin_view
        return [
            path("<int:pk>/pdf/", view(self.pdf_view), name="backflow_compliancenotice_pdf"),
            path("<int:pk>/shorten/", view(self.step_view), {"step": "shorten"},
                 name="backflow_compliancenotice_shorten"),
            path("<int:pk>/cure/", view(self.step_view), {"step": "cure"}, name="backflow_compliancenotice_cure"),
            path("<int:pk>/hearing/", view(self.step_view), {"step": "hearing"},
                 name="backflow_compliancenotice_hearing"),
            path("fine/", view(self.fine_view), name="backflow_compliancenotice_fine"),
            path("noncompliance/", view(self.noncompliance_view), name="backflow_compliancenotice_noncompliance"),
        ] + super().get_urls()

    def _notice(self, request, pk) -> ComplianceNotice:
        if not self.has_view_permission(request):
            raise PermissionDenied
        return get_object_or_404(ComplianceNotice.objects.select_related("account", "account__owner",
                                                                         "account__premises", "device"), pk=pk)

    def add_view(self, request, form_url="", extra_context=None):
        return self.service_add_page(
            request, lambda policy: ServeNoticeForm(request.POST or None, policy=policy, initial={
                name: request.GET.get(name, "") for name in ("account_no", "device", "kind")}),
            done_url=lambda form: reverse("admin:backflow_compliancenotice_change", args=[form.notice.pk]),
            title="Serve notice", intro=(
                "The deadline follows the preset, counted from the notice or its receipt as the kind says; the notice "
                "PDF is rendered for the file."))

    def step_view(self, request, pk, step: str):
        self.need(request, "backflow.change_compliancenotice")
        notice = self._notice(request, pk)
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        page = reverse("admin:backflow_compliancenotice_change", args=[notice.pk])
        label = {"shorten": "Shorten window", "cure": "Complied / paid", "hearing": "Hearing requested"}[step]
        if not self._offered(notice, policy)[step]:
            self.message_user(request, f"“{label}” is not offered for this notice"
                                       + (f": it was complied with on {fmt_day(notice.cured_on)}." if notice.cured_on
                                          else f" ({notice.citation})."), messages.WARNING)
            return HttpResponseRedirect(page)
        form = {"shorten": ShortenForm, "cure": CureForm, "hearing": HearingRequestForm}[step](request.POST or None,
                                                                                             notice=notice)
        facts = [("Notice", f"{notice.get_kind_display()} served {fmt_day(notice.served_on)} ({notice.citation})"),
                 ("Account", f"{notice.account.account_no}, {notice.account.premises.service_address}"),
                 ("Act by", fmt_day(notice.deadline) if notice.deadline else "—")]
        intro = {"shorten": "The Board of Trustees or the Superintendent may shorten the window for exigent "
                            "circumstances; who and why are recorded.",
                 "hearing": "The owner's written request for a hearing before the Board of Zoning Appeals, received "
                            "by the office: within the window, no test by the Department and no test fee follow.",
                 "cure": "The owner complied with the notice (or paid the fee demanded): a fine stops the day before, "
                         "and nothing more is charged for it."}[step]
        return self.run_form(request, form, done_url=page, obj=notice, facts=facts, intro=intro,
                             title=f"{label}: notice {notice.pk}")

    def pdf_view(self, request, pk):
        notice = self._notice(request, pk)
        if not notice.pdf:
            if self.installed_rules() is None:
                return self.no_rules_redirect(request)
            notice_pdf_store(notice_id=notice.pk)
            notice.refresh_from_db()
        return FileResponse(notice.pdf.open("rb"), content_type="application/pdf",
                            filename=f"backflow-{notice.kind}-{notice.pk}.pdf")

    def fine_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        may_charge = request.user.has_perm("backflow.charge_compliancenotice")
        if request.method == "POST":
            self.need(request, "backflow.charge_compliancenotice")
            form = FineForm(request.POST)
            if form.is_valid():
                message = form.run(actor=request.user)
                if message is not None:
                    self.message_user(request, message, messages.SUCCESS)
                    return HttpResponseRedirect(admin_url(
                        "backflow_compliancenotice_fine", account_no=form.cleaned_data["account_no"].strip(),
                        as_of=form.cleaned_data["as_of"].isoformat()))
        else:
            form = FineForm(request.GET if "account_no" in request.GET else None, initial={"as_of": today()})
        account, lines, charges, uncharged = None, [], [], []
        if form.is_bound and form.is_valid():
            try:
                account = account_get(account_no=form.cleaned_data["account_no"].strip())
            except ApplicationError as exc:
                form.add_refusals(exc.errors)
            else:
                lines = fines.fine_lines(account=account, as_of=form.cleaned_data["as_of"])
                uncharged = fines.fine_lines(account=account, as_of=form.cleaned_data["as_of"], uncharged_only=True)
                charges = (NoticeCharge.objects.filter(notice__account=account)
                           .select_related("notice", "charge", "charge__bill").order_by("notice_id", "last_day"))
        shown = [{"notice": line.notice, "days": line.days, "per_day": fmt_dollars(line.per_day),
                  "inches": f"{line.inches.normalize():f}" if line.inches is not None else "—",
                  "amount": fmt_dollars(line.amount), "computation": line.computation, "citation": line.citation}
                 for line in lines]
        return TemplateResponse(request, "admin/backflow/fine.html", self.page_context(
            request, title="Fine accrued", form=form, account=account, lines=shown, policy=policy,
            charges=[(c, fmt_dollars(c.charge.amount.amount)) for c in charges], may_charge=may_charge,
            total=fmt_dollars(sum((line.amount for line in lines), ZERO)),
            uncharged=fmt_dollars(sum((line.amount for line in uncharged), ZERO)) if uncharged else "",
            proposed=f"{sum((line.amount for line in uncharged), ZERO):.2f}",
            as_of=form.cleaned_data["as_of"] if account else None),
            status=400 if request.method == "POST" and form.errors else 200)

    def _act_permissions(self, policy: BackflowPolicy) -> list[str]:
        return ["backflow.change_compliancenotice",
                "termination.add_interruption" if policy.emergency_kind else "termination.add_terminationcase"]

    def noncompliance_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        policy = self.installed_rules()
        if policy is None:
            return self.no_rules_redirect(request)
        may_act = request.user.has_perms(self._act_permissions(policy))
        as_of = parse_day(request.POST.get("as_of") or request.GET.get("as_of")) or today()
        try:
            refuse_future(as_of, field="as_of", doing="listed")
        except ApplicationError as exc:
            self.message_user(request, exc.errors[0].message, messages.ERROR)
            as_of = today()
        page = admin_url("backflow_compliancenotice_noncompliance", as_of=as_of.isoformat())
        if request.method == "POST":
            if not may_act:
                raise PermissionDenied
            self._act(request, request.POST.get("account_no", ""), as_of=as_of, policy=policy)
            return HttpResponseRedirect(page)
        rows = svc.noncompliance(as_of=as_of)
        return TemplateResponse(request, "admin/backflow/noncompliance.html", self.page_context(
            request, title=f"Noncompliance on {fmt_day(as_of)}", as_of=as_of, may_act=may_act, policy=policy,
            rows=[(row, _termination_link(policy, row.account.account_no)) for row in rows]))

    def _act(self, request, account_no: str, *, as_of: date, policy: BackflowPolicy) -> None:
        try:
            found = svc.noncompliance_act(account=account_get(account_no=account_no.strip()), as_of=as_of,
                                          actor=request.user)
        except ApplicationError as exc:
            self.message_user(request, f"{account_no}: nothing done: " + "; ".join(e.message for e in exc.errors),
                              messages.WARNING)
            return
        link = _termination_link(policy, found.account.account_no)
        what = ("the health hazard is logged as an emergency interruption" if policy.emergency_kind
                else "a termination case is opened on violation grounds")
        if link:
            self.message_user(request, format_html('Account {}: {} ({}). <a href="{}">See the {}</a>.',
                                                   found.account.account_no, what, found.section, link,
                                                   "interruption" if policy.emergency_kind else "case"),
                              messages.SUCCESS)
        else:
            self.message_user(request, f"Account {found.account.account_no}: {what} ({found.section}).",
                              messages.SUCCESS)


def _termination_link(policy: BackflowPolicy, account_no: str) -> str:
    """The termination app's list of what noncompliance opened for the account (it is beside this app, so it
    is reached by its address, not imported)."""
    name = "termination_interruption_changelist" if policy.emergency_kind else "termination_terminationcase_changelist"
    try:
        return admin_url(name, q=account_no)
    except NoReverseMatch:
        return ""
