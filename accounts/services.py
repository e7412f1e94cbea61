"""Writes about accounts: a change of owner, ending portal links, the clerk's notes, and the addresses and
paperless choices brought over from another system.

A sale changes who is billed and who may see the account online. The new owner gets the next bill (bills
already issued keep the name and address they were issued to); the former owner's portal links end, the
access code printed on bills is replaced so the old one links nothing, and paperless delivery stops until
the new owner links the account and asks for it. Every step is in the audit history with the clerk.
"""

from dataclasses import dataclass
from datetime import date

from django.db import transaction

from core.clock import refuse_future
from core.csvimport import chunked
from core.db import column_set
from core.errors import ApplicationError

from .models import Account, AccountNote, Customer, Ownership, PortalLink, new_access_code
from .signals import account_closed


@dataclass(frozen=True)
class OwnerChange:
    account: Account
    previous_owner: Customer
    links_ended: int


def portal_links_end(*, links, actor, reason: str) -> int:
    """End these portal links (the customer no longer sees the account or gets its emails)."""
    ended = 0
    for link in links:
        link._history_user = actor
        link._change_reason = reason[:100]
        link.delete()
        ended += 1
    return ended


@transaction.atomic(durable=True)
def account_owner_change(*, account: Account, new_owner: Customer, on: date, actor) -> OwnerChange:
    account = Account.objects.select_for_update().select_related("owner").get(pk=account.pk)
    refuse_future(on, field="on", doing="recorded (record a sale once it has happened)")
    if new_owner.pk == account.owner_id:
        raise ApplicationError(f"{new_owner} already owns account {account.account_no}", field="new_owner")
    current = Ownership.objects.select_for_update().filter(account=account, ended_on__isnull=True).first()
    if current is not None:
        if on < current.started_on:
            raise ApplicationError(f"the current owner's ownership starts {current.started_on}; a sale on {on} "
                                   "would come before it", field="on")
        current.ended_on = on
        current._history_user = actor
        current.save(update_fields=["ended_on"])
    Ownership.objects.create(account=account, owner=new_owner, started_on=on)
    previous = account.owner
    ended = portal_links_end(links=list(PortalLink.objects.filter(account=account)), actor=actor,
                             reason=f"owner changed on {on}")
    account.owner = new_owner
    account.access_code = new_access_code()
    account.paperless = False
    account._history_user = actor
    account._change_reason = f"owner changed on {on}: {previous} → {new_owner}"
    account.save(update_fields=["owner", "access_code", "paperless"])
    return OwnerChange(account=account, previous_owner=previous, links_ended=ended)


NOTE_MAX = 4000  # characters: a note is a few lines of what was said or done, not a document


def account_note_add(*, account: Account, text: str, actor) -> AccountNote:
    """A clerk's note on the account, dated and signed; notes are never edited or deleted."""
    text = text.strip()
    if not text:
        raise ApplicationError("a note needs some text", field="text")
    if len(text) > NOTE_MAX:
        raise ApplicationError(f"is {len(text):,} characters; a note is at most {NOTE_MAX:,}", field="text")
    return AccountNote.objects.create(account=account, text=text, created_by=actor)


@dataclass(frozen=True)
class ContactSet:
    """An account's owner's e-mail address ("" keeps the one on file) and its paperless choice."""

    account_id: int
    email: str
    paperless: bool


def contacts_bring_over(contacts: list[ContactSet]) -> dict:
    """Set the owners' addresses and the accounts' paperless choices in bulk (in the caller's transaction);
    returns what they replaced (``{"contacts": {"customers": [[id, email]], "accounts": [[id, paperless]]}}``)
    for ``contacts_restore``."""
    by_account = {c.account_id: c for c in contacts}
    was_email: dict[int, str] = {}
    was_paperless: dict[int, bool] = {}
    now_email: dict[int, str] = {}
    for chunk in chunked(list(by_account), 20_000):
        for account_id, paperless, owner_id, email in Account.objects.filter(pk__any=list(chunk)).values_list(
                "id", "paperless", "owner_id", "owner__email"):
            wanted = by_account[account_id]
            email = now_email.setdefault(owner_id, email)
            if wanted.email and email.lower() != wanted.email.lower():
                was_email.setdefault(owner_id, email)
                now_email[owner_id] = wanted.email
            if paperless != wanted.paperless:
                was_paperless[account_id] = paperless
    column_set(Customer, "email", {pk: now_email[pk] for pk in was_email})
    column_set(Account, "paperless", {pk: not paperless for pk, paperless in was_paperless.items()})
    return {"contacts": {"customers": [[pk, email] for pk, email in was_email.items()],
                         "accounts": [[pk, paperless] for pk, paperless in was_paperless.items()]}}


def contacts_restore(replaced: dict) -> None:
    """Put back the addresses and choices ``contacts_bring_over`` replaced."""
    column_set(Customer, "email", dict(replaced.get("customers", [])))
    column_set(Account, "paperless", dict(replaced.get("accounts", [])))


SERVICE_STATUSES = (Account.Status.ACTIVE, Account.Status.SHUT_OFF, Account.Status.VACANT)


@transaction.atomic
def account_service_set(*, account: Account, status: str, on: date, actor, reason: str) -> Account:
    """Water turned on (active), shut off, or the premises vacant, as the field found or made it, with the reason in
    the account's history. A closed account stays closed (its final bill ended it)."""
    refuse_future(on, field="done_on", doing="recorded")
    account = Account.objects.select_for_update().get(pk=account.pk)
    if status not in SERVICE_STATUSES:
        raise ApplicationError(f"'{status}' is not one of {', '.join(SERVICE_STATUSES)}", field="status")
    if account.status == Account.Status.CLOSED:
        raise ApplicationError(f"account {account.account_no} is closed; a new account is opened for new service",
                               field="account_no")
    if account.status != status:
        account.status = status
        account._history_user = actor
        account._change_reason = f"{Account.Status(status).label.lower()} on {on}: {reason}"[:100]
        account.save(update_fields=["status"])
    return account


@transaction.atomic
def account_close(*, account: Account, on: date, actor, reason: str) -> Account:
    """Close the account on ``on`` (its final bill issued), with the reason in its history: the one way an account
    closes. Once committed, ``account_closed`` tells the parts that act on the account (autopay ends, a shut-off
    order is cancelled)."""
    account = Account.objects.select_for_update().get(pk=account.pk)
    if account.status == Account.Status.CLOSED:
        raise ApplicationError(f"account {account.account_no} is already closed (on {account.closed_on})",
                               field="account_no")
    account.status, account.closed_on = Account.Status.CLOSED, on
    account._history_user = actor
    account._change_reason = reason[:100]
    account.save(update_fields=["status", "closed_on"])
    facts = {"account_id": account.pk, "closed_on": on}
    transaction.on_commit(lambda: account_closed.send(sender=Account, **facts))
    return account


def account_language_set(*, account: Account, language: str, actor) -> Account:
    """The language of the account's bills, notices and portal pages (one of ``settings.LANGUAGES``)."""
    from django.conf import settings

    if language not in dict(settings.LANGUAGES):
        raise ApplicationError(f"'{language}' is not a language of the bills: {', '.join(dict(settings.LANGUAGES))}",
                               field="language")
    if account.language != language:
        Account.objects.filter(pk=account.pk).update(language=language)
        account.language = language
    return account
