"""Writes for the customer portal: sign-up, linking an account, paperless choice."""

import hmac
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.contrib.auth.tokens import default_token_generator
from django.core import signing
from django.core.exceptions import ValidationError
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import F
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils import timezone
from django.utils.encoding import force_bytes
from django.utils.http import urlsafe_base64_encode
from django.utils.translation import gettext_lazy as _

from accounts.models import Account, PortalLink
from accounts.selectors import account_find
from core.db import lock_for_transaction
from core.errors import ApplicationError, FieldError

from .models import LinkFailure, SignUpCount

LINK_FAILURES_PER_USER = 5
LINK_FAILURES_PER_ADDRESS = 20
LINK_WINDOW = timedelta(minutes=15)
# One message for every wrong combination, so the form says nothing about which half was wrong.
LINK_REFUSED = _("That account number and access code do not match our records. Check both on your bill.")
LINK_THROTTLED = _("Too many attempts to link an account. Wait 15 minutes and try again, or call the water "
                  "office.")


class LinkThrottled(ApplicationError):
    status_code = 429


def normalize_email(email: str) -> str:
    return email.strip().lower()


# Signing up happens in two steps, so the sign-up page never tells whether an email already has a login:
# the page takes an email and always answers "check your email"; only the mailbox learns which it was. A
# new address gets a signed link to choose its password (nothing is stored until then, so nobody can
# set a password on someone else's address); a taken one gets a note with a password-reset link.
SIGN_UPS_PER_ADDRESS = 10
SIGN_UP_WINDOW = timedelta(hours=1)
SIGN_UP_LINK_AGE = timedelta(days=3)
SIGN_UP_SALT = "portal.sign-up"
SIGN_UP_THROTTLED = _("Too many sign-ups from your network in the last hour. Wait an hour and try again, or call "
                      "the water office.")
_WINDOWS_FROM = datetime(2000, 1, 1, tzinfo=UTC)


class SignUpThrottled(ApplicationError):
    status_code = 429


def sign_up_allowed(*, ip_address: str | None, now: datetime) -> bool:
    """Count one sign-up request from ``ip_address``; False past ``SIGN_UPS_PER_ADDRESS`` in the window.

    The count is one row per address and window, incremented by the database under the row's lock, so
    concurrent requests on any web worker are each counted once and no more than the limit get through.
    """
    window_start = now - (now - _WINDOWS_FROM) % SIGN_UP_WINDOW
    key = {"ip_address": ip_address or "", "window_start": window_start}
    with transaction.atomic():
        SignUpCount.objects.get_or_create(**key)
        SignUpCount.objects.filter(**key).update(requests=F("requests") + 1)
        requests = SignUpCount.objects.filter(**key).values_list("requests", flat=True).get()
    SignUpCount.objects.filter(window_start__lt=window_start).delete()  # past windows count for nothing
    return requests <= SIGN_UPS_PER_ADDRESS


def sign_up_token_make(*, email: str) -> str:
    return signing.dumps(normalize_email(email), salt=SIGN_UP_SALT, compress=True)


def sign_up_token_read(*, token: str) -> str | None:
    """The email a sign-up link was sent to; None when the link was altered or is too old."""
    try:
        return signing.loads(token, salt=SIGN_UP_SALT, max_age=SIGN_UP_LINK_AGE)
    except signing.BadSignature:
        return None


def _site_url(path: str) -> str:
    return settings.SITE_URL.rstrip("/") + path


def _send(*, to: str, subject: str, template: str, context: dict) -> None:
    EmailMessage(subject=subject, body=render_to_string(template, context), to=[to]).send()


def customer_sign_up_request(*, email: str, ip_address: str | None, now: datetime) -> None:
    """Someone asked to sign up with ``email``: email it a link to finish signing up or, when the email
    already has a login, tell its owner, with a link to reset the password (a deactivated login is told
    nothing). The caller answers the same either way. Refused past the per-address limit."""
    if not sign_up_allowed(ip_address=ip_address, now=now):
        raise SignUpThrottled(SIGN_UP_THROTTLED, field="email")
    email = normalize_email(email)
    user = get_user_model().objects.filter(username__iexact=email).first()
    if user is None:
        finish = reverse("portal:signup_finish", kwargs={"token": sign_up_token_make(email=email)})
        _send(to=email, subject=str(_("Finish signing up for your water account")),
              template="portal/email/signup_finish.txt", context={"email": email, "url": _site_url(finish)})
    elif user.is_active:
        reset = reverse("portal:password_reset_confirm", kwargs={
            "uidb64": urlsafe_base64_encode(force_bytes(user.pk)), "token": default_token_generator.make_token(user)})
        _send(to=email, subject=str(_("Someone tried to sign up with your email")),
              template="portal/email/signup_taken.txt",
              context={"email": email, "reset_url": _site_url(reset), "login_url": _site_url(reverse("portal:login"))})


def customer_sign_up(*, email: str, password: str):
    """A portal login for ``email`` (the username too), its password hashed with argon2.

    Called from the emailed sign-up link only, which proves the email is the caller's: so it may say
    that the email already has a login."""
    email = normalize_email(email)
    user_model = get_user_model()
    candidate = user_model(username=email, email=email)
    try:
        validate_password(password, user=candidate)
    except ValidationError as exc:
        raise ApplicationError(errors=[FieldError("password", m) for m in exc.messages]) from exc
    if user_model.objects.filter(username__iexact=email).exists():
        raise ApplicationError("an account with this email already exists: sign in, or reset your password",
                               field="email")
    try:
        with transaction.atomic():
            return user_model.objects.create_user(username=email, email=email, password=password)
    except IntegrityError as exc:
        raise ApplicationError("an account with this email already exists: sign in, or reset your password",
                               field="email") from exc


def _normalize_code(code: str) -> str:
    return "".join(code.split()).upper().replace("-", "")


def link_attempts_left(*, user, ip_address: str | None, now) -> bool:
    since = now - LINK_WINDOW
    if LinkFailure.objects.filter(user=user, attempted_at__gt=since).count() >= LINK_FAILURES_PER_USER:
        return False
    if ip_address and LinkFailure.objects.filter(ip_address=ip_address, attempted_at__gt=since).count() \
            >= LINK_FAILURES_PER_ADDRESS:
        return False
    return True


def account_link(*, user, account_no: str, access_code: str, ip_address: str | None = None) -> Account:
    """Link the account whose number and access code match; a wrong pair counts toward throttling.

    Five failures in 15 minutes (per user; twenty per address) refuse further tries until the window
    passes, whatever is typed — so codes cannot be guessed faster than that.
    """
    account_no = account_no.strip()
    with transaction.atomic():
        # Count and record under locks on the user and the address: twelve attempts at once get the same
        # five tries as twelve in a row.
        lock_for_transaction(f"portal-link-user-{user.pk}")
        if ip_address:
            lock_for_transaction(f"portal-link-address-{ip_address}")
        now = timezone.now()
        if not link_attempts_left(user=user, ip_address=ip_address, now=now):
            raise LinkThrottled(LINK_THROTTLED, field="access_code")
        account = account_find(account_no)
        # compare_digest on both branches keeps the time the same whether or not the number exists.
        expected = account.access_code if account else "-" * 8
        matches = hmac.compare_digest(_normalize_code(access_code).encode(), expected.encode())
        if account is None or not matches:
            LinkFailure.objects.create(user=user, ip_address=ip_address, account_no=account_no[:40],
                                       attempted_at=now)
    if account is None or not matches:
        raise ApplicationError(LINK_REFUSED, field="access_code")
    PortalLink.objects.get_or_create(user=user, account=account)
    return account


def account_paperless_set(*, account: Account, paperless: bool, actor) -> Account:
    """The customer's choice of paperless bills (kept in the account's history with who made it)."""
    if account.paperless != paperless:
        account.paperless = paperless
        account._history_user = actor
        account.save(update_fields=["paperless"])
    return account
