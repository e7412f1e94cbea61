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


def debit_file(originator: Originator, debits: list[Debit], *, effective: date, created: datetime,
               modifier: str = "A", description: str = "WATER BILL") -> str:
    """The debit file: one PPD batch of ``debits`` to settle on ``effective``."""
    if not aba_valid(originator.odfi_routing):
        raise NachaError(f"the bank's routing number {originator.odfi_routing!r} fails the ABA check digit")
    if not (len(modifier) == 1 and modifier.isascii() and modifier.isalnum() and modifier.upper() == modifier):
        raise NachaError(f"file id modifier {modifier!r} is not one of A–Z, 0–9")
    odfi8 = originator.odfi_routing[:8]
    records = ["1" + "01" + " " + originator.odfi_routing + _alpha(originator.company_id, 10)
               + created.strftime("%y%m%d") + created.strftime("%H%M") + modifier + "094" + "10" + "1"
               + _alpha(originator.odfi_name, 23) + _alpha(originator.company_name, 23) + " " * 8]
    records.append("5" + DEBITS_ONLY + _alpha(originator.company_name, 16) + " " * 20
                   + _alpha(originator.company_id, 10) + SEC + _alpha(description, 10)
                   + effective.strftime("%y%m%d") + effective.strftime("%y%m%d") + "   " + "1" + odfi8 + _num(1, 7))
    entry_hash = total = 0
    for debit in debits:
        if not aba_valid(debit.routing):
            raise NachaError(f"routing number {debit.routing!r} of account {debit.individual_id} fails the ABA "
                             "check digit")
        if not (debit.account_number.isascii() and debit.account_number.isalnum()
                and 1 <= len(debit.account_number) <= 17):
            raise NachaError(f"the bank account of {debit.individual_id} is not 1–17 letters and digits")
        if debit.amount_cents <= 0:
            raise NachaError(f"the debit of {debit.individual_id} is not a positive amount")
        records.append("6" + (SAVINGS_DEBIT if debit.savings else CHECKING_DEBIT) + debit.routing[:8]
                       + debit.routing[8] + debit.account_number.ljust(17) + _num(debit.amount_cents, 10)
                       + _alpha(debit.individual_id, 15) + _alpha(debit.name, 22) + "  " + "0"
                       + trace_number(originator, debit.sequence))
        entry_hash += int(debit.routing[:8])
        total += debit.amount_cents
    hash_text = str(entry_hash)[-10:].zfill(10)
    records.append("8" + DEBITS_ONLY + _num(len(debits), 6) + hash_text + _num(total, 12) + _num(0, 12)
                   + _alpha(originator.company_id, 10) + " " * 19 + " " * 6 + odfi8 + _num(1, 7))
    blocks = -(-(len(records) + 1) // BLOCKING)
    records.append("9" + _num(1, 6) + _num(blocks, 6) + _num(len(debits), 8) + hash_text + _num(total, 12)
                   + _num(0, 12) + " " * 39)
    records += ["9" * RECORD] * (blocks * BLOCKING - len(records))
    for number, record in enumerate(records, start=1):
        if len(record) != RECORD:
            raise NachaError(f"record {number} is {len(record)} characters, not {RECORD}")  # a bug here, not input
    return "\n".join(records) + "\n"


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


def returns_read(text: str) -> list[Return]:
    """The returned entries of a returns file; a file that is not one is refused naming the line."""
    returns: list[Return] = []
    entry: tuple[int, int, str] | None = None
    lines = [line.rstrip("\r\n") for line in text.splitlines()]
    if not lines or not lines[0].startswith("1"):
        raise NachaError("line 1: not a NACHA file (it starts with a file header, record type 1)")
    for number, line in enumerate(lines, start=1):
        if not line.strip() or set(line) == {"9"}:
            continue
        if len(line) != RECORD:
            raise NachaError(f"line {number}: {len(line)} characters; every NACHA record is {RECORD}")
        if line[0] == "6":
            try:
                entry = (number, int(line[29:39]), line[39:54].strip())
            except ValueError:
                raise NachaError(f"line {number}: the amount (positions 30–39) is not digits") from None
        elif line[0] == "7" and line[1:3] == "99":
            if entry is None:
                raise NachaError(f"line {number}: a return addenda with no entry before it")
            code, trace = line[3:6], line[6:21]
            if not re.fullmatch(r"R\d\d", code) or not trace.isdigit():
                raise NachaError(f"line {number}: return reason {code!r} or original trace {trace!r} is not one")
            returns.append(Return(line=number, code=code, original_trace=trace, amount_cents=entry[1],
                                  individual_id=entry[2]))
            entry = None
        elif line[0] not in "1589":
            raise NachaError(f"line {number}: record type {line[0]!r} is not a NACHA record")
    return returns
