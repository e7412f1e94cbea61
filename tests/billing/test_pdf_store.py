"""A bill's PDF is rendered once: a render on demand is stored, with only the ``pdf`` column written, and one
file is kept however many requests render it at once."""

import threading
from datetime import date

import pytest
from django.db import connection, connections

from billing.models import Bill
from billing.services import bill_pdfs as pdf
from tests.billing.test_pdf import run, worked_example_account

pytestmark = pytest.mark.django_db


@pytest.fixture
def bill(mineola, media):
    worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    return Bill.objects.get()


def stored_files(media) -> list:
    return sorted(p.relative_to(media).as_posix() for p in media.rglob("*.pdf"))


def test_a_pdf_rendered_on_demand_is_stored_and_read_from_storage_after(bill, media, monkeypatch):
    issued = Bill.objects.filter(pk=bill.pk).values().get()
    rendered = pdf.bill_pdf_render(bill=bill)

    assert pdf.bill_pdf_bytes(bill=bill) == rendered

    bill.refresh_from_db()
    name = f"bills/2026/02/{bill.number}-{bill.public_id}.pdf"
    assert bill.pdf.name == name and stored_files(media) == [name]
    after = Bill.objects.filter(pk=bill.pk).values().get()
    assert {k: v for k, v in after.items() if k != "pdf"} == {k: v for k, v in issued.items() if k != "pdf"}
    monkeypatch.setattr(pdf, "bill_pdf_render", lambda **kwargs: pytest.fail("rendered again"))
    assert pdf.bill_pdf_bytes(bill=bill) == rendered
    assert pdf.bill_pdfs_store(bill_ids=[bill.pk]) == 0


def test_a_stored_pdf_whose_file_is_gone_is_rendered_and_stored_again(bill, media):
    assert pdf.bill_pdfs_store(bill_ids=[bill.pk]) == 1
    bill.refresh_from_db()
    (media / bill.pdf.name).unlink()

    assert pdf.bill_pdf_bytes(bill=bill) == pdf.bill_pdf_render(bill=bill)

    bill.refresh_from_db()
    assert stored_files(media) == [bill.pdf.name]
    assert bill.pdf.read() == pdf.bill_pdf_render(bill=bill)


def test_a_file_left_by_a_crashed_attempt_is_replaced_not_kept_beside(bill, media):
    name = f"bills/2026/02/{bill.number}-{bill.public_id}.pdf"
    (media / name).parent.mkdir(parents=True)
    (media / name).write_bytes(b"%PDF-half a file")

    pdf.bill_pdf_bytes(bill=bill)

    bill.refresh_from_db()
    assert bill.pdf.name == name and stored_files(media) == [name]
    assert bill.pdf.read() == pdf.bill_pdf_render(bill=bill)


def test_a_void_bill_is_rendered_but_not_stored(bill, media):
    from billing.services.adjustments import bill_void

    bill_void(bill=bill, reason="misread", as_of=date(2026, 2, 5), actor=None)
    bill.refresh_from_db()

    assert pdf.bill_pdf_bytes(bill=bill).startswith(b"%PDF-")

    bill.refresh_from_db()
    assert not bill.pdf and stored_files(media) == []


@pytest.mark.django_db(transaction=True)
@pytest.mark.postgres
def test_requests_rendering_one_bill_at_once_store_one_file(mineola, media):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no race to test")
    worked_example_account()
    run("run_billing", "--date", "2026-02-01")
    bill = Bill.objects.get()
    barrier, results, errors = threading.Barrier(4), [], []

    def download():
        try:
            mine = Bill.objects.get(pk=bill.pk)
            barrier.wait()
            results.append(pdf.bill_pdf_bytes(bill=mine))
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=download) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert not errors, errors
    bill.refresh_from_db()
    rendered = pdf.bill_pdf_render(bill=bill)
    assert results == [rendered] * 4
    assert stored_files(media) == [bill.pdf.name] and bill.pdf.read() == rendered
