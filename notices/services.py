"""Telling a customer, once: ``notice_give`` writes the notice in the account's language, e-mails it to the
customers linked online and the owner's address on file, or keeps it as paper for the clerk to print and mail when
there is no address. The (kind, fact) key makes it once: a second delivery of the same event (a retried task, a
replayed signal) tells no one again.

Design overview:

* **Once** — the row is created before anything is sent, under the unique (kind, fact) key; a duplicate is
  nothing to do. An e-mail the server refuses keeps the row with its error and no ``sent_at`` for the clerk.
* **Language** — rendered inside ``core.i18n.customer_language``: subject and body in the account's language.
* **Paper** — with no address, the notice is kept as paper; the clerk prints the day's paper notices from the
  admin (*Notices to customers*), which marks them sent.
"""

import logging

from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.template.loader import render_to_string
from django.utils import timezone

from accounts.models import Account, PortalLink
from core.i18n import customer_language

from .models import CustomerNotice

logger = logging.getLogger(__name__)


def notice_addresses(account: Account, *, also: tuple[str, ...] = ()) -> list[str]:
    """Where an account's notices are e-mailed: ``also`` (the address a customer gave for what the notice is about:
    autopay's), each active customer linked online, then the owner's address on file, once each (an address in any
    case is one address)."""
    found: list[str] = []
    emails = PortalLink.objects.filter(account=account, user__is_active=True).exclude(user__email="") \
        .order_by("id").values_list("user__email", flat=True)
    for email in [*also, *emails, account.owner.email]:
        if email and email.lower() not in {f.lower() for f in found}:
            found.append(email)
    return found


def notice_give(*, account: Account, kind: str, fact: str, template: str, context: dict,
                also: tuple[str, ...] = ()) -> CustomerNotice | None:
    """Tell ``account``'s customer about ``fact``, once; None when it was told already. ``template`` is
    ``notices/email/<name>.txt``: its first line is the subject, the rest the body."""
    with customer_language(account):
        text = render_to_string(template, {**context, "account": account}).strip()
    subject, _, body = text.partition("\n")
    addresses = notice_addresses(account, also=also)
    try:
        with transaction.atomic():
            notice = CustomerNotice.objects.create(
                account=account, kind=kind, fact=fact[:120], language=account.language,
                channel=CustomerNotice.Channel.EMAIL if addresses else CustomerNotice.Channel.PAPER,
                sent_to=", ".join(addresses) if addresses else _mailing_address(account),
                subject=subject.strip()[:200], body=body.strip())
    except IntegrityError:
        return None
    if addresses:
        try:
            EmailMessage(subject=notice.subject, body=notice.body, to=addresses).send()
        except Exception as exc:  # noqa: BLE001 - kept on the notice for the clerk; the event itself stands
            logger.warning("notice %s to %s not sent: %s", notice.pk, addresses, exc)
            CustomerNotice.objects.filter(pk=notice.pk).update(error=str(exc)[:300])
            return notice
        CustomerNotice.objects.filter(pk=notice.pk).update(sent_at=timezone.now())
        notice.sent_at = timezone.now()
    return notice


def _mailing_address(account: Account) -> str:
    return f"{account.owner.name}\n{account.owner.mailing_address}"
