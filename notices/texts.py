"""Consent to text messages, and the replies that end and restart them (STOP, HELP, START), kept as the TCPA asks:
the words agreed to, when, for which number; and how each consent ended."""

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account
from core.errors import ApplicationError
from core.i18n import customer_language

from .models import NoticePreference, TextConsent
from .sms import phone_number

STOP_WORDS = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
HELP_WORDS = {"HELP", "INFO"}
START_WORDS = {"START", "YES", "UNSTOP"}


def consent_words(utility_name: str) -> str:
    """What a customer agrees to by ticking the box, in the page's language (kept with the consent as shown)."""
    return _("I agree to receive text messages from %(utility)s about my water account (bills due, late notices, "
             "payments returned, service) at this number. Message and data rates may apply; about 1 to 4 messages a "
             "month. Reply STOP to end, HELP for help. Consent is not a condition of service.") % {
        "utility": utility_name}


@transaction.atomic
def preferences_set(*, account: Account, by_email: bool, by_text: bool, by_paper: bool, kinds_off: list[str],
                    number: str, consented: bool, words: str, actor) -> NoticePreference:
    """The customer's choices. Texts need a number and consent to the words shown; a new number or consent is
    recorded (``TextConsent``) and clears an earlier STOP; turning texts off ends the consent."""
    preference, _created = NoticePreference.objects.select_for_update().get_or_create(account=account)
    now = timezone.now()
    number = phone_number(number) if number else ""
    if by_text and not number:
        raise ApplicationError(_("Enter a mobile number of ten digits for text messages."), field="text_number")
    current = TextConsent.objects.filter(account=account, number=number, ended_at__isnull=True).first() \
        if number else None
    if by_text and current is None:
        if not consented:
            raise ApplicationError(_("To get text messages, tick the box to agree to them."), field="consent")
        TextConsent.objects.filter(account=account, ended_at__isnull=True).update(ended_at=now,
                                                                                 ended_how="another number given")
        TextConsent.objects.create(account=account, number=number, words=words, given_at=now, given_by=actor,
                                   given_how="portal")
        preference.text_problem = ""
    if not by_text:
        TextConsent.objects.filter(account=account, ended_at__isnull=True).update(ended_at=now,
                                                                                 ended_how="turned off on the portal")
    preference.by_email, preference.by_text, preference.by_paper = by_email, by_text, by_paper
    preference.kinds_off = sorted(set(kinds_off))
    preference.text_number = number if by_text else preference.text_number
    preference.save()
    return preference


def text_reply(*, number: str, body: str, utility) -> str:
    """A reply from ``number``: STOP ends texts to it (every account that gave it), HELP says who we are and how to
    stop, START restarts texts where consent was given before. Returns the answer to text back ("" for none)."""
    number = phone_number(number)
    word = (body or "").strip().split(" ")[0].upper().strip(".!") if body else ""
    preferences = list(NoticePreference.objects.filter(text_number=number).select_related("account"))
    if not preferences:
        return ""
    account = preferences[0].account
    now = timezone.now()
    with customer_language(account):
        if word in STOP_WORDS:
            with transaction.atomic():
                NoticePreference.objects.filter(text_number=number).update(
                    text_problem=_("The number replied STOP on %(day)s.") % {"day": now.date().isoformat()})
                TextConsent.objects.filter(number=number, ended_at__isnull=True).update(
                    ended_at=now, ended_how=f"replied {word}")
            return _("%(utility)s: you will get no more texts. Reply START to get them again.") % {
                "utility": utility.name}
        if word in HELP_WORDS:
            return _("%(utility)s water notices. Call %(phone)s. Reply STOP to end texts.") % {
                "utility": utility.name, "phone": utility.phone or _("the office")}
        if word in START_WORDS:
            consented = TextConsent.objects.filter(number=number).exists()
            if not consented:
                return ""
            with transaction.atomic():
                NoticePreference.objects.filter(text_number=number).update(text_problem="", by_text=True)
                for preference in preferences:
                    TextConsent.objects.create(account=preference.account, number=number, given_at=now,
                                               given_how="replied START", words=f"replied {word}")
            return _("%(utility)s: texts are on again. Reply STOP to end.") % {"utility": utility.name}
    return ""


def text_undelivered(*, number: str, error: str) -> int:
    """A text that could not be delivered: the number is not texted again until the customer gives it again, and
    the clerk sees why; notices go by e-mail or paper instead. Returns the preferences changed."""
    return NoticePreference.objects.filter(text_number=phone_number(number), text_problem="").update(
        text_problem=f"Texts could not be delivered ({error}); notices go by e-mail or paper.")
