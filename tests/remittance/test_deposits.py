"""The bank's BAI2 report read through the ``bai2`` library, and a day's deposits reconciled with the payments
posted, channel by channel: the lockbox (its exceptions too), an autopay debit file settling, the counter's cash,
and the processor's payout (its charges matched to our online payments, less its fees) — with each difference and
each credit that belongs to no channel."""

import io
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from cryptography.fernet import Fernet
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse

from accounts.models import PortalLink
from billing.models import Payment
from billing.services.payments import payment_post
from demo.bank_files import bai2_report
from remittance.autopay import ach_export, autopay_enrol
from remittance.bank import deposits_reconcile
from remittance.bank_report import bai2_import
from remittance.configured import processor_configured
from remittance.lockbox import lockbox_import
from remittance.models import BankDeposit, OnlinePayment
from tests.portal.conftest import billed_account, customer
from tests.remittance.test_autopay import noticed

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: deposits reconciliation")]
DAY = date(2026, 3, 2)


@pytest.fixture
def day(mineola, media, standin, settings):
    settings.BANK_ACCOUNT_KEY = Fernet.generate_key().decode()
    settings.ACH_ODFI_ROUTING, settings.ACH_ODFI_NAME, settings.ACH_COMPANY_ID = "021000021", "Bank", "1234567890"
    lockboxed, debited, counter = billed_account(), billed_account(), billed_account()
    stub = f"{lockboxed.account_no}  {lockboxed.bills.get().number}  0000018613  0000019544"
    lockbox_import(file=("deposit_date,batch,item,amount,check_number,scan_line\n"
                         f"{DAY},1,1,186.13,501,{stub}\n{DAY},1,2,40.00,502,\n").encode(), as_of=DAY)
    autopay_enrol(account=debited, holder_name="Pat", routing="011000015", account_number="000123456789",
                  account_type="checking", email="pat@example.org", agreed=True)
    noticed(debited)
    ach_export(on=date(2026, 2, 27), settle=DAY)  # made on the Friday to settle on the Monday
    payment_post(account_no=counter.account_no, amount=Decimal("50.00"), paid_on=DAY, reference="CTR-1",
                 source="counter", tender="cash")
    user = customer("c@example.org")
    PortalLink.objects.create(user=user, account=counter)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    client.post(reverse("remittance:pay_linked", kwargs={"public_id": counter.public_id}), {"amount": "100.00"})
    online = OnlinePayment.objects.get()
    paid = standin.complete(online.checkout_id, created=int(datetime(2026, 3, 1, 15, tzinfo=UTC).timestamp()))
    Client().post("/pay/webhook/stripe/", paid, content_type="application/json",
                  HTTP_STRIPE_SIGNATURE=standin.signed(paid))
    assert Payment.objects.filter(tender="online").exists()
    standin.payout([online.checkout_id], arrival=int(datetime(2026, 3, 2, tzinfo=UTC).timestamp()), fee_cents=320)
    return standin


def test_each_channel_is_reconciled_to_the_cent_and_what_is_not_ours_is_listed(day, tmp_path):
    report = tmp_path / "bai2.txt"
    report.write_text(bai2_report(DAY, [("115", 22613, "LBX1", "LOCKBOX 1"), ("165", 18613, "ACH1", "MINEOLA WATER"),
                                        ("301", 4500, "DEP1", "COUNTER"), ("165", 9680, "PO1", "STRIPE TRANSFER"),
                                        ("195", 100000, "WIRE1", "INCOMING WIRE")]))
    out = io.StringIO()
    call_command("import_bai2", str(report), stdout=out)
    assert "5 credit(s) added" in out.getvalue()
    call_command("import_bai2", str(report), stdout=out)
    assert "0 credit(s) added, 5 already read" in out.getvalue() and BankDeposit.objects.count() == 5
    result = deposits_reconcile(on=DAY, processor=processor_configured())
    lines = {line.channel: (line.expected, line.deposited, line.difference) for line in result.lines}
    assert lines["lockbox"] == (Decimal("226.13"), Decimal("226.13"), Decimal("0.00"))  # $40.00 of it queued
    assert lines["autopay"] == (Decimal("186.13"), Decimal("186.13"), Decimal("0.00"))
    assert lines["counter"] == (Decimal("50.00"), Decimal("45.00"), Decimal("-5.00"))  # $5.00 short at the bank
    assert lines["processor"] == (Decimal("96.80"), Decimal("96.80"), Decimal("0.00"))  # $100.00 less $3.20 fees
    assert [(d.type_code, d.amount.amount) for d in result.unmatched] == [("195", Decimal("1000.00"))]
    assert not result.matches
    text = io.StringIO()
    call_command("reconcile_deposits", "--date", DAY.isoformat(), stdout=text)
    assert "Counter: the cash and checks taken that day: expected $50.00, deposited $45.00  difference −$5.00" \
        in text.getvalue()
    assert "not ours to match: 195" in text.getvalue()


def test_a_report_whose_totals_do_not_add_up_is_refused(day, tmp_path):
    report = tmp_path / "bad.txt"
    report.write_text(bai2_report(DAY, [("115", 22613, "LBX1", "LOCKBOX")]).replace("49,22613", "49,22600"))
    with pytest.raises(CommandError, match=r"line 5: control_total: the account trailer gives the control total as "
                                           r"\$226.00 but its records add up to \$226.13"):
        call_command("import_bai2", str(report), stdout=io.StringIO())
    assert not BankDeposit.objects.exists()
    assert bai2_import(bai2_report(DAY, [])).added == 0


def test_the_admin_page_shows_the_days_reconciliation(day, admin_client):
    bai2_import(bai2_report(DAY, [("115", 22613, "LBX1", "LOCKBOX 1"), ("301", 5000, "DEP1", "COUNTER")]))
    page = admin_client.get(reverse("admin:deposits"), {"on": DAY.isoformat()}).content.decode()
    assert "Lockbox: the checks read that day" in page and "$226.13" in page
    assert "Autopay: the debit files settling that day" in page and 'class="r off">−$186.13' in page
