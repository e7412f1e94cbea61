"""The account page's billing part (composed in ``waterbilling/admin.py``): what the account owes and when,
its bills with their PDFs, the running-balance ledger with what each payment paid, and the clerk's
billing actions — a credit or debit memo by bill number, the statement as of a date (PDF), a payment at the
counter and a final bill.

Everything shown is read from the selectors (``account_amounts_due``, ``bill_balances``, ``account_ledger``);
every write goes through a service (``adjustment_create``).
"""

from datetime import date

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import path, reverse

from accounts.models import Account
from core.admin import ServiceForm
from core.clock import refuse_future
from core.commands import today
from core.csvimport import dollars_at_most
from core.dates import fmt_day
from core.errors import ApplicationError
from core.money import ADJUSTMENT_MAX, ZERO, fmt_dollars, fmt_gallons

from ..documents.statement import statement_pdf
from ..models import Adjustment, Bill
from ..penalties.plan import LATE_CHARGE_KINDS
from ..selectors import account_amounts_due, account_ledger_and_state, bill_balances, bill_status
from ..services.adjustments import adjustment_create
from ..services.bill_pdfs import bill_pdf_bytes, bill_pdf_render
from .final import ISSUE_PERMISSIONS

memo_amount = dollars_at_most(ADJUSTMENT_MAX, what="a memo")

CUSTOMER_TEXT_HELP = ("What the customer reads on the statement and in the portal. Leave empty for a plain "
                      "wording; never put internal notes here.")


def bill_by_number(number: str, *, account: Account | None = None) -> Bill:
    """A live bill by its number (of ``account`` when given); refusals name the field ``bill``."""
    number = (number or "").strip()
    if not number:
        raise ApplicationError("type the bill's number, as printed on the bill", field="bill")
    rows = Bill.objects.filter(number=number)
    if account is not None:
        rows = rows.filter(account=account)
    bill = rows.first()
    if bill is None:
        where = f" on account {account.account_no}" if account is not None else ""
        raise ApplicationError(f"no bill numbered '{number}'{where}", field="bill")
    if bill.status == Bill.Status.VOID:
        raise ApplicationError(f"bill {bill.number} is void; correct the bill that replaced it", field="bill")
    return bill


class BillNumberField(forms.CharField):
    """A bill typed by its number; ``clean`` gives the live bill."""

    def __init__(self, *, account: Account | None = None, **kwargs):
        self.account = account
        kwargs.setdefault("label", "Bill number")
        kwargs.setdefault("max_length", 40)
        kwargs.setdefault("help_text", "As printed on the bill (e.g. 202602-1-00001).")
        super().__init__(**kwargs)

    def clean(self, value):
        try:
            return bill_by_number(super().clean(value), account=self.account)
        except ApplicationError as exc:
            raise forms.ValidationError(exc.errors[0].message) from None


class MemoForm(ServiceForm):
    """A credit or debit memo on one of the account's bills, typed by its number."""

    kind = forms.ChoiceField(label="Kind", choices=Adjustment.Kind.choices)
    amount = forms.CharField(label="Amount ($)", max_length=40,
                             help_text=f"At most {fmt_dollars(ADJUSTMENT_MAX)}; a bill wrong by more is voided and "
                                       "billed again.")
    reason = forms.CharField(label="Internal note", widget=forms.Textarea(attrs={"rows": 2}),
                             help_text="Why; kept for staff, never shown to the customer.")
    description = forms.CharField(label="What the customer reads", required=False, max_length=200,
                                  help_text=CUSTOMER_TEXT_HELP)
    submit = "Post the memo"

    def __init__(self, *args, account: Account, **kwargs):
        super().__init__(*args, **kwargs)
        self.account = account
        self.fields = {"bill": BillNumberField(account=account), **self.fields}

    def clean_amount(self):
        try:
            return memo_amount(self.cleaned_data["amount"])
        except ValueError as exc:
            raise forms.ValidationError(str(exc)) from None

    def perform(self, *, actor) -> str:
        data = self.cleaned_data
        memo = adjustment_create(bill=data["bill"], kind=data["kind"], amount=data["amount"], reason=data["reason"],
                                 description=data["description"], as_of=today(), actor=actor)
        return (f"{memo.get_kind_display()} of {fmt_dollars(memo.amount.amount)} posted on bill {data['bill'].number} "
                f"of account {self.account.account_no}.")


def _as_of(request) -> date:
    """The ``as_of`` of the query string (today when absent); refusals name the field."""
    text = request.GET.get("as_of", "").strip()
    if not text:
        return today()
    try:
        day = date.fromisoformat(text)
    except ValueError:
        raise ApplicationError(f"'{text}' is not a date (YYYY-MM-DD)", field="as_of") from None
    refuse_future(day, field="as_of", doing="stated")
    return day


def bill_pdf_view(request, pk):
    """A bill's PDF as issued: the stored file (rendered and stored when there is none yet); ``?reprint=1``
    renders it again from the issued bill, which gives the same page."""
    if not request.user.has_perm("billing.view_bill"):
        raise PermissionDenied
    bill = get_object_or_404(Bill, pk=pk)
    content = bill_pdf_render(bill=bill) if request.GET.get("reprint") else bill_pdf_bytes(bill=bill)
    response = HttpResponse(content, content_type="application/pdf")
    response["Content-Disposition"] = f'inline; filename="bill-{bill.number}.pdf"'
    return response


def _balance_words(balance) -> dict:
    """The balance as the office says it: "Balance $186.13", or a credit as "Credit $7.00", never a negative."""
    if balance < 0:
        return {"balance_label": "Credit", "balance": fmt_dollars(-balance)}
    return {"balance_label": "Balance", "balance": fmt_dollars(balance)}


def _ledger_line(row) -> dict:
    """A ledger row as the page prints it."""
    return {"on": row.on, "kind": row.kind, "label": row.label, "detail": row.detail, "bill_id": row.bill_id,
            "charge": fmt_dollars(row.amount) if row.amount > 0 else "",
            "credit": fmt_dollars(row.amount) if row.amount < 0 else "",
            "balance": fmt_dollars(row.balance), "reversed_on": row.reversed_on,
            "paid": [{"amount": fmt_dollars(part.amount), "what": part.what, "bill_id": part.bill_id,
                      "category": part.category_words, "applied_on": part.applied_on} for part in row.paid],
            "waiting": fmt_dollars(row.waiting) if row.waiting else "",
            "late_charge_id": row.entry_id if row.kind in LATE_CHARGE_KINDS and row.amount > 0 else None}


def account_billing_context(*, request, account: Account, as_of: date) -> dict:
    """Billing's part of the account page, as of a day, formatted for the page."""
    rows, state = account_ledger_and_state(account=account, as_of=as_of)  # replayed once for every figure
    account_bills = list(Bill.objects.filter(account=account).order_by("-bill_date", "-id").only(
        "id", "number", "bill_date", "due_date", "period_start", "period_end", "gallons", "total",
        "total_currency", "status", "final", "estimated"))
    live_due_dates = {bill.id: bill.due_date for bill in account_bills if bill.status != Bill.Status.VOID}
    due = account_amounts_due(account_ids=[account.id], as_of=as_of, balances={account.id: state},
                              due_dates=live_due_dates)[account.id]
    balances = bill_balances(account=account, as_of=as_of, state=state)
    bills = []
    for bill in account_bills:
        balance = balances.get(bill.pk)
        bills.append({"pk": bill.pk, "number": bill.number, "final": bill.final, "estimated": bill.estimated,
                      "bill_date": bill.bill_date, "due_date": bill.due_date,
                      "period": f"{fmt_day(bill.period_start)} – {fmt_day(bill.period_end)}",
                      "gallons": fmt_gallons(bill.gallons), "total": fmt_dollars(bill.total.amount),
                      "unpaid": fmt_dollars(balance.unpaid_total if balance else ZERO),
                      "status": "void" if bill.status == Bill.Status.VOID else bill_status(balance),
                      "pdf_url": reverse("admin:billing_bill_pdf", args=[bill.pk])})
    user = request.user
    return {
        "billing_as_of": as_of, "amount_due": due, **_balance_words(rows[-1].balance if rows else ZERO),
        "past_due": fmt_dollars(due.past_due), "account_bills": bills,
        "ledger_rows": [_ledger_line(row) for row in rows],
        "billing_actions": [(label, url) for label, url, allowed in (
            ("Post a payment", f"{reverse('admin:billing_payment_counter')}?account={account.account_no}",
             user.has_perm("billing.add_payment")),
            ("Credit/debit memo", reverse("admin:billing_account_memo", args=[account.pk]),
             user.has_perm("billing.add_adjustment")),
            ("Statement PDF", reverse("admin:accounts_account_statement_pdf", args=[account.pk]),
             user.has_perm("billing.view_bill")),
            ("Start a final bill", reverse("admin:billing_bill_final", args=[account.pk]),
             user.has_perms(ISSUE_PERMISSIONS) and account.status != Account.Status.CLOSED),
        ) if allowed],
    }


class AccountBillingAdmin:
    """The account page's billing part: balance, past due and next due date at the top, the bills with their
    PDFs, the ledger with the running balance and what each payment paid, and the billing actions
    (templates that extend the account's own)."""

    change_form_template = "admin/billing/account/change_form.html"

    def get_urls(self):
        return [path("<int:pk>/memo/", self.admin_site.admin_view(self.memo_view), name="billing_account_memo"),
                path("<int:pk>/statement.pdf", self.admin_site.admin_view(self.statement_pdf_view),
                     name="accounts_account_statement_pdf"),
                *super().get_urls()]

    def account_glance(self, request, account: Account) -> dict:
        context = super().account_glance(request, account)
        if request.user.has_perm("billing.view_bill"):
            context.update(account_billing_context(request=request, account=account, as_of=today()))
        return context

    def memo_view(self, request, pk):
        if not request.user.has_perm("billing.add_adjustment"):
            raise PermissionDenied
        account = get_object_or_404(Account, pk=pk)
        form = MemoForm(request.POST or None, account=account, initial={"kind": Adjustment.Kind.CREDIT})
        if request.method == "POST" and form.is_valid():
            done = form.run(actor=request.user)
            if done:
                self.message_user(request, done, messages.SUCCESS)
                return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        bills = (Bill.objects.filter(account=account).exclude(status=Bill.Status.VOID)
                 .order_by("-bill_date", "-id")[:12])
        context = {**self.admin_site.each_context(request), "opts": self.model._meta, "form": form,
                   "account": account, "bills": bills,
                   "title": f"Credit or debit memo on a bill of account {account.account_no}"}
        return TemplateResponse(request, "admin/billing/account/memo.html", context)

    def statement_pdf_view(self, request, pk):
        if not request.user.has_perm("billing.view_bill"):
            raise PermissionDenied
        account = get_object_or_404(Account.objects.select_related("owner", "premises"), pk=pk)
        try:
            as_of = _as_of(request)
        except ApplicationError as exc:
            self.message_user(request, "No statement: " + "; ".join(str(e) for e in exc.errors), messages.ERROR)
            return HttpResponseRedirect(reverse("admin:accounts_account_change", args=[account.pk]))
        response = HttpResponse(statement_pdf(account=account, as_of=as_of), content_type="application/pdf")
        response["Content-Disposition"] = f'inline; filename="statement-{account.account_no}-{as_of}.pdf"'
        return response

