"""NACHA files: the ACH debit file the village's bank takes (PPD entries, debits only), and the returns it sends
back. Pure: text in, text out; nothing here reads the database.

Every record is 94 characters; a file is a file header (1), one batch header (5), its entry details (6), the
batch control (8) and the file control (9), filled with records of nines to a multiple of ten records (blocking
factor 10). The controls carry the entry count, the entry hash (the sum of the receiving banks' 8-digit routing
numbers, its rightmost ten digits) and the total debits and credits in cents. A return entry is followed by an
addenda record (7, type 99) with its return reason code (R01, R02, …) and the trace number of the debit it
returns.
"""

import re
from dataclasses import dataclass
from datetime import date, datetime

RECORD = 94
BLOCKING = 10
CHECKING_DEBIT, SAVINGS_DEBIT = "27", "37"
DEBITS_ONLY = "225"
SEC = "PPD"
_TEXT = re.compile(r"[^A-Z0-9 .,&/()'-]")


class NachaError(ValueError):
    """A value that cannot go in a NACHA field, or a file that is not one; the message names which."""


def aba_valid(routing: str) -> bool:
    """A 9-digit routing number whose ABA check digit holds: 3·(d1+d4+d7) + 7·(d2+d5+d8) + (d3+d6+d9) ≡ 0 (mod 10)."""
    if not (len(routing) == 9 and routing.isascii() and routing.isdigit()):
        return False
    d = [int(c) for c in routing]
    return (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + (d[2] + d[5] + d[8])) % 10 == 0


def _alpha(value: str, size: int) -> str:
    """Upper-case text, left-justified and space-filled; characters the banks refuse become spaces."""
    return _TEXT.sub(" ", value.upper())[:size].ljust(size)


def _num(value: int, size: int) -> str:
    text = str(value)
    if value < 0 or len(text) > size:
        raise NachaError(f"{value} does not fit a {size}-digit field")
    return text.zfill(size)


@dataclass(frozen=True)
class Originator:
    """The village and its bank (the originating depository financial institution)."""

    odfi_routing: str  # the village's bank, 9 digits
    odfi_name: str
    company_id: str  # 10 characters, as the bank assigned (often "1" and the federal tax id)
    company_name: str


@dataclass(frozen=True)
class Debit:
    routing: str  # the customer's bank, 9 digits
    account_number: str
    savings: bool
    amount_cents: int
    individual_id: str  # our account number
    name: str
    sequence: int  # the trace number's last 7 digits


def trace_number(originator: Originator, sequence: int) -> str:
    return originator.odfi_routing[:8] + _num(sequence, 7)


RETRY_DESCRIPTION = "RETRY PYMT"  # NACHA: a reinitiated entry's batch says so in its company entry description


def debit_file(originator: Originator, debits: list[Debit], *, effective: date, created: datetime,
               modifier: str = "A", description: str = "WATER BILL", retries: list[Debit] = ()) -> str:
    """The debit file: a PPD batch of ``debits`` to settle on ``effective``, and a second batch of ``retries``
    (debits returned for insufficient or uncollected funds, presented again) described ``RETRY PYMT``."""
    if not aba_valid(originator.odfi_routing):
        raise NachaError(f"the bank's routing number {originator.odfi_routing!r} fails the ABA check digit")
    if not (len(modifier) == 1 and modifier.isascii() and modifier.isalnum() and modifier.upper() == modifier):
        raise NachaError(f"file id modifier {modifier!r} is not one of A–Z, 0–9")
    odfi8 = originator.odfi_routing[:8]
    records = ["1" + "01" + " " + originator.odfi_routing + _alpha(originator.company_id, 10)
               + created.strftime("%y%m%d") + created.strftime("%H%M") + modifier + "094" + "10" + "1"
               + _alpha(originator.odfi_name, 23) + _alpha(originator.company_name, 23) + " " * 8]
    batches = [(description, list(debits)), (RETRY_DESCRIPTION, list(retries))]
    batches = [(words, entries) for words, entries in batches if entries] or [(description, [])]
    file_hash = file_total = file_entries = 0
    for number, (words, entries) in enumerate(batches, start=1):
        records.append("5" + DEBITS_ONLY + _alpha(originator.company_name, 16) + " " * 20
                       + _alpha(originator.company_id, 10) + SEC + _alpha(words, 10)
                       + effective.strftime("%y%m%d") + effective.strftime("%y%m%d") + "   " + "1" + odfi8
                       + _num(number, 7))
        entry_hash = total = 0
        for debit in entries:
            records.append(_entry(originator, debit))
            entry_hash += int(debit.routing[:8])
            total += debit.amount_cents
        records.append("8" + DEBITS_ONLY + _num(len(entries), 6) + _hash(entry_hash) + _num(total, 12)
                       + _num(0, 12) + _alpha(originator.company_id, 10) + " " * 19 + " " * 6 + odfi8
                       + _num(number, 7))
        file_hash, file_total, file_entries = file_hash + entry_hash, file_total + total, file_entries + len(entries)
    blocks = -(-(len(records) + 1) // BLOCKING)
    records.append("9" + _num(len(batches), 6) + _num(blocks, 6) + _num(file_entries, 8) + _hash(file_hash)
                   + _num(file_total, 12) + _num(0, 12) + " " * 39)
    records += ["9" * RECORD] * (blocks * BLOCKING - len(records))
    for number, record in enumerate(records, start=1):
        if len(record) != RECORD:
            raise NachaError(f"record {number} is {len(record)} characters, not {RECORD}")  # a bug here, not input
    return "\n".join(records) + "\n"


def _hash(entry_hash: int) -> str:
    """The entry hash as the controls carry it: the sum's rightmost ten digits."""
    return str(entry_hash)[-10:].zfill(10)


def _entry(originator: Originator, debit: Debit) -> str:
    if not aba_valid(debit.routing):
        raise NachaError(f"routing number {debit.routing!r} of account {debit.individual_id} fails the ABA "
                         "check digit")
    if not (debit.account_number.isascii() and debit.account_number.isalnum()
            and 1 <= len(debit.account_number) <= 17):
        raise NachaError(f"the bank account of {debit.individual_id} is not 1–17 letters and digits")
    if debit.amount_cents <= 0:
        raise NachaError(f"the debit of {debit.individual_id} is not a positive amount")
    return ("6" + (SAVINGS_DEBIT if debit.savings else CHECKING_DEBIT) + debit.routing[:8]
            + debit.routing[8] + debit.account_number.ljust(17) + _num(debit.amount_cents, 10)
            + _alpha(debit.individual_id, 15) + _alpha(debit.name, 22) + "  " + "0"
            + trace_number(originator, debit.sequence))


@dataclass(frozen=True)
class Return:
    line: int
    code: str  # R01, R02, …
    original_trace: str
    amount_cents: int
    individual_id: str


RETURN_REASONS = {
    "R01": "insufficient funds", "R02": "account closed", "R03": "no account, or unable to locate the account",
    "R04": "invalid account number", "R05": "unauthorized debit to a consumer account", "R06": "returned at the "
    "bank's request", "R07": "authorization revoked by the customer", "R08": "payment stopped",
    "R09": "uncollected funds", "R10": "customer advises the debit was not authorized", "R16": "account frozen",
    "R20": "not a transaction account", "R29": "corporate customer advises not authorized",
}


# Return entries: a returned checking or savings debit (26, 36) or credit (21, 31), or any other entry code.
_DIGITS = re.compile(r"[0-9]+")


def returns_read(text: str) -> list[Return]:
    """The returned entries of a returns file, once the whole file has been checked: its records in order (a file
    header, batches of a header, entries each with its addenda, and a control, then the file control and the
    nines that fill the last block), each batch control's count, entry hash and totals against its entries, the
    file control's against the batches, and the blocking. A file cut short in transfer, or whose controls do not
    add up, is refused naming the line, and nothing in it is read."""
    lines = [line.rstrip("\r\n") for line in text.splitlines()]
    if not lines or not lines[0].startswith("1"):
        raise NachaError("line 1: not a NACHA file (it starts with a file header, record type 1)")
    returns: list[Return] = []
    state = "file"  # what may come next: file (a batch header or the file control), batch (an entry or control)
    entry: tuple[int, int, str] | None = None
    batch = {"entries": 0, "hash": 0, "debits": 0, "credits": 0, "number": 0}
    totals = {"batches": 0, "entries": 0, "hash": 0, "debits": 0, "credits": 0}
    file_control = None
    for number, line in enumerate(lines, start=1):
        if len(line) != RECORD:
            raise NachaError(f"line {number}: {len(line)} characters; every NACHA record is {RECORD}")
        kind = line[0]
        if file_control is not None:
            if line != "9" * RECORD:
                raise NachaError(f"line {number}: after the file control only records of nines fill the block")
            continue
        if number == 1:
            continue
        if kind == "1":
            raise NachaError(f"line {number}: a second file header; one file at a time")
        if kind == "5":
            if state != "file":
                raise NachaError(f"line {number}: a batch header before the batch above was closed (record 8)")
            state, batch = "batch", {"entries": 0, "hash": 0, "debits": 0, "credits": 0, "number": line[87:94]}
        elif kind == "6":
            if state != "batch":
                raise NachaError(f"line {number}: an entry outside a batch (no batch header, record 5, before it)")
            amount, rdfi = line[29:39], line[3:11]
            if not (_DIGITS.fullmatch(amount) and _DIGITS.fullmatch(rdfi)):
                raise NachaError(f"line {number}: the amount (positions 30–39) or the bank (4–11) is not digits")
            entry = (number, int(amount), line[39:54].strip())
            batch["entries"] += 1
            batch["hash"] += int(rdfi)
            batch["credits" if line[2] in "1234" else "debits"] += int(amount)
        elif kind == "7":
            if state != "batch" or entry is None:
                raise NachaError(f"line {number}: an addenda with no entry before it")
            batch["entries"] += 1
            if line[1:3] == "99":
                code, trace = line[3:6], line[6:21]
                if not re.fullmatch(r"R\d\d", code) or not _DIGITS.fullmatch(trace):
                    raise NachaError(f"line {number}: return reason {code!r} or original trace {trace!r} is not one")
                returns.append(Return(line=number, code=code, original_trace=trace, amount_cents=entry[1],
                                      individual_id=entry[2]))
                entry = None
        elif kind == "8":
            if state != "batch":
                raise NachaError(f"line {number}: a batch control with no batch open")
            _controls_check(number, line, batch, count_at=4, count_size=6, hash_at=10, debits_at=20)
            if line[87:94] != batch["number"]:
                raise NachaError(f"line {number}: batch number {line[87:94]} closes batch {batch['number']}")
            state, entry = "file", None
            totals["batches"] += 1
            for key in ("entries", "hash", "debits", "credits"):
                totals[key] += batch[key]
        elif kind == "9":
            if state != "file":
                raise NachaError(f"line {number}: the file control comes before the batch above was closed")
            if not _DIGITS.fullmatch(line[1:7]) or int(line[1:7]) != totals["batches"]:
                raise NachaError(f"line {number}: the file control counts {line[1:7]} batches; the file has "
                                 f"{totals['batches']}")
            _controls_check(number, line, totals, count_at=13, count_size=8, hash_at=21, debits_at=31)
            blocks = -(-len(lines) // BLOCKING)
            if len(lines) % BLOCKING:
                raise NachaError(f"line {len(lines)}: the file ends after {len(lines)} records, not a whole block of "
                                 f"{BLOCKING} (cut short?)")
            if not _DIGITS.fullmatch(line[7:13]) or int(line[7:13]) != blocks:
                raise NachaError(f"line {number}: the file control counts {line[7:13]} blocks; the file has {blocks}")
            file_control = number
        else:
            raise NachaError(f"line {number}: record type {kind!r} is not a NACHA record")
    if file_control is None:
        raise NachaError(f"line {len(lines)}: the file ends without its file control (record 9): cut short?")
    return returns


def _controls_check(number: int, line: str, seen: dict, *, count_at: int, count_size: int, hash_at: int,
                    debits_at: int) -> None:
    """A batch or file control's entry and addenda count, entry hash and totals against what was read."""
    fields = (("entry and addenda count", line[count_at:count_at + count_size], seen["entries"]),
              ("entry hash", line[hash_at:hash_at + 10], int(_hash(seen["hash"]))),
              ("total debits", line[debits_at:debits_at + 12], seen["debits"]),
              ("total credits", line[debits_at + 12:debits_at + 24], seen["credits"]))
    for name, text, expected in fields:
        if not _DIGITS.fullmatch(text) or int(text) != expected:
            raise NachaError(f"line {number}: the control's {name} is {text.strip() or 'blank'}; the records above "
                             f"give {expected}")
