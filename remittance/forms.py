from decimal import Decimal

from django import forms


class FindAccountForm(forms.Form):
    account_no = forms.CharField(label="Account number", max_length=20,
                                 help_text="As printed on your bill, for example 1-00042.")
    proof = forms.CharField(label="Amount due, or the ZIP code", max_length=20,
                            help_text="The amount due on your latest bill (for example 98.60), or the ZIP code of the "
                                      "address the bill is mailed to.",
                            widget=forms.TextInput(attrs={"autocomplete": "off", "inputmode": "decimal"}))


class PayForm(forms.Form):
    amount = forms.DecimalField(label="Amount to pay", min_value=Decimal("0.01"), max_digits=10, decimal_places=2,
                                help_text="In dollars and cents; at most what the account owes today.",
                                widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}))
    email = forms.EmailField(label="Email for the receipt", required=False,
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))
