"""The one ledger writer: only ``billing.ledger.posting`` creates ledger rows; every row names its source, and a
source is posted once per kind however often a job is retried."""

import ast
from datetime import date
from decimal import Decimal as D
from pathlib import Path

import pytest
from django.conf import settings
from django.db import IntegrityError, transaction

from billing.ledger.posting import Posting, bill_source, charge_source, ledger_post, ledger_post_many
from billing.models import Bill, LedgerEntry, Payment
from billing.services.payments import payment_post
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter, pay, read, run

pytestmark = pytest.mark.django_db

WRITER = Path("billing/ledger/posting.py")
APPS = ("core", "accounts", "meters", "billing", "termination", "backflow", "portal", "reports", "demo",
        "waterbilling", "scripts")


def _writes_ledger_rows(tree: ast.AST) -> list[int]:
    """Lines that build a ``LedgerEntry`` or write its table: the class called, or passed to a bulk writer."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id == "LedgerEntry":
                found.append(node.lineno)
            elif isinstance(func, ast.Attribute) and func.attr in ("create", "bulk_create", "get_or_create",
                                                                   "update_or_create"):
                owner = func.value
                if (isinstance(owner, ast.Attribute) and owner.attr == "objects"
                        and isinstance(owner.value, ast.Name) and owner.value.id == "LedgerEntry"):
                    found.append(node.lineno)
            elif (getattr(func, "id", getattr(func, "attr", "")) == "copy_rows"
                  and any(isinstance(arg, ast.Name) and arg.id == "LedgerEntry" for arg in node.args)):
                found.append(node.lineno)
    return found


def test_only_the_ledger_writer_creates_ledger_rows():
    root = Path(settings.BASE_DIR)
    offenders = []
    for app in APPS:
        for path in sorted((root / app).rglob("*.py")) if (root / app).exists() else []:
            relative = path.relative_to(root)
            if "migrations" in relative.parts or relative == WRITER:
                continue
            lines = _writes_ledger_rows(ast.parse(path.read_text(), filename=str(path)))
            offenders += [f"{relative}:{line}" for line in lines]
    assert offenders == [], "ledger rows are written only by billing/ledger/posting.py"


def test_the_check_finds_a_hand_written_row():
    """The check above would catch each way of writing a row by hand."""
    source = ("LedgerEntry(kind='fee')\nLedgerEntry.objects.create(kind='fee')\n"
              "LedgerEntry.objects.bulk_create([])\ncopy_rows(LedgerEntry, [], [])\n")
    assert _writes_ledger_rows(ast.parse(source)) == [1, 2, 3, 4]


def _billed(mineola):
    account, meter = account_with_meter(book=1)
    read(meter, date(2026, 1, 12), 1_062_500)
    run("run_billing", "--date", "2026-02-01")
    return account, Bill.objects.get()


def test_posting_a_source_again_returns_the_row_already_posted(mineola):
    account, bill = _billed(mineola)
    fee = Posting(account_id=account.pk, kind="fee", posted_on=date(2026, 2, 1), amount=D("50.00"),
                  source=charge_source(1), bill_id=bill.pk, citation="§ 45.28 A(3)", description="Connect charge")
    first = ledger_post(fee)
    assert ledger_post(fee) == first
    assert ledger_post_many([fee]) == 0
    assert LedgerEntry.objects.filter(source=charge_source(1)).count() == 1


def test_several_fees_and_fines_sit_on_one_bill(mineola):
    account, bill = _billed(mineola)
    ledger_post_many([
        Posting(account_id=account.pk, kind=kind, posted_on=date(2026, 2, 1), amount=D(amount),
                source=charge_source(n), bill_id=bill.pk)
        for n, (kind, amount) in enumerate([("fee", "50.00"), ("fee", "25.00"), ("fine", "100.00")], start=1)])
    assert sorted((e.kind, e.amount.amount) for e in bill.ledger.exclude(kind="water")) == [
        ("fee", D("25.00")), ("fee", D("50.00")), ("fine", D("100.00"))]


def test_the_database_refuses_a_second_row_for_a_source_and_kind(mineola):
    account, bill = _billed(mineola)
    water = bill.ledger.get(kind="water")
    assert water.source == bill_source(bill.pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        LedgerEntry.objects.bulk_create([Posting(
            account_id=account.pk, kind="water", posted_on=date(2026, 2, 1), amount=D("1.00"),
            source=bill_source(bill.pk), bill_id=bill.pk).entry()])


def test_every_row_names_its_source(mineola):
    account, bill = _billed(mineola)
    pay(account, "100.00", "2026-03-15", "CHK-1")
    run("assess_penalties", "--date", "2026-04-02")
    sources = dict(LedgerEntry.objects.values_list("kind", "source").order_by("id").distinct())
    payment = Payment.objects.get()
    assert sources["water"] == f"bill:{bill.pk}"
    assert sources["payment"] == f"payment:{payment.pk}"
    assert sources["penalty"].startswith(f"bill:{bill.pk}@2026-")


def test_one_payment_posts_through_the_same_checks_as_a_batch(mineola):
    account, _ = _billed(mineola)
    result = payment_post(account_no=account.account_no, amount=D("20.00"), paid_on=date(2026, 2, 10),
                          reference="CNT-1", source="counter")
    assert (result.created, result.skipped) == (1, 0)
    assert payment_post(account_no=account.account_no, amount=D("20.00"), paid_on=date(2026, 2, 10),
                        reference="cnt-1").skipped == 1  # the same payment again, retyped
    with pytest.raises(ApplicationError) as refused:
        payment_post(account_no="no-such", amount=D("-1"), paid_on=date(2999, 1, 1), reference="CNT-2")
    assert {e.field for e in refused.value.errors} == {"account_no", "amount", "paid_on"}
    assert Payment.objects.count() == 1
