"""Autopay by ACH debit: enrolment from the portal (routing number by its ABA check digit; the bank account number
sealed; the authorization kept), the notice before the debit, the NACHA debit file checked field by field against
the format's rules, the bank's returns (payment reversed with its R-code, the returned-payment fee charged,
autopay suspended after a closed or unauthorized account), and no bank account number in clear anywhere.

The account is docs/ordinances.md's Mineola example: billed $186.13 on 2026-02-01, due March 1 (§ 45.29 D).
"""

import io
import logging
from datetime import date, datetime, time
from decimal import Decimal

import pytest
from django.apps import apps
from django.core import mail
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import models
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import PortalLink
from billing.models import LedgerEntry, PendingCharge
from billing.selectors import account_amounts_due
from core.errors import ApplicationError
from ordinance.models import Utility
from remittance.autopay import ach_export, ach_returns, autopay_notices_send
from remittance.models import AutopayDebit, AutopayEnrolment, AutopayNotice
from remittance.nacha import aba_valid
from tests.portal.conftest import billed_account, customer
from tests.remittance.conftest import BANK_ACCOUNT, ROUTING

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: autopay")]
DUE = date(2026, 3, 1)


def test_routing_numbers_are_checked_by_their_aba_check_digit():
    assert aba_valid("011000015") and aba_valid("021000021") and aba_valid("122105278")
    assert not aba_valid("011000016") and not aba_valid("12345678") and not aba_valid("01100001X")


def test_enrolment_refuses_a_bad_routing_number_and_keeps_the_authorization(mineola, media, bank):
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    url = reverse("remittance:autopay", kwargs={"public_id": account.public_id})
    page = client.get(url).content.decode()
    assert "I authorize" in page and "Set up autopay" in page
    bad = client.post(url, {"action": "enrol", "holder_name": "Pat Payer", "routing_number": "011000016",
                            "account_number": BANK_ACCOUNT, "account_number_again": BANK_ACCOUNT,
                            "account_type": "checking", "email": "pat@example.org", "agree": "on"})
    assert bad.status_code == 400 and "the ABA check digit" in bad.content.decode()
    unagreed = client.post(url, {"action": "enrol", "holder_name": "Pat Payer", "routing_number": ROUTING,
                                 "account_number": BANK_ACCOUNT, "account_number_again": BANK_ACCOUNT,
                                 "account_type": "checking", "email": "pat@example.org"})
    assert unagreed.status_code == 400 and not AutopayEnrolment.objects.exists()


def test_the_enrolment_keeps_the_number_sealed_and_the_authorization_as_given(enrolled):
    account, client, url = enrolled
    enrolment = AutopayEnrolment.objects.get()
    assert (enrolment.status, enrolment.account_last4, enrolment.routing_number) == ("active", "6789", ROUTING)
    assert BANK_ACCOUNT not in enrolment.account_number_sealed
    assert str(enrolment.authorized_from) == "203.0.113.9" and enrolment.authorized_by.email == "pat@example.org"
    assert "checking account ending 6789" in enrolment.authorization and account.account_no in enrolment.authorization
    page = client.get(url).content.decode()
    assert "Autopay is on" in page and "ending 6789" in page and BANK_ACCOUNT not in page


def test_the_notice_before_the_debit_is_emailed_once_per_bill(enrolled):
    account, _, _ = enrolled
    bill = account.bills.get()
    assert autopay_notices_send([bill.pk]) == 1 and autopay_notices_send([bill.pk]) == 0
    (notice,) = [m for m in mail.outbox if "Autopay" in m.subject]
    # March 1, 2026 is a Sunday: the debit settles on the next banking day, as the notice says.
    assert "On March 2, 2026 we will debit $186.13" in notice.body and "ending 6789" in notice.body


def noticed(account) -> None:
    """The bill's notice before the debit, sent on the bill's day (when the run that issued it sends it)."""
    bill = account.bills.get()
    autopay_notices_send([bill.pk])
    AutopayNotice.objects.filter(bill=bill).update(sent_at=timezone.make_aware(datetime.combine(bill.bill_date,
                                                                                                 time(18))))


def check_nacha(text: str, *, company_id: str, odfi: str) -> list[tuple[str, str, int, str]]:
    """Every NACHA rule the bank checks of a PPD debit file; returns the entries (code, routing, cents, trace)."""
    lines = text.split("\n")
    assert lines[-1] == "" and all(len(line) == 94 for line in lines[:-1]), "every record is 94 characters"
    records = lines[:-1]
    assert len(records) % 10 == 0, "blocking factor 10"
    types = "".join(r[0] for r in records)
    body = types.rstrip("9")
    padding = len(types) - len(body) - 1
    assert body[0] == "1" and body[1] == "5" and set(body[2:-1]) <= {"6"} and body[-1] == "8"
    assert types[len(body)] == "9", "the file control follows the batch control"
    assert all(r == "9" * 94 for r in records[len(body) + 1:]) and padding >= 0
    header, batch = records[0], records[1]
    assert header[1:3] == "01" and header[3] == " " and aba_valid(header[4:13]) and header[4:13] == odfi
    assert header[13:23] == company_id
    datetime.strptime(header[23:29], "%y%m%d") and datetime.strptime(header[29:33], "%H%M")
    assert header[33].isalnum() and header[34:37] == "094" and header[37:39] == "10" and header[39] == "1"
    assert batch[1:4] == "225" and batch[40:50] == company_id and batch[50:53] == "PPD"
    assert batch[53:63].strip() and datetime.strptime(batch[69:75], "%y%m%d")
    assert batch[75:78] == "   " and batch[78] == "1" and batch[79:87] == odfi[:8] and batch[87:94] == "0000001"
    entries, entry_hash, total, traces = [], 0, 0, []
    for record in records[2:len(body) - 1]:
        if record[0] != "6":
            continue
        code, rdfi, check = record[1:3], record[3:11], record[11]
        assert code in ("27", "37"), "debits of checking (27) or savings (37)"
        assert aba_valid(rdfi + check), "the receiving bank's routing number and its check digit"
        assert record[12:29].strip() and record[12:29] == record[12:29].rstrip().ljust(17), "account left-justified"
        assert record[29:39].isdigit() and int(record[29:39]) > 0
        assert record[39:54].strip() and record[54:76].strip() and record[78] == "0"
        trace = record[79:94]
        assert trace.isdigit() and trace[:8] == odfi[:8]
        traces.append(trace)
        entries.append((code, rdfi + check, int(record[29:39]), trace))
        entry_hash += int(rdfi)
        total += int(record[29:39])
    assert traces == sorted(traces) and len(set(traces)) == len(traces), "trace numbers ascending and unique"
    control, file_control = records[len(body) - 1], records[len(body)]
    assert control[0] == "8" and control[1:4] == "225" and int(control[4:10]) == len(entries)
    assert control[10:20] == str(entry_hash)[-10:].zfill(10), "entry hash: the routing numbers' sum, last 10 digits"
    assert int(control[20:32]) == total and int(control[32:44]) == 0
    assert control[44:54] == company_id and control[54:79].strip() == "" and control[79:87] == odfi[:8]
    assert control[87:94] == "0000001"
    assert int(file_control[1:7]) == 1 and int(file_control[7:13]) == len(records) // 10
    assert int(file_control[13:21]) == len(entries) and file_control[21:31] == control[10:20]
    assert int(file_control[31:43]) == total and int(file_control[43:55]) == 0 and not file_control[55:].strip()
    return entries


def test_the_debit_file_keeps_every_nacha_rule_and_each_debit_posts_once(enrolled,
                                                                        django_capture_on_commit_callbacks):
    account, _, _ = enrolled
    other = billed_account()  # not enrolled: never debited
    assert ach_export(on=DUE).file is None  # no notice went out: nothing is debited
    noticed(account)
    assert ach_export(on=date(2026, 2, 20)).file is None  # nothing due yet
    with django_capture_on_commit_callbacks(execute=True):  # the receipt follows the commit
        exported = ach_export(on=DUE)
    (receipt,) = [m for m in mail.outbox if m.subject.startswith("Receipt")]
    assert receipt.to == ["pat@example.org"] and "$186.13" in receipt.body
    assert "autopay, from your bank account ending 6789" in receipt.body
    entries = check_nacha(exported.text, company_id="1234567890", odfi="021000021")
    assert entries == [("27", ROUTING, 18613, exported.file.debits.get().trace_number)]
    assert BANK_ACCOUNT in exported.text  # the bank needs it; the database does not keep the file
    debit = AutopayDebit.objects.get()
    assert (debit.payment.tender, debit.payment.paid_on, debit.payment.amount.amount) == ("ach", DUE,
                                                                                        Decimal("186.13"))
    assert account_amounts_due(account_ids=[account.pk], as_of=DUE)[account.pk].amount == Decimal("0.00")
    assert ach_export(on=DUE).file is None  # a second file that day debits nothing again
    assert not AutopayDebit.objects.filter(account=other).exists()
    assert (exported.file.entries, exported.file.total.amount, exported.file.modifier) == (1, Decimal("186.13"), "A")


def returns_file(debit: AutopayDebit, code: str, *, trace: str | None = None) -> str:
    """What the bank sends back: the returned entry (26: a returned checking debit) and its addenda (type 99)."""
    trace = trace or debit.trace_number
    records = ["101 021000021" + "1234567890" + "2603051200A094101" + "FIRST VILLAGE BANK".ljust(23)
               + "MINEOLA WATER".ljust(23) + " " * 8,
               "5225MINEOLA WATER   " + " " * 20 + "1234567890PPDRETURN    " + "260305260305   1021000020000001",
               "626" + ROUTING + BANK_ACCOUNT.ljust(17) + f"{int(debit.amount.amount * 100):010d}"
               + debit.account.account_no.ljust(15) + "PAT PAYER".ljust(22) + "  1" + "021000020000001",
               "799" + code + trace + " " * 6 + ROUTING[:8] + " " * 44 + "021000020000001",
               "8225000002" + f"{int(ROUTING[:8]):010d}" + f"{int(debit.amount.amount * 100):012d}" + "0" * 12 + "1234567890"
               + " " * 25 + "02100002" + "0000001",
               "900000100000100000002" + f"{int(ROUTING[:8]):010d}" + f"{int(debit.amount.amount * 100):012d}" + "0" * 12 + " " * 39]
    records += ["9" * 94] * (10 - len(records))
    assert all(len(r) == 94 for r in records), [len(r) for r in records]
    return "\n".join(records) + "\n"


def test_a_return_reverses_the_payment_charges_the_fee_and_a_closed_account_suspends_autopay(enrolled, tmp_path):
    account, client, url = enrolled
    Utility.objects.update(returned_payment_fee=Decimal("20.00"))  # office policy: Chapter 45 sets no such fee
    noticed(account)
    ach_export(on=DUE)
    debit = AutopayDebit.objects.get()
    path = tmp_path / "returns.txt"
    path.write_text(returns_file(debit, "R02"))
    out = io.StringIO()
    call_command("ach_returns", str(path), "--date", "2026-03-05", stdout=out)
    assert "1 debit(s) returned and reversed, 1 returned-payment fee(s) charged, 1 autopay enrolment(s) suspended" \
        in out.getvalue()
    debit.refresh_from_db()
    reversal = debit.payment.reversal
    assert (reversal.reason, reversal.reversed_on, debit.returned_code) == ("debit_returned", date(2026, 3, 5), "R02")
    assert reversal.note.startswith("R02: account closed")
    fee = PendingCharge.objects.get(account=account)
    assert (fee.amount.amount, fee.citation, fee.description) == (Decimal("20.00"), "policy",
                                                                  "Returned payment fee (office policy)")
    assert AutopayEnrolment.objects.get().status == "suspended"
    assert "Autopay is suspended" in client.get(url).content.decode()
    # The same file again applies nothing more; a trace number of no debit refuses the file, naming its line.
    call_command("ach_returns", str(path), "--date", "2026-03-05", stdout=out)
    assert "1 already applied" in out.getvalue() and PendingCharge.objects.count() == 1
    path.write_text(returns_file(debit, "R01", trace="021000029999999"))
    err = io.StringIO()
    with pytest.raises(CommandError, match="nothing was applied"):
        call_command("ach_returns", str(path), stdout=io.StringIO(), stderr=err)
    assert "line 4: trace_number: 021000029999999 is the trace number of no debit of ours" in err.getvalue()
    # The account owes the bill again (and the fee on its next bill).
    owed = sum(e.amount.amount for e in LedgerEntry.objects.filter(account=account))
    assert owed == Decimal("186.13")


def test_insufficient_funds_leaves_autopay_on_and_no_fee_without_one(enrolled):
    noticed(enrolled[0])
    ach_export(on=DUE)
    debit = AutopayDebit.objects.get()
    applied = ach_returns(returns_file(debit, "R01"), as_of=date(2026, 3, 4))
    assert (applied.reversed, applied.fees, applied.suspended) == (1, 0, 0)  # the office set no fee (0.00)
    assert AutopayEnrolment.objects.get().status == "active"


def test_a_file_that_is_not_nacha_is_refused(enrolled):
    with pytest.raises(ApplicationError, match="line 1: not a NACHA file"):
        ach_returns("account_no,amount\n1-0001,5.00\n", as_of=date(2026, 3, 4))


def test_no_bank_account_number_in_clear_in_the_database_pages_emails_or_logs(enrolled, caplog, tmp_path):
    caplog.set_level(logging.DEBUG)
    account, client, url = enrolled
    noticed(account)
    out = tmp_path / "ach.txt"
    call_command("ach_export", "--date", DUE.isoformat(), "--out", str(out), stdout=io.StringIO(),
                 stderr=io.StringIO())
    assert BANK_ACCOUNT in out.read_text()
    ach_returns(returns_file(AutopayDebit.objects.get(), "R01"), as_of=date(2026, 3, 4))
    for model in apps.get_models():
        text_fields = [f.attname for f in model._meta.concrete_fields
                       if isinstance(f, models.CharField | models.TextField | models.JSONField)]
        for row in model.objects.values_list(*text_fields) if text_fields else ():
            assert not any(BANK_ACCOUNT in str(value) for value in row), model._meta.label
    pages = [client.get(url), client.get(reverse("portal:account", kwargs={"public_id": account.public_id}))]
    assert not any(BANK_ACCOUNT in page.content.decode() for page in pages)
    assert not any(BANK_ACCOUNT in m.body or BANK_ACCOUNT in m.subject for m in mail.outbox)
    assert BANK_ACCOUNT not in caplog.text


def test_the_export_is_refused_without_the_banks_settings(enrolled, settings):
    settings.ACH_ODFI_ROUTING = ""
    with pytest.raises(CommandError, match="ach_odfi_routing: ACH_ODFI_ROUTING is not set"):
        call_command("ach_export", "--date", DUE.isoformat(), stdout=io.StringIO(), stderr=io.StringIO())


def test_without_a_key_autopay_is_not_offered(mineola, media, settings):
    settings.BANK_ACCOUNT_KEY = ""
    account = billed_account()
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    assert "Autopay:" not in client.get(reverse("portal:account", kwargs={"public_id": account.public_id})) \
        .content.decode()
    page = client.get(reverse("remittance:autopay", kwargs={"public_id": account.public_id})).content.decode()
    assert "Autopay is not offered here yet" in page


def test_the_presets_own_returned_check_fee_comes_before_office_policy(db):
    """South Farmingdale's schedule has a returned-check charge (§ 3.7, a sample amount on file with the District):
    it is charged with its section; the office's policy amount is for chapters that have none."""
    from billing.services.returned import returned_payment_fee_charge
    from tests.factories import AccountFactory

    call_command("setup_utility", "south_farmingdale", "--demo", "0", "--date", "2026-01-01", stdout=io.StringIO())
    Utility.objects.update(returned_payment_fee=Decimal("35.00"))  # not used: the preset has its own
    charge = returned_payment_fee_charge(account=AccountFactory(), as_of=date(2026, 3, 4), what="R01")
    assert (charge.code, charge.amount.amount, charge.citation) == ("returned_check", Decimal("20.00"), "§ 3.7")
