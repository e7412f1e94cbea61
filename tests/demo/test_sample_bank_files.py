"""A demo or training site's sample bank files, downloaded as the clerk from the pages that read them and read back
there: the lockbox file posts its stubs' checks and queues the one with no stub; the BAI2 report keeps the lockbox
deposit and posts the bill-pay credit to the account it names. A real site offers no samples."""

from datetime import date

import pytest
from django.urls import reverse

from billing.models import Payment
from core.clock import today
from ordinance.models import Utility
from remittance.models import BankDeposit, PaymentException
from tests.billing.steps import account_with_meter, read, run
from tests.office.conftest import staff
from tests.termination.steps import delinquent_account

pytestmark = [pytest.mark.django_db, pytest.mark.citation("policy: demo")]


def test_the_clerk_downloads_each_sample_from_its_page_and_reads_it_there(client, mineola):
    Utility.objects.update(is_demo_site=True)
    accounts = four_billed()
    client.force_login(staff("clara", "Clerk"))
    lockbox_page = client.get(reverse("admin:remittance_paymentexception_import")).content.decode()
    url = reverse("admin:demo_sample", args=["lockbox"])
    assert f'href="{url}"' in lockbox_page
    sample = client.get(url)
    assert sample["Content-Disposition"] == 'attachment; filename="lockbox-sample.csv"'
    text = sample.content.decode()
    assert text.splitlines()[0] == "deposit_date,batch,item,amount,check_number,scan_line"
    assert len(text.splitlines()) == 5 and all(a.account_no in text for a in accounts[:3])
    read = client.post(reverse("admin:remittance_paymentexception_import"),
                       {"file": _upload("lockbox-sample.csv", sample.content), "as_of": today().isoformat()},
                       follow=True)
    assert read.status_code == 200 and "Imported lockbox-sample.csv" in read.content.decode()
    assert Payment.objects.filter(account__in=accounts[:3]).count() == 3
    assert PaymentException.objects.count() == 1
    bai2_page = client.get(reverse("admin:remittance_bankdeposit_import")).content.decode()
    bai2 = client.get(reverse("admin:demo_sample", args=["bai2"]))
    assert reverse("admin:demo_sample", args=["bai2"]) in bai2_page and bai2.status_code == 200
    done = client.post(reverse("admin:remittance_bankdeposit_import"),
                       {"file": _upload("bai2-sample.txt", bai2.content)}, follow=True)
    assert done.status_code == 200 and BankDeposit.objects.count() == 2
    assert Payment.objects.filter(account=accounts[3], source="billpay").exists()
    # No returns file: the demo's autopay made none here.
    assert client.get(reverse("admin:demo_sample", args=["returns"])).status_code == 404


def test_a_real_site_offers_no_sample_and_a_role_that_does_not_read_the_file_gets_none(client, mineola):
    delinquent_account(occupant=False)
    Utility.objects.update(is_demo_site=False)
    client.force_login(staff("clara", "Clerk"))
    assert "sample-file" not in client.get(reverse("admin:remittance_paymentexception_import")).content.decode()
    assert client.get(reverse("admin:demo_sample", args=["lockbox"])).status_code == 404
    Utility.objects.update(is_demo_site=True)
    client.force_login(staff("olga", "Hearing officer"))
    assert client.get(reverse("admin:demo_sample", args=["lockbox"])).status_code == 403


def four_billed() -> list:
    """Four of Mineola's worked bills ($186.13 billed 2026-02-01), in one billing run."""
    accounts = []
    for _ in range(4):
        account, meter = account_with_meter(book=1)
        read(meter, date(2026, 1, 12), 1_062_500)
        accounts.append(account)
    run("run_billing", "--date", "2026-02-01")
    return accounts


def _upload(name: str, content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content)
