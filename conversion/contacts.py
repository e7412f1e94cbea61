"""How each customer gets their bills, from another system: the owner's e-mail address and the paperless choice,
checked all or nothing, written through the accounts' service and put back whole by a rollback.

Design overview:

* **The file** (``CONTACTS_LAYOUT``), one row per account: ``account_no,email,paperless``. ``email`` is the
  owner's address (blank: the address on file stays); ``paperless`` is yes or no (y/n, true/false, 1/0 and a
  blank for no, as other systems write them).
* **Checked as every import is**: every problem with its line and column, nothing saved — an unknown account,
  an account on two lines, an address that is not one, an owner of several accounts given two different
  addresses, paperless bills for an account whose owner has no address (the bill would reach nobody).
* **Posted** in the conversion's transaction (``accounts.services.contacts_bring_over``); what it replaced is
  kept on the batch so a rollback puts it back. A paperless account is e-mailed at the owner's address from
  its next bill (``portal.notify``), with an invitation to sign up online.
"""

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.core.validators import EmailValidator

from accounts.models import Account
from accounts.services import ContactSet, contacts_bring_over, contacts_restore
from core.csvimport import CsvLayout, ImportErrors, chunked, csv_rows, identifier, import_source_read

from .opening import unknown_accounts

CONTACTS_LAYOUT = CsvLayout(required=("account_no", "email", "paperless"))
YES, NO = ("yes", "y", "true", "t", "1", "x"), ("no", "n", "false", "f", "0", "")
_EMAIL = EmailValidator()


@dataclass(frozen=True)
class ContactRow:
    line: int
    account_no: str
    email: str
    paperless: bool


def _email(value: str) -> str:
    if len(value) > 254:
        raise ValueError(f"is {len(value)} characters long; an e-mail address is at most 254")
    try:
        _EMAIL(value)
    except ValidationError:
        raise ValueError(f"'{value}' is not an e-mail address") from None
    return value


def _paperless(value: str) -> bool:
    word = value.strip().lower()
    if word in YES:
        return True
    if word in NO:
        return False
    raise ValueError(f"'{value}' is not yes or no")


def contacts_read(source) -> list[ContactRow]:
    """The contacts checked, all or nothing (``ImportRejected``, each problem naming ``contacts.<column>``)."""
    file = import_source_read(source)
    errors = ImportErrors(columns=CONTACTS_LAYOUT.columns)
    number = identifier(max_length=20)
    rows: list[ContactRow] = []
    first_line: dict[str, int] = {}
    for row in csv_rows(text=file.text, layout=CONTACTS_LAYOUT, errors=errors):
        account_no = errors.parse(row, "account_no", number)
        email = errors.parse(row, "email", _email) if row["email"] else ""
        paperless = errors.parse(row, "paperless", _paperless)
        if account_no is not None:
            if account_no in first_line:
                errors.add(line=row.line, field="account_no", message=(
                    f"account {account_no} is on line {first_line[account_no]} too; one line per account"))
            first_line.setdefault(account_no, row.line)
        if None in (account_no, email, paperless):
            continue
        rows.append(ContactRow(row.line, account_no, email, paperless))
    unknown_accounts(errors, first_line)
    _owners_check(errors, rows)
    errors.raise_if_any(file="contacts")
    return rows


def _owners_check(errors: ImportErrors, rows: list[ContactRow]) -> None:
    """One owner, one address; paperless only with an address to send the bill to."""
    owners: dict[str, tuple[int, str]] = {}
    for chunk in chunked([r.account_no for r in rows], 20_000):
        owners.update((no, (owner, email)) for no, owner, email in Account.objects.filter(
            account_no__any=list(chunk)).values_list("account_no", "owner_id", "owner__email"))
    given: dict[int, ContactRow] = {}
    for row in rows:
        if row.account_no not in owners:
            continue  # named as unknown
        owner, on_file = owners[row.account_no]
        if row.email:
            earlier = given.setdefault(owner, row)
            if earlier.email.lower() != row.email.lower():
                errors.add(line=row.line, field="email", message=(
                    f"the owner of account {row.account_no} also owns account {earlier.account_no}, given "
                    f"{earlier.email} on line {earlier.line}; an owner has one address"))
        if row.paperless and not row.email and not on_file:
            errors.add(line=row.line, field="paperless", message=(
                f"the owner of account {row.account_no} has no e-mail address: paperless bills would reach "
                "nobody; give the address in the email column or say no"))


def contacts_post(rows: list[ContactRow], *, accounts: dict[str, int]) -> dict:
    """Set the addresses and choices (in the caller's transaction); what the file gave (for the reconciliation)
    and what it replaced (for the rollback)."""
    given = [ContactSet(account_id=accounts[r.account_no], email=r.email, paperless=r.paperless) for r in rows]
    replaced = contacts_bring_over(given)
    return {"contacts": {**replaced["contacts"], "given": [[c.account_id, c.email, c.paperless] for c in given]}}


def contacts_reconciled(made: list[dict]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The batches' contacts against the books: (paperless in the files, paperless on the books) and (addresses
    in the files, owners with that address on the books)."""
    given = [row for m in made for row in m.get("contacts", {}).get("given", [])]
    books: dict[int, tuple[bool, str]] = {}
    for chunk in chunked([account_id for account_id, _, _ in given], 20_000):
        books.update((pk, (paperless, email)) for pk, paperless, email in Account.objects.filter(
            pk__in=list(chunk)).values_list("pk", "paperless", "owner__email"))
    paperless = (sum(1 for _, _, p in given if p), sum(1 for pk, _, p in given if p and books.get(pk, (0,))[0]))
    emails = (sum(1 for _, e, _ in given if e),
              sum(1 for pk, e, _ in given if e and books.get(pk, (0, ""))[1].lower() == e.lower()))
    return paperless, emails


def contacts_remove(made: dict) -> None:
    """Put back what ``contacts_post`` replaced."""
    contacts_restore(made.get("contacts", {}))
