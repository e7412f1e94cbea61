"""One office: the customer hears of what happened to their money, once, in their language — a returned check,
an autopay debit returned and autopay stopped, a disputed payment, a termination case reopened by a reversal.
With no e-mail address the notice is kept as paper, and the clerk prints it from the admin."""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core import mail
from django.core.management import call_command
from django.urls import reverse

from billing.services.payments import payment_post
from billing.services.reversals import payment_reverse
from notices.models import CustomerNotice
from ordinance.models import Utility
from remittance.autopay import ach_export
from remittance.models import AutopayDebit
from tests.factories import clerk_user
from tests.portal.conftest import billed_account
from tests.remittance.test_autopay import DUE, noticed, returns_file
from tests.termination.steps import delinquent_account, served_case

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: customer notices")]


def returned_check(account, capture, *, reference="CHK-9"):
    with capture(execute=True):
        payment = payment_post(account_no=account.account_no, amount=Decimal("186.13"), paid_on=date(2026, 2, 20),
                               reference=reference)
    from billing.models import Payment

    payment = Payment.objects.get(reference=reference)
    with capture(execute=True):
        return payment_reverse(payment=payment, reversed_on=date(2026, 2, 25), reason="returned",
                               note="NSF notice from the bank", actor=None)


def test_a_returned_check_tells_the_owner_once_in_their_language(mineola, media, django_capture_on_commit_callbacks):
    Utility.objects.update(returned_payment_fee=Decimal("20.00"))
    account = billed_account()
    account.language = "es"
    account.save()
    account.owner.email = "dueno@example.org"
    account.owner.save()
    reversal = returned_check(account, django_capture_on_commit_callbacks)
    (email,) = mail.outbox
    assert email.to == ["dueno@example.org"]
    assert email.subject == f"Su pago fue devuelto: cuenta de agua {account.account_no}"
    assert "$186.13" in email.body and "su banco devolvió el cheque sin pagar" in email.body
    assert "Cargo por pago devuelto: $20.00" in email.body
    notice = CustomerNotice.objects.get()
    assert (notice.kind, notice.channel, notice.language, notice.fact) == (
        "payment_returned", "email", "es", f"reversal:{reversal.pk}")
    assert notice.sent_at is not None
    # The same fact delivered again (a retried task, a replayed signal) tells no one again.
    from notices.receivers import on_payment_reversed

    on_payment_reversed(None, reversal_id=reversal.pk, account_id=account.pk, reason="returned")
    assert len(mail.outbox) == 1 and CustomerNotice.objects.count() == 1


def test_an_autopay_debit_returned_tells_the_customer_it_came_back_and_that_autopay_stopped(
        enrolled, tmp_path, django_capture_on_commit_callbacks):
    account, client, url = enrolled
    noticed(account)
    ach_export(on=DUE)
    path = tmp_path / "returns.txt"
    path.write_text(returns_file(AutopayDebit.objects.get(), "R03"))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        call_command("ach_returns", str(path), "--date", "2026-03-05", stdout=io.StringIO())
    subjects = sorted(m.subject for m in mail.outbox)
    assert subjects == [f"Autopay is stopped: water account {account.account_no}",
                        f"Your payment was returned: water account {account.account_no}"]
    stopped = next(m for m in mail.outbox if m.subject.startswith("Autopay"))
    assert stopped.to[0] == "pat@example.org" and "R03" in stopped.body and "Please pay your bills another way" \
        in stopped.body
    # With the notice before the debit: each logged on the account.
    assert sorted(CustomerNotice.objects.filter(account=account).values_list("kind", flat=True)) == [
        "autopay_scheduled", "autopay_suspended", "payment_returned"]


def test_with_no_address_the_notice_is_paper_and_the_clerk_prints_it(mineola, media, client,
                                                                     django_capture_on_commit_callbacks):
    account = billed_account()
    account.owner.email = ""  # no address on file, and no one linked online
    account.owner.save()
    returned_check(account, django_capture_on_commit_callbacks)
    assert mail.outbox == []
    notice = CustomerNotice.objects.get()
    assert notice.channel == "paper" and notice.sent_at is None
    assert notice.sent_to.startswith(account.owner.name)
    client.force_login(clerk_user())
    listing = client.get(reverse("admin:notices_customernotice_changelist"))
    assert listing.status_code == 200 and account.account_no in listing.content.decode()
    printed = client.post(reverse("admin:notices_customernotice_changelist"),
                          {"action": "print_paper", "_selected_action": [notice.pk]})
    assert printed["Content-Type"] == "application/pdf" and printed.content.startswith(b"%PDF")
    notice.refresh_from_db()
    assert notice.sent_at is not None


def test_a_case_reopened_by_a_returned_check_is_told(mineola, django_capture_on_commit_callbacks):
    account, _ = delinquent_account()
    account.owner.email = "owner@example.org"
    account.owner.save()
    number = served_case(account)
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=Decimal("186.13"), paid_on=date(2026, 4, 5),
                     reference="CHK-1")
    from billing.models import Payment

    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="CHK-1"), reversed_on=date(2026, 4, 9),
                        reason="returned", note="NSF", actor=None)
    kinds = sorted(CustomerNotice.objects.values_list("kind", flat=True))
    assert kinds == ["case_reopened", "payment_returned"]
    reopened = next(m for m in mail.outbox if "past due again" in m.subject)
    assert f"termination case {number} is open again" in reopened.body


def test_a_refund_or_a_payment_entered_in_error_tells_no_one(mineola, media, django_capture_on_commit_callbacks):
    account = billed_account()
    account.owner.email = "owner@example.org"
    account.owner.save()
    with django_capture_on_commit_callbacks(execute=True):
        payment_post(account_no=account.account_no, amount=Decimal("10.00"), paid_on=date(2026, 2, 20),
                     reference="OOPS")
    from billing.models import Payment

    with django_capture_on_commit_callbacks(execute=True):
        payment_reverse(payment=Payment.objects.get(reference="OOPS"), reversed_on=date(2026, 2, 21),
                        reason="error", note="typed twice", actor=None)
    assert not CustomerNotice.objects.exists() and mail.outbox == []


def test_the_portal_marks_a_returned_payment_beside_it(mineola, media, django_capture_on_commit_callbacks):
    from django.test import Client

    from accounts.models import PortalLink
    from tests.portal.conftest import customer

    account = billed_account()
    returned_check(account, django_capture_on_commit_callbacks)
    user = customer("pat@example.org")
    PortalLink.objects.create(user=user, account=account)
    client = Client()
    client.force_login(user, backend="django.contrib.auth.backends.ModelBackend")
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert '<tr class="payment-off">' in page and "<del>$186.13</del>" in page
    row = page[page.index("payment-off"):][:400]
    assert "<strong>Returned unpaid on Feb 25, 2026</strong>" in row, row


def test_an_autopay_debit_is_scheduled_until_it_settles_and_its_receipt_waits_for_that_day(
        enrolled, django_capture_on_commit_callbacks):
    from core.banking_days import next_banking_day
    from core.clock import today
    from remittance.services import autopay_receipts_settled

    account, client, url = enrolled
    noticed(account)
    settle = next_banking_day(next_banking_day(today()))
    mail.outbox.clear()
    with django_capture_on_commit_callbacks(execute=True):
        ach_export(on=today(), settle=settle)
    assert not [m for m in mail.outbox if m.subject.startswith("Receipt")]  # no receipt before the money is real
    page = client.get(reverse("portal:account", kwargs={"public_id": account.public_id})).content.decode()
    assert "Scheduled: taken from your bank on" in page
    assert autopay_receipts_settled(as_of=today()) == {"autopay_receipts": 0}
    assert autopay_receipts_settled(as_of=settle) == {"autopay_receipts": 1}  # the nightly step, that day
    assert autopay_receipts_settled(as_of=settle) == {"autopay_receipts": 0}  # once
    (receipt,) = [m for m in mail.outbox if m.subject.startswith("Receipt")]
    assert receipt.to == ["pat@example.org"]


def test_a_plan_defaulted_by_the_nightly_review_is_told_once(mineola, django_capture_on_commit_callbacks):
    from arrears.services import plan_create, plans_review

    account, _ = delinquent_account(occupant=False)
    account.owner.email = "owner@example.org"
    account.owner.save()
    plan = plan_create(account=account, total=Decimal("186.13"), down_payment=Decimal("36.13"),
                       down_due_on=date(2026, 4, 30), installments=3, first_due_on=date(2026, 5, 15),
                       as_of=date(2026, 4, 22))
    with django_capture_on_commit_callbacks(execute=True):
        assert plans_review(as_of=date(2026, 5, 12)) == {"defaulted": 1, "completed": 0}  # no down payment
    (email,) = mail.outbox
    assert email.subject == f"Your payment plan has ended: water account {account.account_no}"
    assert f"payment plan {plan.number} was not paid in time" in email.body and "$186.13" in email.body
    with django_capture_on_commit_callbacks(execute=True):
        plans_review(as_of=date(2026, 5, 13))  # the night after: defaulted already, nothing more
    assert len(mail.outbox) == 1 and CustomerNotice.objects.get().kind == "plan_defaulted"


def test_paper_notices_print_in_zip_order_as_the_bills_do(mineola, media, client, django_capture_on_commit_callbacks,
                                                         tmp_path):
    """The mail house takes the notices as it takes the bills' print file: sorted by the ZIP code of the address."""
    import shutil
    import subprocess

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) is not installed")
    first, second = billed_account(), billed_account()
    for account, address in ((first, "9 Elm St\nNew York NY 10001"), (second, "1 Main St\nMineola NY 11501")):
        account.owner.email, account.owner.mailing_address = "", address
        account.owner.save()
    returned_check(first, django_capture_on_commit_callbacks, reference="CHK-1")
    returned_check(second, django_capture_on_commit_callbacks, reference="CHK-2")
    client.force_login(clerk_user())
    printed = client.post(reverse("admin:notices_customernotice_changelist"),
                          {"action": "print_paper", "_selected_action": list(
                              CustomerNotice.objects.values_list("pk", flat=True))})
    (tmp_path / "n.pdf").write_bytes(printed.content)
    text = subprocess.run(["pdftotext", "-layout", str(tmp_path / "n.pdf"), "-"], capture_output=True, text=True,
                          check=True).stdout
    # The notice of 10001 first, though the other was written last (the list shows the newest first).
    assert text.index(f"account {first.account_no}.") < text.index(f"account {second.account_no}.")
    assert CustomerNotice.objects.filter(sent_at__isnull=True).count() == 0
