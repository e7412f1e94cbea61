"""Consent to text messages, and the replies that end and restart them (STOP, HELP, START), kept as the TCPA asks:
the words agreed to, when, for which number; and how each consent ended."""

import hashlib
import hmac
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account
from core.errors import ApplicationError
from core.i18n import customer_language

from .models import NoticePreference, TextConsent, TextNumber, TextVerification
from .sms import phone_number, sms_send

STOP_WORDS = {"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT"}
HELP_WORDS = {"HELP", "INFO"}
START_WORDS = {"START", "YES", "UNSTOP"}


def consent_words(utility_name: str) -> str:
    """What a customer agrees to by ticking the box, in the page's language (kept with the consent as shown)."""
    return _("I agree to receive text messages from %(utility)s about my water account (bills due, late notices, "
             "payments returned, service) at this number. Message and data rates may apply; about 1 to 4 messages a "
             "month. Reply STOP to end, HELP for help. Consent is not a condition of service.") % {
        "utility": utility_name}


CODE_MINUTES = 15  # a code texted to verify a number holds this long
CODE_TRIES = 5  # wrong codes before a new one must be asked for


def _digest(account_id: int, number: str, code: str) -> str:
    return hmac.new(settings.SECRET_KEY.encode(), f"{account_id}:{number}:{code}".encode(), hashlib.sha256).hexdigest()


def number_stopped(number: str) -> TextNumber | None:
    """The number, where it replied STOP and has not sent START since."""
    return TextNumber.objects.filter(number=number, stopped_at__isnull=False).first()


@transaction.atomic
def preferences_set(*, account: Account, by_email: bool, by_text: bool, by_paper: bool, kinds_off: list[str],
                    number: str, consented: bool, words: str, actor) -> NoticePreference:
    """The customer's choices. Texts need a number, consent to the words shown, and the number shown to be theirs: a
    new number gets a code by text (``text_number_verify`` records the consent when it comes back) — a number that
    replied STOP gets none, only START from it starts texts again. Turning texts off ends the consent."""
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
        if number_stopped(number):
            raise ApplicationError(_("This number replied STOP to our texts. To get them again, text START to us "
                                     "from it."), field="text_number")
        _code_send(account=account, number=number, words=words, actor=actor, now=now)
        # Texts stay as they were (to a number already confirmed) until the code comes back.
        by_text = preference.by_text
    if not by_text:
        TextConsent.objects.filter(account=account, ended_at__isnull=True).update(ended_at=now,
                                                                                 ended_how="turned off on the portal")
    preference.by_email, preference.by_text, preference.by_paper = by_email, by_text, by_paper
    preference.kinds_off = sorted(set(kinds_off))
    preference.save()
    return preference


CODES_A_DAY = 5  # codes texted to one number in 24 hours, whatever account asks: no one can flood a phone
CODE_AGAIN_AFTER = timedelta(minutes=1)  # saving twice in a row texts one code


def _code_send(*, account: Account, number: str, words: str, actor, now) -> None:
    sent = TextVerification.objects.filter(number=number, sent_at__gt=now - timedelta(days=1))
    if sent.filter(account=account, confirmed_at__isnull=True, sent_at__gt=now - CODE_AGAIN_AFTER).exists():
        return
    if sent.count() >= CODES_A_DAY:
        raise ApplicationError(_("Too many codes were sent to this number today. Try again tomorrow, or call the "
                                 "office."), field="text_number")
    code = f"{secrets.randbelow(10 ** 6):06d}"
    TextVerification.objects.create(account=account, number=number, code_digest=_digest(account.pk, number, code),
                                    words=words, asked_by=actor if getattr(actor, "pk", None) else None, sent_at=now)
    with customer_language(account):
        body = _("%(code)s is your code to get water notices by text at this number. If you did not ask for it, "
                 "ignore this message.") % {"code": code}
    sms_send(number, body)


def verification_pending(account: Account) -> TextVerification | None:
    """The code the account asked for last, while it may still be entered."""
    found = TextVerification.objects.filter(account=account, confirmed_at__isnull=True).first()
    if found is None or found.tries >= CODE_TRIES or found.sent_at < timezone.now() - timedelta(minutes=CODE_MINUTES):
        return None
    return found


@transaction.atomic
def text_number_verify(*, account: Account, code: str, actor) -> NoticePreference:
    """The code texted to the number comes back: the number is the customer's, the consent to the words they agreed
    to is recorded (``TextConsent``, ending the account's earlier one) and texts start."""
    pending = verification_pending(account)
    if pending is None:
        raise ApplicationError(_("There is no code waiting: ask for a new one by saving your number again."),
                               field="code")
    pending = TextVerification.objects.select_for_update().get(pk=pending.pk)
    if not hmac.compare_digest(pending.code_digest, _digest(account.pk, pending.number, (code or "").strip())):
        pending.tries += 1
        pending.save(update_fields=["tries"])
        left = CODE_TRIES - pending.tries
        raise ApplicationError(_("That code does not match; %(left)s tries left.") % {"left": left} if left else
                               _("That code does not match. Ask for a new one by saving your number again."),
                               field="code")
    if number_stopped(pending.number):
        raise ApplicationError(_("This number replied STOP to our texts. To get them again, text START to us "
                                 "from it."), field="code")
    now = timezone.now()
    pending.confirmed_at = now
    pending.save(update_fields=["confirmed_at"])
    TextConsent.objects.filter(account=account, ended_at__isnull=True).update(ended_at=now,
                                                                             ended_how="another number given")
    TextConsent.objects.create(account=account, number=pending.number, words=pending.words, given_at=now,
                               given_by=actor if getattr(actor, "pk", None) else None,
                               given_how="portal, number confirmed by code")
    preference, _created = NoticePreference.objects.select_for_update().get_or_create(account=account)
    preference.by_text, preference.text_number, preference.text_problem = True, pending.number, ""
    preference.save()
    return preference


def text_reply(*, number: str, body: str, utility) -> str:
    """A reply from ``number``: STOP ends texts to it (every account that gave it), HELP says who we are and how to
    stop, START restarts texts where consent was given before. Returns the answer to text back ("" for none)."""
    number = phone_number(number)
    word = (body or "").strip().split(" ")[0].upper().strip(".!") if body else ""
    preferences = list(NoticePreference.objects.filter(text_number=number).select_related("account"))
    now = timezone.now()
    if word in STOP_WORDS:
        # The number's own STOP, whoever gave it (a number sent only a code included): no account texts it again.
        TextNumber.objects.update_or_create(number=number, defaults={"stopped_at": now,
                                                                     "stopped_how": f"replied {word}"})
    if not preferences:
        return _("You will get no more texts from us.") if word in STOP_WORDS else ""
    account = preferences[0].account
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
                TextNumber.objects.update_or_create(number=number, defaults={"stopped_at": None, "stopped_how": "",
                                                                             "started_at": now})
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
