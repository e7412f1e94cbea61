from datetime import timedelta
from decimal import Decimal

from django import forms

from accounts.selectors import account_get
from core.admin import DATE_WIDGET, ServiceForm
from core.clock import today
from core.money import fmt_dollars

from .services import plan_create


def _next_month():
    return today() + timedelta(days=30)


class PlanForm(ServiceForm):
    """A payment plan entered by a clerk, made by ``plan_create`` (every refusal under the field it names)."""

    submit = "Make the plan"

    account_no = forms.CharField(label="Account number", max_length=20)
    total = forms.DecimalField(label="Amount the plan covers", max_digits=12, decimal_places=2,
                               help_text="At most what the account owes today.")
    down_payment = forms.DecimalField(label="Down payment", max_digits=12, decimal_places=2, initial=Decimal("0.00"))
    down_due_on = forms.DateField(label="Down payment due", widget=DATE_WIDGET, initial=today)
    installments = forms.IntegerField(label="Monthly installments", min_value=1, max_value=60, initial=6)
    first_due_on = forms.DateField(label="First installment due", widget=DATE_WIDGET, initial=_next_month)
    note = forms.CharField(label="Note", required=False, widget=forms.Textarea(attrs={"rows": 3}),
                           help_text="Internal: what was agreed and why.")

    def perform(self, *, actor) -> str:
        d = self.cleaned_data
        account = account_get(account_no=d["account_no"].strip())
        self.plan = plan_create(account=account, total=d["total"], down_payment=d["down_payment"],
                                down_due_on=d["down_due_on"], installments=d["installments"],
                                first_due_on=d["first_due_on"], as_of=today(), actor=actor, note=d["note"])
        return (f"Payment plan {self.plan.number} made for account {account.account_no} "
                f"({fmt_dollars(self.plan.total.amount)}): print its letter for the customer.")
