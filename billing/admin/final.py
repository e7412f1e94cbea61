"""Admin pages for a move-out or a sale: the final bill (previewed before it is issued), the closing letter, and
the move to a new account. Their URLs hang under the bills' admin (``BillAdmin.get_urls`` adds
``final_bill_urls``): ``billing_bill_final``, ``billing_bill_closing_letter`` and ``billing_account_move``.

Each view checks its permission, calls one service (``billing.services.final_bills``) or reads one selector
(``billing.documents.closing_letter``), and shows a refusal under the field it names.
"""

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from accounts.models import Account
from core.admin import LINE_WIDGET, TEXT_WIDGET, DayField, ServiceForm
from core.clock import today
from core.errors import ApplicationError
from core.money import fmt_dollars

from ..documents.bill import line_quantity_rate
from ..documents.closing_letter import closing_figures, closing_letter_pdf
from ..services.final_bills import account_move_to_new_customer, final_bill_issue, final_bill_preview, plan_words

# Issuing a bill is the clerk's right to bill (start a billing run); closing and opening accounts is theirs too.
ISSUE_PERMISSIONS = ("billing.add_billingrun", "accounts.change_account")
MOVE_PERMISSIONS = (*ISSUE_PERMISSIONS, "accounts.add_account")
LETTER_PERMISSIONS = ("billing.view_bill", "accounts.view_account")


class FinalBillForm(ServiceForm):
    read_on = DayField(label="Final reading on", doing="read")
    reading = forms.IntegerField(label="Final reading", min_value=0, help_text="The register, in the meter's unit.")
    close = forms.BooleanField(label="Close the account", required=False, initial=True,
                               help_text="Close the account on the reading's day and take its meter off it.")
    reading_checked = forms.BooleanField(
        label="The reading was checked", required=False,
        help_text="Needed when the preview warns that the use is far above the account's normal use.")
    aliases = {"value": "reading", "date": "read_on"}
    whole_fields = ("", "account", "meter", "accept_sample_rates")
    submit = "Issue final bill"

    def __init__(self, *args, account: Account, **kwargs):
        super().__init__(*args, **kwargs)
        self.account = account

    def preview(self):
        try:
            return final_bill_preview(account=self.account, read_on=self.cleaned_data["read_on"],
                                      reading=self.cleaned_data["reading"], as_of=today())
        except ApplicationError as exc:
            self.add_refusals(exc.errors)
            return None

    def perform(self, *, actor) -> str:
        plan = final_bill_preview(account=self.account, read_on=self.cleaned_data["read_on"],
                                  reading=self.cleaned_data["reading"], as_of=today())
        if plan.high_usage and not self.cleaned_data["reading_checked"]:
            raise ApplicationError(f"{plan.high_usage}: check the reading (a misread register or a leak), then tick "
                                   "that it was checked", field="reading_checked")
        self.bill = final_bill_issue(account=self.account, read_on=self.cleaned_data["read_on"],
                                     reading=self.cleaned_data["reading"], as_of=today(), actor=actor,
                                     close=self.cleaned_data["close"])
        closed = " The account is closed." if self.cleaned_data["close"] else ""
        return f"Final bill {self.bill.number} issued: {fmt_dollars(self.bill.total.amount)}.{closed}"


class MoveForm(ServiceForm):
    on = DayField(label="Move / sale on", doing="recorded")
    final_reading = forms.IntegerField(label="Final reading", min_value=0)
    new_account_no = forms.CharField(label="New account number", max_length=20, widget=LINE_WIDGET)
    owner_name = forms.CharField(label="New owner", max_length=200, widget=LINE_WIDGET)
    owner_address = forms.CharField(label="New owner's mailing address", widget=TEXT_WIDGET)
    owner_email = forms.EmailField(label="New owner's email", required=False)
    occupant_name = forms.CharField(label="New occupant (if not the owner)", max_length=200, required=False,
                                    widget=LINE_WIDGET)
    aliases = {"read_on": "on", "reading": "final_reading", "value": "final_reading", "date": "on"}
    whole_fields = ("", "account", "meter", "accept_sample_rates")
    submit = "Issue the final bill and open the new account"

    def __init__(self, *args, account: Account, **kwargs):
        super().__init__(*args, **kwargs)
        self.account = account

    def perform(self, *, actor) -> str:
        data = self.cleaned_data
        self.move = account_move_to_new_customer(
            account=self.account, on=data["on"], owner_name=data["owner_name"], owner_address=data["owner_address"],
            owner_email=data["owner_email"], occupant_name=data["occupant_name"],
            new_account_no=data["new_account_no"], final_reading=data["final_reading"], as_of=today(), actor=actor)
        move = self.move
        moved = (f" The unpaid {fmt_dollars(move.transferred)} moved to the new account."
                 if move.transferred else " The new account starts clean.")
        return (f"Final bill {move.final_bill.number} issued ({fmt_dollars(move.final_bill.total.amount)}); account "
                f"{move.old_account.account_no} closed; account {move.new_account.account_no} opened.{moved}")


def _require(request, permissions) -> None:
    if not request.user.has_perms(permissions):
        raise PermissionDenied


def _context(model_admin, request, account, **extra) -> dict:
    return {**model_admin.admin_site.each_context(request), "opts": model_admin.model._meta, "account": account,
            **extra}


def final_bill_view(model_admin, request, account_pk):
    _require(request, ISSUE_PERMISSIONS)
    account = get_object_or_404(Account.objects.select_related("owner", "premises"), pk=account_pk)
    form = FinalBillForm(request.POST or None, account=account)
    plan = lines = None
    if request.method == "POST" and form.is_valid():
        if "_issue" in request.POST:
            message = form.run(actor=request.user)
            if message:
                model_admin.message_user(request, message, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:billing_bill_change", args=[form.bill.pk]))
        else:
            plan = form.preview()
            if plan is not None:
                lines = [(line.description, line.citation,
                          line_quantity_rate(kind=line.kind, quantity=line.quantity, rate=line.rate),
                          fmt_dollars(line.amount)) for line in plan.lines]
    return TemplateResponse(request, "admin/billing/final/final_bill.html", _context(
        model_admin, request, account, form=form, plan=plan, lines=lines, summary=plan_words(plan) if plan else "",
        total=fmt_dollars(plan.bill.total) if plan else "", title=f"Final bill for account {account.account_no}"))


class ClosingLetterForm(forms.Form):
    closing_on = forms.DateField(label="Closing date", widget=forms.DateInput(format="%Y-%m-%d",
                                                                            attrs={"type": "date"}))


def closing_letter_view(model_admin, request, account_pk):
    _require(request, LETTER_PERMISSIONS)
    account = get_object_or_404(Account.objects.select_related("owner", "premises"), pk=account_pk)
    form = ClosingLetterForm(request.GET or None)
    figures = None
    if form.is_bound and form.is_valid():
        closing_on = form.cleaned_data["closing_on"]
        try:
            if request.GET.get("view") == "figures":
                figures = closing_figures(account=account, closing_on=closing_on, as_of=today())
            else:
                pdf = closing_letter_pdf(account=account, closing_on=closing_on, as_of=today())
                response = HttpResponse(pdf, content_type="application/pdf")
                response["Content-Disposition"] = (f'inline; filename="closing-letter-{account.account_no}-'
                                                   f'{closing_on}.pdf"')
                return response
        except ApplicationError as exc:
            for error in exc.errors:
                form.add_error("closing_on", error.message)
    return TemplateResponse(request, "admin/billing/final/closing_letter.html", _context(
        model_admin, request, account, form=form, figures=figures,
        title=f"Closing letter for account {account.account_no}"))


def account_move_view(model_admin, request, account_pk):
    _require(request, MOVE_PERMISSIONS)
    account = get_object_or_404(Account.objects.select_related("owner", "premises"), pk=account_pk)
    form = MoveForm(request.POST or None, account=account)
    if request.method == "POST" and form.is_valid():
        message = form.run(actor=request.user)
        if message:
            model_admin.message_user(request, message, messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[form.move.new_account.pk]))
    return TemplateResponse(request, "admin/billing/final/move.html", _context(
        model_admin, request, account, form=form, title=f"Move-out and move-in at account {account.account_no}"))


def final_bill_urls(model_admin) -> list:
    """The pages' URLs, for the bills' admin to put before its own."""
    def view(function):
        return model_admin.admin_site.admin_view(lambda request, account_pk: function(model_admin, request, account_pk))

    return [path("final/<int:account_pk>/", view(final_bill_view), name="billing_bill_final"),
            path("closing-letter/<int:account_pk>/", view(closing_letter_view), name="billing_bill_closing_letter"),
            path("move/<int:account_pk>/", view(account_move_view), name="billing_account_move")]
