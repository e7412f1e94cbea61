"""A NUL character (``\\x00``) in a request or an imported file is refused naming where, never a 500.

PostgreSQL refuses NUL in text where SQLite stores it; the refusal is made before any query, so both
backends answer the same.
"""

import io
from datetime import date

import pytest
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from billing.models import Payment
from tests.billing.steps import account_with_meter, read, run

pytestmark = pytest.mark.django_db

NUL_MESSAGE = "contains a NUL character (\\x00), which is not allowed"


@pytest.fixture
def account(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account


@pytest.fixture
def root(mineola) -> Client:
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    return client


@pytest.mark.parametrize("url,field", [
    ("/admin/accounts/account/?q=%00", "q"),
    ("/admin/billing/payment/?source__exact=%00", "source__exact"),
    ("/admin/billing/bill/?account__account_no=1%00", "account__account_no"),
    ("/admin/accounts/account/1%00/change/", "object_id"),
])
def test_admin_pages_refuse_a_nul_with_a_400_naming_where(root, url, field):
    response = root.get(url)
    assert response.status_code == 400
    assert response.content.decode() == f"{field}: {NUL_MESSAGE}"


def test_portal_pages_refuse_a_nul_in_the_query(mineola):
    assert Client().get("/portal/login/?next=%00").status_code == 400
    assert Client().post("/portal/login/", {"username": "a\x00@example.org", "password": "x"}).status_code == 200


def _upload(text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("payments.csv", text.encode(), "text/csv")


def test_a_csv_upload_with_a_nul_is_refused_naming_the_line_and_column(root, account):
    account_no = account.account_no
    response = root.post(reverse("admin:billing_payment_import"), {
        "file": _upload(f"account_no,amount,paid_on,reference\n{account_no},1.00,2026-05-01,A-1\n"
                        f"{account_no},1.00,2026-05-01,A\x002\n"),
        "as_of": "2026-05-10"})
    # The admin's upload page answers a rejected file as it answers every rejected file: the page again,
    # listing each bad line.
    assert response.status_code == 200
    page = response.content.decode()
    assert "nothing was saved: 1 error on 1 line" in page
    assert '<td class="line">3</td><td>reference</td><td>contains a NUL character' in page
    assert not Payment.objects.exists()


def test_import_command_refuses_a_file_with_a_nul(account, tmp_path):
    path = tmp_path / "payments.csv"
    path.write_text(f"account_no,amount,paid_on,reference\n{account.account_no}\x00,1.00,2026-05-01,A-1\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 1 error"):
        call_command("import_payments", str(path), "--date", "2026-05-10", stderr=err)
    assert err.getvalue().startswith("line 2: account_no: contains a NUL character")
    assert not Payment.objects.exists()
