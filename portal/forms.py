from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm
from django.utils.text import format_lazy
from django.utils.translation import gettext_lazy as _

from backflow.models import DeviceTest
from backflow.services.compliance import TEXT_MAX as REPAIRS_MAX
from core.dates import iso_date
from termination.services.events import TEXT_MAX


class SignUpForm(forms.Form):
    email = forms.EmailField(label=_("Email"), max_length=150,
                             help_text=_("We will email you a link to choose your password."),
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class ChoosePasswordForm(forms.Form):
    password1 = forms.CharField(label=_("Password"), strip=False,
                                help_text=_("At least 8 characters; not only numbers, and not a common password."),
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password2 = forms.CharField(label=_("Password again"), strip=False,
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password2") and data["password1"] != data["password2"]:
            self.add_error("password2", _("The two passwords differ."))
        return data


class SignInForm(AuthenticationForm):
    """Django's sign-in form; the ``username`` field (the one django-axes throttles) holds the email."""

    error_messages = {**AuthenticationForm.error_messages,
                      "invalid_login": _("That email and password do not match an account here. Check the email, "
                                         "and the password's capital letters."),
                      "inactive": _("This sign-in is turned off. Call the office to turn it on again.")}

    def __init__(self, request=None, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        self.fields["username"].label = _("Email")
        self.fields["username"].widget = forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})

    def clean_username(self):
        return self.cleaned_data["username"].strip().lower()


class PortalPasswordResetForm(PasswordResetForm):
    email = forms.EmailField(label=_("Email"), max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class LinkAccountForm(forms.Form):
    account_no = forms.CharField(label=_("Account number"), max_length=20,
                                 help_text=_("As printed on your bill, for example 1-00042."))
    access_code = forms.CharField(label=_("Access code"), max_length=20,
                                  help_text=_("The 8-character code printed on your bill."),
                                  widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}))


class PaperlessForm(forms.Form):
    paperless = forms.BooleanField(label=_("Email me when a bill is ready instead of mailing paper"), required=False)


class HearingRequestForm(forms.Form):
    """A written request for the hearing a termination notice names (the notice's § 45.32 warning)."""

    text = forms.CharField(
        label=_("Your written request"), max_length=TEXT_MAX, strip=True,
        help_text=format_lazy(_("Say that you ask for a hearing, and anything you want the hearing officer to know. "
                                "At most {count} characters."), count=TEXT_MAX),
        error_messages={"required": _("Write your request for a hearing before sending it.")},
        widget=forms.Textarea(attrs={"rows": 6}))


class DeviceTestForm(forms.Form):
    """A backflow test as a certified tester reports it online. Only the shape is checked here; the rules
    (a known device, a certification in force on the test day, no test in the future, readings that are
    numbers of psid) are the service's, whose refusals come back on the fields they name."""

    serial = forms.CharField(label=_("Device serial number"), max_length=60,
                             help_text=_("As stamped on the assembly."),
                             error_messages={"required": _("Give the serial number of the device you tested.")},
                             widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}))
    tested_on = forms.CharField(label=_("Date tested"), max_length=10,
                                error_messages={"required": _("Give the date you tested the device.")},
                                widget=forms.DateInput(attrs={"type": "date"}))
    result = forms.ChoiceField(label=_("Result"), choices=DeviceTest.Result.choices, widget=forms.RadioSelect,
                               error_messages={"required": _("Choose pass or fail.")})
    check_valve_1_psid = forms.CharField(label=_("Check valve 1 (psid)"), max_length=20, required=False,
                                         widget=forms.TextInput(attrs={"inputmode": "decimal"}))
    check_valve_2_psid = forms.CharField(label=_("Check valve 2 (psid)"), max_length=20, required=False,
                                         widget=forms.TextInput(attrs={"inputmode": "decimal"}))
    relief_valve_opening_psid = forms.CharField(label=_("Relief valve opened at (psid)"), max_length=20,
                                                required=False,
                                                widget=forms.TextInput(attrs={"inputmode": "decimal"}))
    repairs = forms.CharField(label=_("Repairs made"), max_length=REPAIRS_MAX, required=False,
                              help_text=_("Parts replaced or cleaned before the test passed; leave empty if none."),
                              widget=forms.Textarea(attrs={"rows": 4}))

    def __init__(self, *args, today=None, **kwargs):
        super().__init__(*args, **kwargs)
        if today is not None:
            self.fields["tested_on"].widget.attrs["max"] = today.isoformat()

    def clean_tested_on(self):
        try:
            return iso_date(self.cleaned_data["tested_on"].strip())
        except ValueError as exc:
            raise forms.ValidationError(str(exc)[:1].upper() + str(exc)[1:]) from None
