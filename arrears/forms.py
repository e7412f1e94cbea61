from datetime import timedelta
from decimal import Decimal

from django import forms

from core.admin import DATE_WIDGET
from core.clock import today


def _next_month():
    return today() + timedelta(days=30)


class PlanForm(forms.Form):
    account_no = forms.CharField(label="Account number", max_length=20)
    total = forms.DecimalField(label="Amount the plan covers", max_digits=12, decimal_places=2,
                               help_text="At most what the account owes today.")
    down_payment = forms.DecimalField(label="Down payment", max_digits=12, decimal_places=2, initial=Decimal("0.00"))
    down_due_on = forms.DateField(label="Down payment due", widget=DATE_WIDGET, initial=today)
    installments = forms.IntegerField(label="Monthly installments", min_value=1, max_value=60, initial=6)
    first_due_on = forms.DateField(label="First installment due", widget=DATE_WIDGET, initial=_next_month)
    note = forms.CharField(label="Note", required=False, widget=forms.Textarea(attrs={"rows": 3}),
                           help_text="Internal: what was agreed and why.")
