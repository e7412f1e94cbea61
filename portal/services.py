"""Writes for the customer portal: sign-up, linking an account, paperless choice."""

import hmac
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Account, PortalLink
from waterbilling.db import lock_for_transaction
from waterbilling.errors import ApplicationError, FieldError

from .models import LinkFailure

LINK_FAILURES_PER_USER = 5
LINK_FAILURES_PER_ADDRESS = 20
LINK_WINDOW = timedelta(minutes=15)
# One message for every wrong combination, so the form says nothing about which half was wrong.
LINK_REFUSED = "That account number and access code do not match our records. Check both on your bill."
LINK_THROTTLED = ("Too many attempts to link an account. Wait 15 minutes and try again, or call the water "
                  "office.")


class LinkThrottled(ApplicationError):
    status_code = 429


def normalize_email(email: str) -> str:
    return email.strip().lower()


def customer_sign_up(*, email: str, password: str):
    """A portal login for ``email`` (the username too), its password hashed with argon2."""
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
        account = Account.objects.filter(account_no=account_no).first()
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
