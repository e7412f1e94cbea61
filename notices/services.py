"""Telling a customer, once, the way they chose: ``notice_give`` writes the notice in the account's language and
sends it by e-mail to the customers linked online and the owner's address on file, by text message where the
customer consented, and keeps it as paper for the clerk to print and mail where there is no e-mail address (or the
customer asked for paper as well). The (kind, fact, way) key makes it once: a second delivery of the same event (a
retried task, a replayed signal, the nightly job run again) tells no one again.

Design overview:

* **Once** — each row is created before anything is sent, under the unique (kind, fact, channel) key; a duplicate
  is nothing to do. Sending claims the row in the database first (``claimed_at``), so any number of senders send it
  once. A message the server refuses keeps its error and is tried again with backoff (``next_try_at``) up to
  ``NOTICE_ATTEMPTS``, then is left failed for the clerk to send again or on paper; every try is recorded
  (``NoticeAttempt``).
* **True when it goes** — just before sending, what the notice reports is checked again (``notices.truth``): one no
  longer so is withdrawn with the reason, never sent.
* **Language** — rendered inside ``core.i18n.customer_language``: subject and body in the account's language.
* **The customer's choice** — ``NoticePreference``: e-mail, text (with consent, never after STOP), paper as well, and
  the optional notices turned off. The notices about money taken or a case (a payment returned, autopay stopped, a
  case reopened, a plan ended) cannot be turned off.
* **Quiet hours** — nothing goes between 9 pm and 8 am local time (``settings.NOTICES_QUIET_HOURS``): a notice decided
  then waits (``send_after``) and ``notices_send_waiting`` (every ten minutes) sends it in the morning.
* **Paper** — kept for the clerk, who prints the day's paper notices from the admin (*Notices to customers*).
"""

import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from django.conf import settings
from django.core.mail import EmailMessage
from django.db import IntegrityError, transaction
from django.db.models import F, Q
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.models import Account, PortalLink
from core.errors import ApplicationError
from core.i18n import customer_language
from remittance.autopay import autopay_notice_sent

from .models import CustomerNotice, NoticeAttempt, NoticePreference
from .signals import notices_queued
from .sms import sms_send
from .truth import withdrawn_why
from .wording import notice_words, wordings_for

logger = logging.getLogger(__name__)

# The fact of an autopay debit's notice: "autopay-notice:<AutopayNotice id>".
AUTOPAY_FACT = "autopay-notice:"
# The notices a customer may turn off; the others concern money taken or a shut-off and always go.
# Rows written at a time by ``notices_give_many``.
BATCH = 2000
OPTIONAL_KINDS = (CustomerNotice.Kind.BILL_READY, CustomerNotice.Kind.DUE_SOON, CustomerNotice.Kind.LATE_NOTICE,
                  CustomerNotice.Kind.INSTALLMENT_DUE, CustomerNotice.Kind.USAGE_ALERT)


def addresses_by_account(accounts) -> dict[int, list[tuple[str, object]]]:
    """For each account (with its owner loaded), where what is written to its customers is e-mailed, as (address,
    the user or None): every active customer linked online, then the owner's address on file, once each (an address
    in any case is one address). The paperless bills' e-mails and the notices both go here."""
    accounts = list(accounts)
    links = (PortalLink.objects.filter(account_id__any=[a.pk for a in accounts]).exclude(user__email="")
             .filter(user__is_active=True).select_related("user").order_by("id"))
    by_account: dict[int, list[tuple[str, object]]] = defaultdict(list)
    for link in links:
        if not any(email.lower() == link.user.email.lower() for email, _ in by_account[link.account_id]):
            by_account[link.account_id].append((link.user.email, link.user))
    for account in accounts:
        owner = account.owner.email
        if owner and not any(email.lower() == owner.lower() for email, _ in by_account[account.pk]):
            by_account[account.pk].append((owner, None))
    return by_account


def notice_addresses(account: Account) -> list[str]:
    """Where an account's notices are e-mailed: ``addresses_by_account``'s."""
    return [email for email, _user in addresses_by_account([account])[account.pk]]


def preference_of(account: Account) -> NoticePreference:
    """The account's notice preferences, or the defaults (not saved) where the customer has chosen none."""
    found = NoticePreference.objects.filter(account=account).first()
    return found if found is not None else NoticePreference(account=account)


def quiet_until(now: datetime | None = None) -> datetime | None:
    """When a notice decided ``now`` may go, if ``now`` is in the quiet hours; None when it may go now."""
    hours = settings.NOTICES_QUIET_HOURS
    if not hours:
        return None
    start, end = hours
    local = timezone.localtime(now or timezone.now())
    if end <= local.hour < start:
        return None
    day = local.date() + (timedelta(days=1) if local.hour >= start else timedelta())
    return timezone.make_aware(datetime.combine(day, time(end)), local.tzinfo)


def notice_give(*, account: Account, kind: str, fact: str, template: str, context: dict,
                also: tuple[str, ...] = ()) -> CustomerNotice | None:
    """Tell ``account``'s customer about ``fact``, once, each way they chose; None when it was told already (or
    the customer turned this notice off). ``template`` is ``notices/email/<name>.txt``: its first line is the
    subject, the rest the body. ``also``: the address the customer gave for what the notice is about (autopay's),
    e-mailed whatever else they chose."""
    preference = preference_of(account)
    emails = notice_addresses(account)
    send_after = quiet_until()
    made: list[CustomerNotice] = []
    for row in _rows(NoticeItem(account, kind, fact, template, context, also=also), preference, emails,
                     wordings=wordings_for({kind}), send_after=send_after):
        try:
            with transaction.atomic():
                row.save()
            made.append(row)
        except IntegrityError:
            continue
    if not made:
        return None
    if send_after is None:
        for notice in made:
            notice_send(notice)
    return made[0]


@dataclass(frozen=True)
class NoticeItem:
    """One notice to give in a batch (``notices_give_many``): as ``notice_give``'s arguments."""

    account: Account
    kind: str
    fact: str
    template: str
    context: dict
    also: tuple[str, ...] = ()  # e-mailed whatever the customer chose (the address autopay's notices go to)
    channels: tuple[str, ...] = ("email", "text", "paper")  # the ways this notice may take


def _rows(item: NoticeItem, preference: NoticePreference, emails: list[str], *, wordings: dict,
          send_after: datetime | None) -> list[CustomerNotice]:
    """The notice's rows, not saved: one for each way the customer chose (e-mail to ``emails`` the provider has not
    refused, a text with consent, paper where there is no e-mail or the customer asked for it too); none when they
    turned this notice off. In the office's words where it has worded it, in the account's language."""
    account = item.account
    if item.kind in OPTIONAL_KINDS and item.kind in (preference.kinds_off or []):
        return []
    with customer_language(account):
        text = notice_words(kind=item.kind, language=account.language, template=item.template,
                            context={**item.context, "account": account}, wordings=wordings)
        reply_stop = _("Reply STOP to end texts, HELP for help.")
    subject, _sep, body = text.partition("\n")
    subject, body = subject.strip()[:200], body.strip()
    emails = _reachable(_once([*item.also, *(emails if preference.by_email else [])]), preference)
    ways: list[tuple[str, str, str]] = []  # (channel, sent to, words)
    channels = item.channels
    if emails and CustomerNotice.Channel.EMAIL in channels:
        ways.append((CustomerNotice.Channel.EMAIL, ", ".join(emails), body))
    if preference.texts_allowed and CustomerNotice.Channel.TEXT in channels:
        utility_name = getattr(item.context.get("utility"), "name", "")
        ways.append((CustomerNotice.Channel.TEXT, preference.text_number,
                     f"{utility_name}: {subject}. {settings.SITE_URL.rstrip('/')}/portal/ {reply_stop}".strip()))
    if (not emails or preference.by_paper) and CustomerNotice.Channel.PAPER in channels:
        ways.append((CustomerNotice.Channel.PAPER, _mailing_address(account), body))
    return [CustomerNotice(account=account, kind=item.kind, fact=item.fact[:120], language=account.language,
                           channel=channel, sent_to=sent_to, subject=subject, body=words,
                           send_after=None if channel == CustomerNotice.Channel.PAPER else send_after)
            for channel, sent_to, words in ways]


def notices_give_many(items: list[NoticeItem]) -> int:
    """Give many notices at once, as ``notice_give`` gives one (the ways chosen, once each, the office's words),
    reading each account's choices, addresses and the wordings in a few queries, and writing the rows in bulk; the
    e-mails and texts are queued for a worker (``notices_queued``), paper is kept to print. Returns how many notices
    were new."""
    if not items:
        return 0
    accounts = {item.account.pk: item.account for item in items}
    preferences = {p.account_id: p for p in NoticePreference.objects.filter(account_id__in=list(accounts))}
    addresses = addresses_by_account(accounts.values())
    wordings = wordings_for({item.kind for item in items})
    send_after = quiet_until() or timezone.now()
    rows: list[CustomerNotice] = []
    for item in items:
        preference = preferences.get(item.account.pk) or NoticePreference(account=item.account)
        emails = [email for email, _user in addresses.get(item.account.pk, [])]
        rows.extend(_rows(item, preference, emails, wordings=wordings, send_after=send_after))
    made = 0
    for start in range(0, len(rows), BATCH):
        batch = rows[start:start + BATCH]
        given = set(CustomerNotice.objects.filter(fact__in={r.fact for r in batch}).values_list(
            "kind", "fact", "channel"))
        new = [r for r in batch if (r.kind, r.fact, r.channel) not in given]
        CustomerNotice.objects.bulk_create(new, ignore_conflicts=True)
        made += len({(r.kind, r.fact) for r in new})
    if made:
        transaction.on_commit(lambda: notices_queued.send(sender=CustomerNotice))
    return made


# Sending exactly once: a sender claims a notice (``claimed_at``) in one UPDATE before it calls the provider, so two
# senders, a task run twice or a worker restarted never send it twice; a claim older than this (a sender that died
# mid-send) may be taken again.
CLAIM_HOLD = timedelta(minutes=15)
NOTICE_ATTEMPTS = 5  # a refusal is tried again after 5, 10, 20 and 40 minutes, then left failed for the clerk
FIRST_RETRY = timedelta(minutes=5)


def _claim(notice: CustomerNotice, now: datetime) -> bool:
    """Take ``notice`` for sending, in the database: False when another sender has it, or it went, or it is over."""
    return bool(CustomerNotice.objects.filter(
        pk=notice.pk, sent_at__isnull=True, withdrawn_at__isnull=True, failed_at__isnull=True).filter(
        Q(claimed_at__isnull=True) | Q(claimed_at__lt=now - CLAIM_HOLD)).update(
        claimed_at=now, attempts=F("attempts") + 1))


def notice_send(notice: CustomerNotice, *, now: datetime | None = None) -> bool:
    """Send one e-mail or text notice not yet sent (paper is printed by the clerk), exactly once; True when it went.
    Claimed first; what it reports checked again (``truth``: withdrawn, never sent, when no longer so); a refusal
    recorded and tried again later, up to ``NOTICE_ATTEMPTS``, then left failed for the clerk."""
    if notice.channel == CustomerNotice.Channel.PAPER or notice.sent_at is not None:
        return False
    now = now or timezone.now()
    if not _claim(notice, now):
        return False
    attempts = notice.attempts = CustomerNotice.objects.values_list("attempts", flat=True).get(pk=notice.pk)
    why = withdrawn_why(notice, on=timezone.localdate(now))
    if why:
        CustomerNotice.objects.filter(pk=notice.pk).update(withdrawn_at=now, withdrawn_why=why[:300], claimed_at=None)
        return False
    try:
        if notice.channel == CustomerNotice.Channel.EMAIL:
            EmailMessage(subject=notice.subject, body=notice.body,
                         to=[a.strip() for a in notice.sent_to.split(",") if a.strip()]).send()
        else:
            sms_send(notice.sent_to, notice.body)
    except Exception as exc:  # noqa: BLE001 - kept on the notice for the clerk; the event itself stands
        logger.warning("notice %s to %s not sent (try %s): %s", notice.pk, notice.sent_to, attempts, exc)
        error = str(exc)[:300] or exc.__class__.__name__
        last = attempts >= NOTICE_ATTEMPTS
        CustomerNotice.objects.filter(pk=notice.pk).update(
            error=error, claimed_at=None, failed_at=now if last else None,
            next_try_at=None if last else now + FIRST_RETRY * 2 ** (attempts - 1))
        NoticeAttempt.objects.create(notice_id=notice.pk, at=now, sent=False, error=error)
        notice.error = error
        return False
    CustomerNotice.objects.filter(pk=notice.pk).update(sent_at=now, error="", claimed_at=None, next_try_at=None)
    NoticeAttempt.objects.create(notice_id=notice.pk, at=now, sent=True)
    notice.sent_at = now
    if notice.kind == CustomerNotice.Kind.AUTOPAY_SCHEDULED and notice.fact.startswith(AUTOPAY_FACT):
        # The debit may be made the notice period after the customer was told (Reg E § 1005.10(d)).
        autopay_notice_sent(notice_id=int(notice.fact.removeprefix(AUTOPAY_FACT)), at=now)
    return True


def notices_send_waiting(*, now: datetime | None = None) -> int:
    """Send the e-mail and text notices waiting — decided in the quiet hours, or refused and due to be tried again;
    returns how many went."""
    now = now or timezone.now()
    if quiet_until(now) is not None:
        return 0
    waiting = (CustomerNotice.objects.filter(sent_at__isnull=True, withdrawn_at__isnull=True, failed_at__isnull=True)
               .filter(Q(send_after__isnull=True) | Q(send_after__lte=now))
               .filter(Q(next_try_at__isnull=True) | Q(next_try_at__lte=now))
               .exclude(channel=CustomerNotice.Channel.PAPER).order_by("id"))
    return sum(1 for notice in waiting if notice_send(notice, now=now))


def notice_send_again(notice: CustomerNotice) -> bool:
    """The clerk's "send again" of a notice that failed (or is waiting to be tried again): one more try now."""
    if notice.sent_at or notice.withdrawn_at or notice.channel == CustomerNotice.Channel.PAPER:
        raise ApplicationError(f"this notice is {notice.state}: there is nothing to send again", field="notice")
    CustomerNotice.objects.filter(pk=notice.pk).update(failed_at=None, next_try_at=None, claimed_at=None,
                                                       attempts=min(notice.attempts, NOTICE_ATTEMPTS - 1))
    notice.refresh_from_db()
    return notice_send(notice)


def notice_on_paper(notice: CustomerNotice) -> CustomerNotice:
    """The clerk's "send on paper instead" of an e-mail or text that did not go: the same words, to print and mail
    (the customer's mailing address); the e-mail or text is not tried again."""
    if notice.sent_at or notice.withdrawn_at or notice.channel == CustomerNotice.Channel.PAPER:
        raise ApplicationError(f"this notice is {notice.state}: it needs no paper copy", field="notice")
    with transaction.atomic():
        paper, made = CustomerNotice.objects.get_or_create(
            kind=notice.kind, fact=notice.fact, channel=CustomerNotice.Channel.PAPER,
            defaults={"account": notice.account, "language": notice.language, "subject": notice.subject,
                      "body": notice.body, "sent_to": _mailing_address(notice.account)})
        CustomerNotice.objects.filter(pk=notice.pk).update(
            failed_at=notice.failed_at or timezone.now(), next_try_at=None, claimed_at=None,
            error=(notice.error or "not sent") + "; sent on paper instead")
    return paper


def _once(emails: list[str]) -> list[str]:
    found: list[str] = []
    for email in emails:
        if email and email.lower() not in {f.lower() for f in found}:
            found.append(email)
    return found


def _reachable(emails: list[str], preference: NoticePreference) -> list[str]:
    """The addresses the mail provider has not reported bounced or marked as spam."""
    off = {email.lower() for email in preference.emails_off or []}
    return [email for email in emails if email.lower() not in off]


def email_undeliverable(*, address: str, why: str) -> int:
    """The mail provider reported ``address`` bounced or marked a message from us as spam: no notice is e-mailed
    to it again (the others go on; with none left, notices go by paper), and the clerk sees why on the customer's
    notice preferences. Returns the accounts changed."""
    address = (address or "").strip()
    if not address:
        return 0
    accounts = set(Account.objects.filter(owner__email__iexact=address).values_list("id", flat=True))
    accounts |= set(PortalLink.objects.filter(user__email__iexact=address).values_list("account_id", flat=True))
    note = f"{address}: {why} on {timezone.localdate().isoformat()}"
    for account_id in accounts:
        preference, _created = NoticePreference.objects.get_or_create(account_id=account_id)
        if address.lower() not in {e.lower() for e in preference.emails_off}:
            preference.emails_off = [*preference.emails_off, address]
            preference.email_problem = note[:200]
            preference.save(update_fields=["emails_off", "email_problem", "updated_at"])
    return len(accounts)


def _mailing_address(account: Account) -> str:
    return f"{account.owner.name}\n{account.owner.mailing_address}"
