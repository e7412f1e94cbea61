"""Fees and fines charged between bills, and refundable deposits: received, held and refunded.
"""

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.shortcuts import get_object_or_404
from django.urls import path

from accounts.models import Account
from accounts.selectors import account_get
from core.admin import (
    CsvExportMixin,
    ReadOnlyAdmin,
    ServiceForm,
    ServiceFormMixin,
    ServicePagesAdmin,
    act_on_each,
    action_page,
)
from core.commands import today
from core.money import fmt_dollars

from ..fees import fee_rule, fees_in_force
from ..models import (
    Bill,
    Deposit,
    PendingCharge,
)
from ..services.charges import charge_cancel, charge_create, charge_figures_parse
from ..services.deposits import deposit_receive, deposit_refund

# --- fees and fines charged between bills -------------------------------------------------------------

class ChargeForm(ServiceForm):
    submit = "Charge the fee"

    code = forms.ChoiceField(label="Fee", widget=forms.Select(attrs={"style": "max-width: 100%"}))
    amount = forms.CharField(label="Amount ($)", required=False, max_length=40,
                             help_text="Only for a fee whose amount the ordinance leaves open.")
    base = forms.CharField(label="Base ($)", required=False, max_length=40,
                           help_text="Only for a fee computed from a cost (e.g. construction cost).")
    size = forms.CharField(label="Size (inches)", required=False, max_length=20,
                           help_text="Only for a fee by supply or meter size.")
    note = forms.CharField(label="Internal note", required=False, widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="Kept for staff; the customer reads the fee's description and citation.")
    charged_on = forms.DateField(label="Charged on", widget=forms.DateInput(attrs={"type": "date"}),
                                 help_text="It goes on the account's first bill dated on or after this day.")

    def __init__(self, *args, account, fees, **kwargs):
        super().__init__(*args, **kwargs)
        self.account = account
        self.fields["code"].choices = [("", "—")] + [
            (fee.code, f"{fee.description} ({fee.citation}): {fee_rule(fee).terms()}") for fee in fees]

    def perform(self, *, actor) -> str:
        data = self.cleaned_data
        amount, base = charge_figures_parse(amount=data["amount"], base=data["base"])
        charge = charge_create(account=self.account, code=data["code"], as_of=data["charged_on"], actor=actor,
                               amount=amount, base=base, size=data["size"], note=data["note"])
        return (f"Charged {fmt_dollars(charge.amount.amount)} to account {self.account.account_no}: "
                f"{charge.description} ({charge.citation}). It goes on the account's next bill dated on or after "
                f"{charge.earliest_bill_on}.")


class ChargeStatusFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "status"

    def lookups(self, request, model_admin):
        return (("pending", "Pending: waiting for the next bill"), ("billed", "Billed"), ("cancelled", "Cancelled"))

    def queryset(self, request, queryset):
        return {"pending": queryset.filter(bill__isnull=True, cancelled_at__isnull=True),
                "billed": queryset.filter(bill__isnull=False),
                "cancelled": queryset.filter(cancelled_at__isnull=False)}.get(self.value(), queryset)


class CancelChargesForm(forms.Form):
    reason = forms.CharField(label="Why", widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Kept with the charge for staff.")


@admin.register(PendingCharge)
class PendingChargeAdmin(ServiceFormMixin, CsvExportMixin, ReadOnlyAdmin):
    """Fees and fines waiting for the account's next bill, and those bills carried. A charge is made from
    the account's page ("Charge a fee"), and cancelled here, with a reason, while it still waits."""

    list_display = ("charged_on", "account", "description", "citation", "amount", "status_shown", "bill",
                    "earliest_bill_on", "created_by")
    list_filter = (ChargeStatusFilter, "kind", "code")
    search_fields = ("account__account_no", "description", "bill__number")
    list_select_related = ("account", "bill", "created_by")
    date_hierarchy = "charged_on"
    fields = ("account", "code", "kind", "description", "citation", "amount", "quantity", "rate", "base", "size",
              "note", "charged_on", "earliest_bill_on", "status_shown", "bill", "reissue_of", "created_by",
              "created_at", "cancelled_at", "cancelled_by", "cancel_reason")
    readonly_fields = fields
    actions = ("cancel",)

    def has_view_permission(self, request, obj=None):
        return request.user.has_perm("billing.view_pendingcharge")

    def has_cancel_permission(self, request):
        return request.user.has_perm("billing.change_pendingcharge")

    @admin.display(description="status")
    def status_shown(self, obj):
        if obj.status == "billed":
            return f"Billed on {obj.bill.number}" + (" (void: charged again)" if obj.bill.status == Bill.Status.VOID
                                                    else "")
        return {"pending": f"Pending: the first bill dated on or after {obj.earliest_bill_on}",
                "cancelled": f"Cancelled: {obj.cancel_reason}"}[obj.status]

    @admin.action(description="Cancel the selected pending charges", permissions=["cancel"])
    def cancel(self, request, queryset):
        form = CancelChargesForm(request.POST if "apply" in request.POST else None)
        if not form.is_valid():
            return action_page(self, request, "admin/billing/pendingcharge/cancel.html", form=form,
                               charges=queryset.select_related("account", "bill"), title="Cancel pending charges")
        def cancel(charge: PendingCharge) -> str:
            charge_cancel(charge=charge, reason=form.cleaned_data["reason"], actor=request.user)
            return ""  # one message for them all, below

        cancelled = act_on_each(self, request, queryset.select_related("account"), cancel,
                                refused=lambda charge, exc: f"{charge.account}: {charge.description}: {exc}")
        if cancelled:
            self.message_user(request, f"Cancelled {cancelled} charge(s); no bill will carry them.", messages.SUCCESS)
        return None

    def get_urls(self):
        return [path("charge/<int:account_pk>/", self.admin_site.admin_view(self.charge_view),
                     name="billing_pendingcharge_charge"), *super().get_urls()]

    def charge_view(self, request, account_pk):
        if not request.user.has_perm("billing.add_pendingcharge"):
            raise PermissionDenied
        account = get_object_or_404(Account.objects.select_related("owner"), pk=account_pk)
        form = ChargeForm(request.POST or None, account=account, fees=fees_in_force(on=today()),
                          initial={"charged_on": today()})
        waiting = account.pending_charges.filter(bill__isnull=True, cancelled_at__isnull=True).order_by("charged_on")
        facts = [("Account", f"{account.account_no}, {account.owner.name}")] + [
            (f"Waiting since {charge.charged_on}", f"{charge.description} ({charge.citation}): "
                                                   f"{fmt_dollars(charge.amount.amount)}") for charge in waiting]
        return self.run_form(
            request, form, done_url=self.object_url(account), obj=account, facts=facts,
            title=f"Charge a fee to account {account.account_no}",
            intro=f"The fee waits as a pending charge and goes on account {account.account_no}'s next bill as a line "
                  "with its citation. Give an amount, a base or a size only when the fee asks for it; the fee "
                  "schedule in force on the day charged sets the rest.")


# --- refundable deposits ---------------------------------------------------------------------------------

class DepositReceiveForm(ServiceForm):
    account_no = forms.CharField(label="Account number", max_length=20)
    received_on = forms.DateField(label="Received on", widget=forms.DateInput(attrs={"type": "date"}))
    reference = forms.CharField(label="Check or receipt number", max_length=80, required=False)
    submit = "Receive the deposit"

    def perform(self, *, actor) -> str:
        data = self.cleaned_data
        account = account_get(account_no=data["account_no"].strip())
        deposit = deposit_receive(account=account, received_on=data["received_on"], actor=actor,
                                  reference=data["reference"])
        return (f"Received {fmt_dollars(deposit.amount.amount)} from account {account.account_no}: "
                f"{deposit.description} ({deposit.citation}), held for the customer.")


class DepositRefundForm(forms.Form):
    refunded_on = forms.DateField(label="Refunded on", widget=forms.DateInput(attrs={"type": "date"}))
    note = forms.CharField(label="Discontinuance", widget=forms.Textarea(attrs={"rows": 2}),
                           help_text="How the service it secured was satisfactorily discontinued (kept for staff).")


class DepositHeldFilter(admin.SimpleListFilter):
    title = "status"
    parameter_name = "held"

    def lookups(self, request, model_admin):
        return (("yes", "Held"), ("no", "Refunded"))

    def queryset(self, request, queryset):
        return {"yes": queryset.filter(refunded_on__isnull=True),
                "no": queryset.filter(refunded_on__isnull=False)}.get(self.value(), queryset)


@admin.register(Deposit)
class DepositAdmin(ServicePagesAdmin):
    """Refundable deposits (a hydrant deposit, say): money held for the customer, never revenue and never part
    of what an account owes. Received here ("Receive a deposit"), refunded with the action."""

    form_class = DepositReceiveForm
    add_label = "Receive a deposit"
    intro = ("The preset's refundable deposit in force on the day is recorded for the account: held for the customer, "
             "never part of what the account owes, and refunded without interest when the service it secures is "
             "satisfactorily discontinued.")

    list_display = ("received_on", "account", "description", "citation", "amount", "reference", "refunded_on")
    list_filter = (DepositHeldFilter,)
    search_fields = ("account__account_no", "reference")
    list_select_related = ("account",)
    fields = ("account", "code", "description", "citation", "amount", "received_on", "reference", "received_by",
              "refunded_on", "refunded_by", "refund_note")
    readonly_fields = fields
    actions = ("refund",)

    def has_add_permission(self, request):
        return request.user.has_perm("billing.add_deposit")

    def has_refund_permission(self, request):
        return request.user.has_perm("billing.change_deposit")

    def add_title(self) -> str:
        return "Receive a refundable deposit"

    def add_initial(self, request) -> dict:
        return {"account_no": request.GET.get("account", ""), "received_on": today()}

    @admin.action(description="Refund the selected deposits", permissions=["refund"])
    def refund(self, request, queryset):
        form = DepositRefundForm(request.POST if "apply" in request.POST else None, initial={"refunded_on": today()})
        if not form.is_valid():
            return action_page(self, request, "admin/billing/deposit/refund.html", form=form,
                               deposits=queryset.select_related("account"), title="Refund deposits")

        def refund(deposit: Deposit) -> str:
            deposit_refund(deposit=deposit, refunded_on=form.cleaned_data["refunded_on"],
                           note=form.cleaned_data["note"], actor=request.user)
            return f"{deposit.account}: {fmt_dollars(deposit.amount.amount)} refunded without interest."

        act_on_each(self, request, queryset.select_related("account"), refund,
                    refused=lambda deposit, exc: f"{deposit.account}: not refunded: {exc}")
        return None


