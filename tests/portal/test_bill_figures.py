"""A bill's money box is worked out once and kept (``billing.figures``): the paperless e-mail prints the PDF's
figures to the cent, and reads them instead of replaying the account's ledger."""

import re
from dataclasses import replace
from datetime import date
from decimal import Decimal

import pytest
from django.core import mail
from django.db import IntegrityError, transaction

from billing import figures
from billing.documents.bill import bill_views
from billing.models import Bill, BillFigures
from billing.selectors import bill_summaries
from billing.services import bill_pdfs
from meters.models import Reading
from portal.notify import bills_issued_notify
from tests.billing.test_pdf import needs_poppler, run, text_of, worked_example_account
from tests.factories import CustomerFactory
from tests.portal.conftest import pay

pytestmark = pytest.mark.django_db


def second_bill() -> Bill:
    """tests/billing/test_pdf.py's worked example (docs/ordinances.md, Mineola): bill 1 of $186.13 unpaid, its
    penalties, $100 paid, then bill 2 of 2026-08-01 — $147.88 due, $102.88 of it past due, $151.85 if late."""
    account, meter = worked_example_account(owner=CustomerFactory(email="kim@example.org"))
    account.paperless = True
    account.save()
    run("run_billing", "--date", "2026-02-01")
    run("assess_penalties", "--date", "2026-07-31")
    pay(account, "100.00", "2026-07-20", "CHK-1", as_of=date(2026, 7, 31))
    Reading.objects.create(meter=meter, read_on=date(2026, 7, 15), value=1_082_500)
    run("run_billing", "--date", "2026-08-01")
    return Bill.objects.get(bill_date=date(2026, 8, 1))


def emailed_amounts(body: str) -> list[str]:
    """The money box's amounts in the e-mail, in order (each row is "label: $amount")."""
    return re.findall(r"^  .*?: (−?\$[\d,]+\.\d\d)$", body, flags=re.MULTILINE)


@needs_poppler
def test_the_emailed_money_box_is_the_pdfs_to_the_cent(mineola, media):
    bill = second_bill()
    mail.outbox.clear()
    assert bills_issued_notify([bill.pk]) == 1
    view, = bill_views(bill_ids=[bill.pk])
    pdf_amounts = [amount for _, amount in view.summary] + [view.total_due, view.past_due, view.late_total]
    assert pdf_amounts == ["$186.13", "−$100.00", "$16.75", "$45.00", "$147.88", "$102.88", "$151.85"]
    assert emailed_amounts(mail.outbox[0].body) == pdf_amounts
    text = text_of(bill_pdfs.bill_pdf_bytes(bill=bill))
    assert all(amount in text for amount in pdf_amounts)


def test_the_email_reads_the_kept_figures_and_replays_nothing(mineola, media, monkeypatch):
    bill = second_bill()
    bill_pdfs.bill_pdfs_store(bill_ids=[bill.pk])  # the worker renders the PDF as the bill is issued
    kept = BillFigures.objects.get(bill=bill)
    assert (kept.total_due, kept.past_due, kept.late_total) == (Decimal("147.88"), Decimal("102.88"),
                                                                Decimal("151.85"))

    def replayed(**kwargs):
        raise AssertionError("the ledger was replayed")

    monkeypatch.setattr(figures, "bill_summaries", replayed)
    mail.outbox.clear()
    assert bills_issued_notify([bill.pk]) == 1
    assert "TOTAL AMOUNT DUE by September 1, 2026: $147.88" in mail.outbox[0].body


def test_whoever_asks_first_keeps_the_figures_the_replay_gives(mineola, media):
    bill = second_bill()
    assert not BillFigures.objects.exists()
    assert bills_issued_notify([bill.pk]) == 1  # the e-mail came first: it works them out and keeps them
    replay = bill_summaries(bills=[bill])[bill.pk]
    assert figures.bill_figures(bills=[bill])[bill.pk] == replay
    assert BillFigures.objects.count() == 1
    # A payment recorded after the bill was issued changes neither the bill nor its kept figures.
    pay(bill.account, "147.88", "2026-08-20", "CHK-2", as_of=date(2026, 8, 20))
    assert figures.bill_figures(bills=[bill])[bill.pk] == replay == bill_summaries(bills=[bill])[bill.pk]


def test_with_the_fast_paths_off_every_figure_is_replayed(mineola, media, settings):
    bill = second_bill()
    replay = figures.bill_figures(bills=[bill])[bill.pk]
    # A kept row the replay would not give (moved by hand, adding up still) is read while the fast paths are on…
    BillFigures.objects.filter(bill=bill).update(previous_balance=Decimal("186.14"), total_due=Decimal("147.89"))
    assert figures.bill_figures(bills=[bill])[bill.pk] == replace(replay, previous_balance=Decimal("186.14"),
                                                                  total_due=Decimal("147.89"))
    settings.BILLING_FAST_PATHS = False  # …and never with them off
    assert figures.bill_figures(bills=[bill])[bill.pk] == replay


def test_kept_figures_must_add_up(mineola):
    bill = second_bill()
    row = figures.bill_figures(bills=[bill])[bill.pk]
    BillFigures.objects.all().delete()
    with pytest.raises(IntegrityError), transaction.atomic():
        BillFigures.objects.create(bill=bill, **{name: getattr(row, name) for name in figures.FIELDS
                                                 if name != "total_due"}, total_due=row.total_due + Decimal("0.01"))
