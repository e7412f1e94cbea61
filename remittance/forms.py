from decimal import Decimal

from django import forms
from django.utils.translation import gettext_lazy as _


class FindAccountForm(forms.Form):
    account_no = forms.CharField(label=_("Account number"), max_length=20,
                                 help_text=_("As printed on your bill, for example 1-00042."))
    proof = forms.CharField(label=_("Amount of your latest bill"), max_length=20,
                            help_text=_("The amount due on your latest bill, as printed on it (for example 98.60)."),
                            widget=forms.TextInput(attrs={"autocomplete": "off", "inputmode": "decimal"}))


class PayForm(forms.Form):
    amount = forms.DecimalField(label=_("Amount to pay"), min_value=Decimal("0.01"), max_digits=10, decimal_places=2,
                                help_text=_("In dollars and cents; at most what the account owes today."),
                                widget=forms.NumberInput(attrs={"step": "0.01", "inputmode": "decimal"}))
    email = forms.EmailField(label=_("Email for the receipt"), required=False,
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class AutopayForm(forms.Form):
    holder_name = forms.CharField(label=_("Name on the bank account"), max_length=100,
                                  widget=forms.TextInput(attrs={"autocomplete": "name"}))
    routing_number = forms.CharField(label=_("Routing number"), max_length=9, min_length=9,
                                     help_text=_("The 9 digits at the bottom left of your checks."),
                                     widget=forms.TextInput(attrs={"inputmode": "numeric", "autocomplete": "off"}))
    account_number = forms.CharField(label=_("Account number"), max_length=17,
                                     help_text=_("The digits after the routing number on your checks."),
                                     widget=forms.PasswordInput(attrs={"inputmode": "numeric", "autocomplete": "off"}))
    account_number_again = forms.CharField(label=_("Account number again"), max_length=17,
                                           widget=forms.PasswordInput(attrs={"inputmode": "numeric",
                                                                             "autocomplete": "off"}))
    account_type = forms.ChoiceField(label=_("Kind of account"), choices=[("checking", _("Checking")),
                                                                       ("savings", _("Savings"))])
    email = forms.EmailField(label=_("Email for the notice before each debit"),
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))
    agree = forms.BooleanField(label=_("I authorize these debits, as the authorization above says"), required=True)

    def clean(self):
        data = super().clean()
        if data.get("account_number") and data.get("account_number") != data.get("account_number_again"):
            self.add_error("account_number_again", _("does not match the account number"))
        return data
