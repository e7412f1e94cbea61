"""The clerk's admin site as a whole: its header, and pages whose parts come from several apps.

An app never imports the floors above it, so the account page is put together here: accounts' own page,
with meters' part (installations, latest readings, the account import), billing's (balance, bills and
payments) and termination's (the account's cases), and the meter test page with billing's settlement. The
site header names the installed utility.
"""

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.functional import lazy

from accounts.admin import AccountAdmin as AccountsAccountAdmin
from accounts.alerts import alerts_on
from accounts.models import Account, AccountAlert
from accounts.roles import ROLE_PERMISSIONS, staff_add
from arrears.models import PaymentPlan
from arrears.services import plan_standing
from billing.admin import AccountBillingAdmin
from billing.admin import BillingRunAdmin as BillingBillingRunAdmin
from billing.admin import PaymentAdmin as BillingPaymentAdmin
from billing.models import Bill, BillingRun, Payment
from billing.services.meter_tests import meter_test_settle
from core.admin import CsvExportMixin, act_on_each, admin_page_register
from core.commands import today
from core.errors import ApplicationError
from core.money import fmt_amount, fmt_dollars
from core.site import site_url_problem
from meters.admin import AccountMetersAdmin, account_readings, readings_table
from meters.admin import MeterTestAdmin as MetersMeterTestAdmin
from meters.models import MeterTest
from ordinance.selectors import installed_utility
from portal.notify import bills_emailed_counts
from portal.tasks import bills_issued_notify_task
from remittance.autopay import autopay_active
from termination.models import CLOSED, TerminationCase
from termination.selectors import case_pay

from .account_list import AccountListMixin
from .dashboard import dashboard_for
from .readiness import Finding, readiness_findings


def _utility_name() -> str:
    utility = installed_utility()
    return utility.name if utility else "waterbilling"


# Lazy, so the header follows the installed preset without touching the database at import time.
admin.site.site_header = lazy(_utility_name, str)()
admin.site.site_title = lazy(_utility_name, str)()
admin.site.index_title = lazy(lambda: f"{_utility_name()}: billing office", str)()

_site_each_context = admin.site.each_context


def _each_context(request) -> dict:
    """The site's context with the utility's name read once a page, not each time a template prints it."""
    context = _site_each_context(request)
    name = _utility_name()
    context.update(site_header=name, site_title=name)
    return context


admin.site.each_context = _each_context

_site_index = admin.site.index


def _index_with_dashboard(request, extra_context=None):
    """The admin home opens on today's work (``waterbilling.dashboard``) above the pages and the apps."""
    return _site_index(request, {**(extra_context or {}),
                                 "dashboard": dashboard_for(user=request.user, as_of=today())})


# The site's URLs are read after this module runs (the admin's autodiscovery), so its index is this one.
admin.site.index = _index_with_dashboard


GLANCE_READINGS = 3
ACCOUNT_LIST_ROWS = 100  # work orders and notices on the inquiry's tabs, newest first
CLOSED_CASES = CLOSED


class AccountAdmin(AccountListMixin, CsvExportMixin, AccountMetersAdmin, AccountBillingAdmin, AccountsAccountAdmin):
    """The account inquiry: accounts' summary and actions with billing's and meters' parts at the top, then tabs
    for the bills, the ledger, the readings, the notes, the work orders, the notices sent, the cases and plans,
    and the account's own fields."""

    change_form_template = "admin/accounts/account/account_page.html"
    change_list_template = "admin/accounts/account/change_list.html"  # the import's, with the recently opened

    def account_glance(self, request, account):
        """The top of the page also shows the meters installed now with their latest readings, and an open
        termination case."""
        context = super().account_glance(request, account)
        installed = [i for i in account.installations.select_related("meter").order_by("-installed_on")
                     if i.removed_on is None]
        context["glance_meters"] = [
            {"serial": i.meter.serial, "size": i.meter.size, "unit": i.meter.get_unit_display(),
             "installed_on": i.installed_on} for i in installed]
        readings = list(account_readings(account))
        context["autopay"] = autopay_active(account)
        context["glance_readings"] = [
            {"read_on": r.read_on, "serial": r.meter.serial, "value": f"{r.value:,} {r.meter.unit}",
             "type": r.get_read_type_display()} for r in readings[:GLANCE_READINGS]]
        context["readings_table"] = readings_table(readings)
        cases = list(account.termination_cases.order_by("-opened_on", "-id"))
        plans = list(account.payment_plans.order_by("-started_on", "-id").prefetch_related("installments"))
        context["account_cases"] = [
            {"number": case.number, "url": reverse("admin:termination_terminationcase_change", args=[case.pk]),
             "grounds": case.get_grounds_display(), "section": case.section,
             "amount": fmt_dollars(case.amount_delinquent), "status": case.get_status_display(),
             "opened_on": case.opened_on, "hearing_on": case.hearing_on, "closed_on": case.closed_on,
             "open": case.status not in CLOSED_CASES,
             "pay": case_pay(case, as_of=today()) if case.status not in CLOSED_CASES else None}
            for case in cases]
        context["open_cases"] = [case for case in context["account_cases"] if case["open"]]
        context["account_plans"] = [
            {"number": plan.number, "url": reverse("admin:arrears_paymentplan_change", args=[plan.pk]),
             "started_on": plan.started_on, "total": fmt_dollars(plan.total), "status": plan.get_status_display(),
             "note": plan.status_note} for plan in plans]
        plan = next((plan for plan in plans if plan.status == PaymentPlan.Status.ACTIVE), None)
        context["plan"] = plan and {"number": plan.number, "good": plan_standing(plan, as_of=today()).good,
                                    "url": reverse("admin:arrears_paymentplan_change", args=[plan.pk])}
        context["plan_add_url"] = f'{reverse("admin:arrears_paymentplan_add")}?account={account.account_no}'
        context["account_alerts"] = [
            {"words": alert.words, "holds": alert.kind in AccountAlert.HOLDS_SHUTOFF,
             "url": reverse("admin:accounts_accountalert_change", args=[alert.pk])}
            for alert in alerts_on([account.pk], on=today()).get(account.pk, [])]
        context["field_orders"] = [
            {"number": order.number, "url": reverse("admin:fieldwork_fieldorder_change", args=[order.pk]),
             "kind": order.get_kind_display(), "status": order.get_status_display(), "reason": order.reason,
             "scheduled_on": order.scheduled_on, "done_on": order.done_on, "result": order.result}
            for order in account.field_orders.order_by("-scheduled_on", "-id")[:ACCOUNT_LIST_ROWS]]
        context["account_notices"] = [
            {"url": reverse("admin:notices_customernotice_change", args=[notice.pk]), "subject": notice.subject,
             "kind": notice.get_kind_display(), "channel": notice.get_channel_display(), "to": notice.sent_to,
             "created_at": notice.created_at, "sent_at": notice.sent_at, "error": notice.error,
             "printed_on": notice.printed_on, "state": notice.state, "withdrawn": bool(notice.withdrawn_at),
             **({"resend_url": reverse("admin:notices_customernotice_send_again", args=[notice.pk]),
                 "paper_url": reverse("admin:notices_customernotice_on_paper", args=[notice.pk])}
                if notice.error and not (notice.sent_at or notice.withdrawn_at or notice.channel == "paper")
                and request.user.has_perm("notices.change_customernotice") else {})}
            for notice in account.notices.order_by("-created_at", "-id")[:ACCOUNT_LIST_ROWS]]
        user, number = request.user, account.account_no
        context["office_actions"] = [(label, f"{reverse(url)}?account={number}") for label, url, allowed in (
            ("Add an alert", "admin:accounts_accountalert_add", user.has_perm("accounts.add_accountalert")),
            ("Refund the credit", "admin:office_refund_add", user.has_perm("office.add_refund")),
            ("Invoice a fee", "admin:office_invoice_add", user.has_perm("office.add_invoice")
             and account.status != Account.Status.CLOSED),
            ("Move the balance", "admin:office_transfer_add", user.has_perm("office.add_transfer")
             and account.status == Account.Status.CLOSED),
            ("Work order", "admin:fieldwork_fieldorder_add", user.has_perm("fieldwork.add_fieldorder")
             and account.status != Account.Status.CLOSED),
        ) if allowed]
        return context

    def get_fieldsets(self, request, obj=None):
        # The readings have a tab of their own; the account's fields are the account's.
        return [(name, options) for name, options in super().get_fieldsets(request, obj)
                if "recent_readings" not in options["fields"]]


admin.site.unregister(Account)
admin.site.register(Account, AccountAdmin)


class MeterTestAdmin(MetersMeterTestAdmin):
    """Meter tests, with billing's settlement: the preset's meter test fee charged for the next bill, or no
    fee and (where the preset says so) the overbilled water credited."""

    actions = ("settle",)

    def has_settle_permission(self, request):
        return request.user.has_perm("meters.change_metertest") and request.user.has_perm("billing.add_pendingcharge")

    @admin.action(description="Settle the selected tests: charge the fee, or credit the overbilled water",
                  permissions=["settle"])
    def settle(self, request, queryset):
        def settle(test: MeterTest) -> str:
            return f"{test.meter}: {meter_test_settle(test=test, as_of=today(), actor=request.user).words}"

        act_on_each(self, request, queryset.select_related("meter"), settle,
                    refused=lambda test, exc: f"{test.meter}: not settled: {exc}")


admin.site.unregister(MeterTest)
admin.site.register(MeterTest, MeterTestAdmin)


class BillingRunAdmin(BillingBillingRunAdmin):
    """The run's page, with the portal's part: its paperless e-mails, counted and sent from here (at once after
    the run unless the office has them wait for the clerk, ``Utility.bill_emails_wait``)."""

    change_form_template = "admin/billing/billingrun/run_page.html"

    def get_urls(self):
        return [path("<int:run_id>/emails/", self.admin_site.admin_view(self.emails_view),
                     name="billing_billingrun_emails"), *super().get_urls()]

    def run_page_context(self, object_id) -> dict:
        context = super().run_page_context(object_id)
        if context:
            ids = list(Bill.objects.filter(run_id=object_id).values_list("id", flat=True))
            to_email, emailed, sent = bills_emailed_counts(ids)
            context["run_emails"] = {"to_email": to_email, "emailed": emailed, "waiting": to_email - emailed,
                                     "sent": sent, "url": reverse("admin:billing_billingrun_emails",
                                                                  args=[object_id]),
                                     "wait": bool(getattr(installed_utility(), "bill_emails_wait", False))}
        return context

    def emails_view(self, request, run_id):
        """POST: e-mail the run's paperless bills not yet e-mailed (each bill once to each address)."""
        if request.method != "POST" or not request.user.has_perm("billing.add_billingrun"):
            raise PermissionDenied
        run = get_object_or_404(BillingRun, pk=run_id)
        if run.status != BillingRun.Status.DONE:
            messages.error(request, f"The run is {run.get_status_display().lower()}; its e-mails go once it is done.")
        else:
            ids = list(Bill.objects.filter(run=run).exclude(status=Bill.Status.VOID).values_list("id", flat=True))
            result = bills_issued_notify_task.delay(ids)
            if result.ready():  # run in the request (no broker): say what went
                messages.success(request, f"{result.get()} e-mail(s) sent.")
            else:
                messages.success(request, "The e-mails are being sent by a worker; the counts below follow.")
        return HttpResponseRedirect(reverse("admin:billing_billingrun_change", args=[run_id]) + "#mail")


admin.site.unregister(BillingRun)
admin.site.register(BillingRun, BillingRunAdmin)


class PaymentAdmin(BillingPaymentAdmin):
    """The counter, with termination's part: on an account with an open case for nonpayment, the amount that stops
    the shut-off, or once service is off the amount that restores it, named as the portal and the case page name
    it (``termination.selectors.case_pay``)."""

    def counter_stop(self, account_no: str, *, as_of) -> dict | None:
        case = (TerminationCase.objects.filter(account__account_no=account_no, grounds="nonpayment")
                .exclude(status__in=CLOSED_CASES).order_by("-opened_on", "-id").first())
        if case is None:
            return None
        pay = case_pay(case, as_of=as_of)
        return {"case": case.number, "amount": fmt_amount(pay.amount), "amount_text": fmt_dollars(pay.amount),
                "words": pay.words, "detail": pay.detail, "restores": pay.restores} if pay and pay.amount > 0 else None


admin.site.unregister(Payment)
admin.site.register(Payment, PaymentAdmin)


# --- go-live readiness ---------------------------------------------------------------------------------------------

READINESS_PERMISSION = "ordinance.change_utility"  # the Supervisor's: who settles the office's settings


def readiness_view(request):
    if not request.user.has_perm(READINESS_PERMISSION):
        raise PermissionDenied
    findings = readiness_findings()
    if not settings.DEBUG and (problem := site_url_problem(request)):
        findings.append(Finding("Site", problem, "set SITE_URL to the address the office and the customers reach "
                                                 "the site by (docs/operations.md)"))
    return TemplateResponse(request, "admin/waterbilling/readiness.html", {
        **admin.site.each_context(request), "title": "Go-live readiness", "findings": findings})


admin_page_register(admin.site, "readiness/", readiness_view, "readiness")


class StaffAddForm(forms.Form):
    email = forms.EmailField(label="E-mail", help_text="Their login, and where the office's mail to them goes.")
    name = forms.CharField(label="Name", required=False, max_length=150)
    role = forms.ChoiceField(label="Role", choices=[(role, role) for role in ROLE_PERMISSIONS],
                             help_text="What they do: docs/roles.md has each role's table.")


def staff_add_view(request):
    """The superuser adds a member of staff in one step (``accounts.roles.staff_add``, as ``manage.py staff_add``):
    the temporary password is shown once, to hand over."""
    if not request.user.has_perm("auth.add_user"):
        raise PermissionDenied
    form = StaffAddForm(request.POST or None)
    context = {**admin.site.each_context(request), "title": "Add a member of staff", "form": form,
               "intro": "A login named by their e-mail, with staff status, in the group of their role, and a "
                        "temporary password they change under \"Change password\" once signed in."}
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            user, password = staff_add(email=data["email"], role=data["role"], name=data["name"])
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error(error.field if error.field in form.fields else None, error.message)
        else:
            context.update(form=None, intro="Give them the temporary password; it is not shown again.",
                           facts=[("Login", user.username), ("Role", data["role"]), ("Temporary password", password)])
    form.submit = "Add them"
    return TemplateResponse(request, "admin/service_form.html", {**context, "opts": get_user_model()._meta},
                            status=400 if form.errors else 200)


admin_page_register(admin.site, "staff/add/", staff_add_view, "staff_add")
