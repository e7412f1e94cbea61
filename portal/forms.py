from django import forms
from django.contrib.auth.forms import AuthenticationForm, PasswordResetForm

from termination.services.cases import TEXT_MAX


class SignUpForm(forms.Form):
    email = forms.EmailField(label="Email", max_length=150,
                             help_text="We will email you a link to choose your password.",
                             widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class ChoosePasswordForm(forms.Form):
    password1 = forms.CharField(label="Password", strip=False,
                                help_text="At least 8 characters; not only numbers, and not a common password.",
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))
    password2 = forms.CharField(label="Password again", strip=False,
                                widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}))

    def clean(self):
        data = super().clean()
        if data.get("password1") and data.get("password2") and data["password1"] != data["password2"]:
            self.add_error("password2", "The two passwords differ.")
        return data


class SignInForm(AuthenticationForm):
    """Django's sign-in form; the ``username`` field (the one django-axes throttles) holds the email."""

    def __init__(self, request=None, *args, **kwargs):
        super().__init__(request, *args, **kwargs)
        self.fields["username"].label = "Email"
        self.fields["username"].widget = forms.EmailInput(attrs={"autocomplete": "email", "autofocus": True})

    def clean_username(self):
        return self.cleaned_data["username"].strip().lower()


class PortalPasswordResetForm(PasswordResetForm):
    email = forms.EmailField(label="Email", max_length=254, widget=forms.EmailInput(attrs={"autocomplete": "email"}))


class LinkAccountForm(forms.Form):
    account_no = forms.CharField(label="Account number", max_length=20,
                                 help_text="As printed on your bill, for example 1-00042.")
    access_code = forms.CharField(label="Access code", max_length=20,
                                  help_text="The 8-character code printed on your bill.",
                                  widget=forms.TextInput(attrs={"autocomplete": "off", "autocapitalize": "characters"}))


class PaperlessForm(forms.Form):
    paperless = forms.BooleanField(label="Email me when a bill is ready instead of mailing paper", required=False)


class HearingRequestForm(forms.Form):
    """A written request for the hearing a termination notice names (the notice's § 45.32 warning)."""

    text = forms.CharField(
        label="Your written request", max_length=TEXT_MAX, strip=True,
        help_text="Say that you ask for a hearing, and anything you want the hearing officer to know. At most "
                  f"{TEXT_MAX:,} characters.",
        error_messages={"required": "Write your request for a hearing before sending it."},
        widget=forms.Textarea(attrs={"rows": 6}))
