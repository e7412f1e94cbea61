"""The account's notification page: how the customer hears from the office (e-mail, text message with consent,
paper as well), in which language, and which of the optional notices."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import redirect
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from accounts.services import account_language_set
from core.errors import ApplicationError
from notices.models import CustomerNotice
from notices.services import OPTIONAL_KINDS, preference_of
from notices.texts import consent_words, preferences_set, text_number_verify, verification_pending

from . import selectors

KIND_WORDS = {CustomerNotice.Kind.BILL_READY: gettext_lazy("A note when a new bill is ready (by text; by e-mail "
                                                            "when your bills come on paper)"),
              CustomerNotice.Kind.DUE_SOON: gettext_lazy("A reminder before a bill is due"),
              CustomerNotice.Kind.LATE_NOTICE: gettext_lazy("A late notice when a bill is past due"),
              CustomerNotice.Kind.INSTALLMENT_DUE: gettext_lazy("A reminder before a payment plan installment is "
                                                                "due"),
              CustomerNotice.Kind.USAGE_ALERT: gettext_lazy("A usage alert when a reading shows use far above your "
                                                            "usual (a leak?) or none at all")}
LANGUAGES = (("en", "English"), ("es", "Español"))


class PreferencesForm(forms.Form):
    by_email = forms.BooleanField(label=gettext_lazy("E-mail"), required=False)
    by_text = forms.BooleanField(label=gettext_lazy("Text message"), required=False)
    text_number = forms.CharField(label=gettext_lazy("Mobile number"), required=False, max_length=20,
                                  widget=forms.TextInput(attrs={"autocomplete": "tel", "inputmode": "tel"}))
    consent = forms.BooleanField(required=False)
    by_paper = forms.BooleanField(label=gettext_lazy("Paper by mail as well"), required=False)
    language = forms.ChoiceField(label=gettext_lazy("Language"), choices=LANGUAGES)
    kinds = forms.MultipleChoiceField(label=gettext_lazy("Notices"), required=False,
                                      widget=forms.CheckboxSelectMultiple,
                                      choices=[(kind, KIND_WORDS[kind]) for kind in OPTIONAL_KINDS])


@login_required
def notifications(request, public_id):
    from .views import _render

    account = selectors.account_get_for_customer(request.user, public_id)
    preference = preference_of(account)
    utility = selectors.installed_ordinance(timezone.localdate())
    words = consent_words(utility.utility.name if utility else "")
    status = 200
    if request.method == "POST" and "confirm_code" in request.POST:
        # The code texted to the number comes back: texts start.
        try:
            text_number_verify(account=account, code=request.POST.get("code", ""), actor=request.user)
        except ApplicationError as exc:
            messages.error(request, str(exc))
        else:
            messages.success(request, _("Your number is confirmed: our notices will come by text."))
        return redirect("portal:notifications", public_id=account.public_id)
    if request.method == "POST":
        form = PreferencesForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                preferences_set(account=account, by_email=data["by_email"], by_text=data["by_text"],
                                by_paper=data["by_paper"], number=data["text_number"], consented=data["consent"],
                                kinds_off=[k for k in OPTIONAL_KINDS if k not in data["kinds"]], words=words,
                                actor=request.user)
                account_language_set(account=account, language=data["language"], actor=request.user)
            except ApplicationError as exc:
                for error in exc.errors:
                    form.add_error(error.field if error.field in form.fields else None, error.message)
            else:
                messages.success(request, _("Your notification choices are saved."))
                pending = verification_pending(account)
                if pending is not None and data["by_text"]:
                    messages.info(request, _("We texted a code to %(number)s: enter it below to start texts "
                                             "there.") % {"number": pending.number})
                return redirect("portal:notifications", public_id=account.public_id)
        status = 400
    else:
        form = PreferencesForm(initial={
            "by_email": preference.by_email, "by_text": preference.by_text, "by_paper": preference.by_paper,
            "text_number": preference.text_number, "language": account.language,
            "kinds": [k for k in OPTIONAL_KINDS if k not in (preference.kinds_off or [])]})
    return _render(request, "portal/notifications.html", {"account": account, "form": form, "consent_words": words,
                                                          "preference": preference,
                                                          "pending": verification_pending(account)}, status=status)
