"""Uploads with limits: a size cap, the first errors listed with a count of the rest, and a large file
imported by a worker (with a progress page) instead of inside the request — all or nothing as ever."""

import os
import time
from datetime import date
from io import StringIO

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from billing.models import Payment
from core.csvimport import ImportErrors, ImportRejected
from core.models import ImportJob
from core.services import import_job_start
from meters.models import Reading
from tests.billing.steps import account_with_meter, run
from tests.factories import clerk_user

pytestmark = pytest.mark.django_db

HEADER = "account_no,amount,paid_on,reference\n"


def table_counts() -> dict[str, int]:
    return {model._meta.label: model._default_manager.count() for model in apps.get_models()
            if model is not ImportJob}


def upload(content: str, name: str = "payments.csv") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content.encode(), "text/csv")


@pytest.fixture
def accounts(mineola):
    return [account_with_meter(book=1)[0] for _ in range(3)]


@pytest.fixture
def clerk(client, mineola):
    client.force_login(get_user_model().objects.create_superuser("clerk", "clerk@example.org", "pw-for-tests-9"))
    return client


def wrong_rows(count: int) -> str:
    """``count`` rows, each with one error (an account no one has)."""
    return "".join(f"9-{n:05d},12.50,2026-11-02,W-{n}\n" for n in range(count))


# --- the errors listed ---------------------------------------------------------------------------------

def test_the_kit_keeps_the_first_errors_in_file_order_and_counts_the_rest():
    errors = ImportErrors(columns=("a", "b"), listed=3)
    for line in (9, 4, 7, 2, 8, 3, 5):
        errors.add(line=line, field="b", message=f"b{line}")
    errors.add(line=4, field="a", message="a4")
    assert len(errors) == 8 and bool(errors)
    with pytest.raises(ImportRejected) as refused:
        errors.raise_if_any()
    assert [str(e) for e in refused.value.errors] == ["line 2: b: b2", "line 3: b: b3", "line 4: a: a4"]
    assert refused.value.unlisted == 5 and refused.value.lines == 7
    assert str(refused.value) == "file rejected: 8 error(s) on 7 line(s); nothing was saved"
    assert refused.value.as_dict()["errors_not_listed"] == 5


def test_the_command_lists_the_first_200_errors_and_counts_the_rest(tmp_path, accounts):
    path = tmp_path / "wrong.csv"
    path.write_text(HEADER + wrong_rows(250))
    err = StringIO()
    with pytest.raises(CommandError, match=r"rejected with 250 error\(s\) on 250 line\(s\); nothing was saved"):
        call_command("import_payments", str(path), "--date", "2026-11-30", stdout=StringIO(), stderr=err)
    listed = err.getvalue().splitlines()
    assert len(listed) == 201 and listed[0].startswith("line 2: account_no: unknown account '9-00000'")
    assert listed[199].startswith("line 201: ")
    assert listed[200] == "… and 50 more error(s) not listed (the first 200 are)"
    assert not Payment.objects.exists()


def test_the_api_lists_the_first_200_errors_and_counts_the_rest(accounts):
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    rows = [{"account_no": f"9-{n:05d}", "amount": "1.00", "paid_on": "2026-11-02", "reference": f"W-{n}"}
            for n in range(250)]
    response = api.post("/api/v1/payments/", rows, format="json")
    assert response.status_code == 400
    body = response.json()
    assert len(body["errors"]) == 200 and body["errors_not_listed"] == 50
    assert body["errors"][0] == {"field": "[0].account_no", "message": "unknown account '9-00000'"}
    # The request's own shape errors are capped the same way.
    response = api.post("/api/v1/payments/", [{}] * 100, format="json")
    assert response.status_code == 400
    assert len(response.json()["errors"]) == 200 and response.json()["errors_not_listed"] == 200
    assert not Payment.objects.exists()


def test_the_api_answers_a_request_too_large_in_json(accounts, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 10_000
    api = APIClient()
    api.force_authenticate(clerk_user("staff"))
    rows = [{"account_no": accounts[0].account_no, "amount": "1.00", "paid_on": "2026-11-02", "reference": f"R-{n}"}
            for n in range(200)]
    response = api.post("/api/v1/payments/", rows, format="json")
    assert response.status_code == 413
    assert response.json() == {"errors": [{"field": "", "message": "the request is larger than 10,000 bytes, the "
                                           "most one request may send; send the rows in smaller batches"}]}
    assert not Payment.objects.exists()


def test_the_upload_page_lists_the_first_200_errors_and_counts_the_rest(clerk, accounts):
    response = clerk.post(reverse("admin:billing_payment_import"),
                          {"file": upload(HEADER + wrong_rows(250)), "as_of": "2026-11-30"})
    page = response.content.decode()
    assert "The file was rejected and nothing was saved: 250 errors on 250 lines." in page
    assert page.count('<td class="line">') == 200
    assert "… and 50 more errors not listed: the first 200 are shown." in page
    assert not Payment.objects.exists()


# --- the size cap ----------------------------------------------------------------------------------------

def test_an_upload_over_the_cap_is_refused_before_it_is_read(clerk, accounts, settings):
    settings.IMPORT_MAX_UPLOAD_BYTES = 2000
    before = table_counts()
    content = HEADER + "".join(f"{accounts[0].account_no},1.00,2026-11-02,R-{n}\n" for n in range(100))
    response = clerk.post(reverse("admin:billing_payment_import"), {"file": upload(content), "as_of": "2026-11-30"})
    assert response.status_code == 200
    [message] = response.context["form"].errors["file"]
    size = len(content.encode())
    assert message == (f"payments.csv is {size:,} bytes ({size / 1024:.1f} KB); an upload may be at most 2,000 bytes "
                       "(2.0 KB). Split the file, or have it imported on the server with the import command.")
    assert table_counts() == before and not ImportJob.objects.exists()


def test_the_cap_is_20_mb_unless_set():
    from django.conf import settings

    assert settings.IMPORT_MAX_UPLOAD_BYTES == 20 * 1024 * 1024
    assert settings.IMPORT_BACKGROUND_BYTES == 1024 * 1024
    assert settings.IMPORT_ERRORS_LISTED == 200


# --- a large file goes to a worker -----------------------------------------------------------------------

def good_payments(accounts) -> str:
    return HEADER + "".join(f"{a.account_no},{10 + n}.00,2026-11-02,BIG-{n}\n" for n, a in enumerate(accounts))


def test_a_large_upload_is_imported_by_a_worker_and_shows_its_result(clerk, accounts, settings,
                                                                    django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 50
    with django_capture_on_commit_callbacks(execute=True):  # the task is sent when the job is saved
        response = clerk.post(reverse("admin:billing_payment_import"),
                              {"file": upload(good_payments(accounts)), "as_of": "2026-11-30"})
    job = ImportJob.objects.get()
    assert response.status_code == 302
    assert response.url == reverse("admin:billing_payment_import_job", args=[job.pk])
    assert (job.status, job.rows_total, job.rows_done, job.created, job.skipped) == ("done", 3, 3, 3, 0)
    assert job.created_by.username == "clerk" and job.file_name == "payments.csv" and not job.content
    page = clerk.get(response.url).content.decode()
    assert "Imported payments.csv: payments 3 created, 0 updated, 0 skipped (already recorded)." in page
    assert 'http-equiv="refresh"' not in page
    assert sorted(Payment.objects.values_list("reference", "source", "entered_by__username")) == [
        ("BIG-0", "import", "clerk"), ("BIG-1", "import", "clerk"), ("BIG-2", "import", "clerk")]


def test_a_large_upload_rejected_by_the_worker_saves_nothing_and_lists_the_errors(clerk, accounts, settings,
                                                                                 django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 50
    before = table_counts()
    with django_capture_on_commit_callbacks(execute=True):
        response = clerk.post(reverse("admin:billing_payment_import"),
                              {"file": upload(good_payments(accounts) + wrong_rows(250)), "as_of": "2026-11-30"})
    job = ImportJob.objects.get()
    assert (job.status, job.errors_total, job.error_lines, len(job.errors)) == ("rejected", 250, 250, 200)
    assert table_counts() == before
    page = clerk.get(response.url).content.decode()
    assert "The file was rejected and nothing was saved: 250 errors on 250 lines." in page
    assert page.count('<td class="line">') == 200 and "… and 50 more errors not listed" in page
    call_command("nightly", "--date", "2026-11-30", stdout=StringIO())


def test_the_job_page_refreshes_and_shows_progress_while_the_worker_imports(clerk, accounts):
    job = ImportJob.objects.create(importer="billing.services.payments.payments_import", noun="payments",
                                   file_name="big.csv", file_size=30_000_000, as_of=date(2026, 11, 30),
                                   status=ImportJob.Status.RUNNING, stage="checking payments", rows_total=400_000,
                                   rows_done=100_000)
    page = clerk.get(reverse("admin:billing_payment_import_job", args=[job.pk])).content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page
    assert 'max="100" value="25"' in page and "checking payments: 100,000 of 400,000 rows" in page
    # Another importer's job is not this page's.
    assert clerk.get(reverse("admin:meters_reading_import_job", args=[job.pk])).status_code == 404


def test_the_job_page_needs_the_import_permission(client, accounts):
    job = ImportJob.objects.create(importer="billing.services.payments.payments_import", noun="payments",
                                   file_name="big.csv", file_size=3, as_of=date(2026, 11, 30))
    viewer = get_user_model().objects.create_user("viewer", password="pw", is_staff=True)
    viewer.user_permissions.add(Permission.objects.get(codename="view_payment"))
    client.force_login(viewer)
    assert client.get(reverse("admin:billing_payment_import_job", args=[job.pk])).status_code == 403


def test_a_job_runs_once(accounts):
    job = import_job_start(importer="billing.services.payments.payments_import", noun="payments",
                           file=upload(good_payments(accounts)), as_of=date(2026, 11, 30), actor=None)
    from core.services import import_job_run

    import_job_run(job_id=job.pk)
    import_job_run(job_id=job.pk)  # a redelivered task finds the job done
    job.refresh_from_db()
    assert job.status == "done" and Payment.objects.count() == 3


def test_a_readings_file_goes_to_a_worker_too(clerk, mineola, settings, django_capture_on_commit_callbacks):
    settings.IMPORT_BACKGROUND_BYTES = 10
    _, meter = account_with_meter(book=1)
    with django_capture_on_commit_callbacks(execute=True):
        response = clerk.post(reverse("admin:meters_reading_import"), {
            "file": upload(f"meter_serial,read_date,reading\n{meter.serial},2026-01-12,1062500\n", "reads.csv"),
            "as_of": "2026-11-30"})
    assert response.url == reverse("admin:meters_reading_import_job", args=[ImportJob.objects.get().pk])
    assert Reading.objects.get(read_on=date(2026, 1, 12)).value == 1_062_500
    assert "1 bills issued" in run("run_billing", "--date", "2026-02-01")


@pytest.mark.skipif(not os.environ.get("REDIS_URL"),
                    reason="needs REDIS_URL (redis://127.0.0.1:6379/0): a real worker takes tasks from Redis")
@pytest.mark.celery_worker
def test_a_large_upload_is_imported_by_a_real_worker(transactional_db, celery_worker_process):
    call_command("setup_utility", "mineola", "--demo", "0", "--date", "2026-01-01", stdout=StringIO())
    accounts = [account_with_meter(book=1)[0] for _ in range(3)]
    job = import_job_start(importer="billing.services.payments.payments_import", noun="payments",
                           file=upload(good_payments(accounts)), as_of=date(2026, 11, 30), actor=None)
    deadline = time.monotonic() + 60
    while (job := ImportJob.objects.get(pk=job.pk)).status in ("queued", "running"):
        assert time.monotonic() < deadline, celery_worker_process.log_path.read_text()
        time.sleep(0.2)
    assert job.status == "done" and job.created == 3 and Payment.objects.count() == 3


def exploding_importer(*, file, as_of, actor, progress):
    raise RuntimeError("the disk is full")


def test_an_import_that_fails_is_recorded_and_said_on_its_page(clerk, accounts, caplog):
    job = import_job_start(importer="tests.core.test_import_jobs.exploding_importer", noun="payments",
                           file=upload(good_payments(accounts)), as_of=date(2026, 11, 30), actor=None)
    from core.services import import_job_run

    import_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert (job.status, job.failure, job.content) == ("failed", "RuntimeError: the disk is full", b"")
    assert "import job" in caplog.text and not Payment.objects.exists()
