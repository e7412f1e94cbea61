"""Loose ends a review found: each refused with a message naming the field and the rule, never a traceback."""

import io
from datetime import date
from decimal import Decimal as D

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.expressions import ExpressionError, names
from billing.ledger.posting import Posting, PostingConflict, ledger_post, ledger_post_many
from billing.models import LedgerEntry, Payment
from billing.owrs import OwrsError, parse
from core.errors import ApplicationError
from tests.billing.steps import account_with_meter

pytestmark = pytest.mark.citation("policy: bad input changes nothing")


@pytest.mark.django_db
def test_the_same_source_posted_with_another_amount_is_refused_not_answered_with_the_old_row(mineola):
    account, _ = account_with_meter(book=1)
    first = ledger_post(Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 1), amount=D("10.00"),
                                source="adjustment:999", citation="policy"))
    # The same facts again: the same row (a retry).
    assert ledger_post(Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 1), amount=D("10.00"),
                               source="adjustment:999", citation="policy")) == first
    with pytest.raises(PostingConflict, match=r"adjustment:999 \(debit\) is already posted with amount 10.00"):
        ledger_post(Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 1), amount=D("12.00"),
                            source="adjustment:999", citation="policy"))
    with pytest.raises(PostingConflict, match="posted_on"):
        ledger_post(Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 2), amount=D("10.00"),
                            source="adjustment:999", citation="policy"))
    with pytest.raises(PostingConflict, match="already posted with amount 10.00"):
        ledger_post_many([Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 1), amount=D("11.00"),
                                  source="adjustment:999", citation="policy")])
    assert LedgerEntry.objects.filter(source="adjustment:999").count() == 1


@pytest.mark.django_db
def test_a_citation_longer_than_a_ledger_row_keeps_is_refused_never_cut_short(mineola):
    account, _ = account_with_meter(book=1)
    long = "§ 45.29 E; " + "x" * 80
    for post in (ledger_post, lambda p: ledger_post_many([p])):
        with pytest.raises(ApplicationError, match="a citation is never cut short"):
            post(Posting(account_id=account.pk, kind="debit", posted_on=date(2026, 2, 1), amount=D("1.00"),
                         source="adjustment:1000", citation=long))
    assert not LedgerEntry.objects.filter(source="adjustment:1000").exists()


@pytest.mark.parametrize("formula", ["(" * 5000 + "usage" + ")" * 5000, "-" * 5000 + "usage",
                                     " + ".join(["usage"] * 3000)])
def test_a_formula_nested_too_deeply_is_refused_naming_the_limit(formula):
    with pytest.raises(ExpressionError, match="nests more than 100 levels deep"):
        names(formula)


def test_an_owrs_file_nested_too_deeply_is_refused_not_a_recursion_error():
    with pytest.raises(OwrsError, match="nests lists or mappings more deeply"):
        parse("metadata: " + "[" * 5000 + "]" * 5000)
    deep_formula = ("metadata: {}\nrate_structure:\n  residential:\n    commodity_charge: \"" + "(" * 3000
                    + "usage_ccf" + ")" * 3000 + "\"\n")
    with pytest.raises(OwrsError):
        parse(deep_formula)


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["../../etc/passwd", "/tmp/evil", "Mineola", "mineola/../mineola", ""])
def test_setup_utility_refuses_a_preset_outside_the_presets_folder(code):
    with pytest.raises(CommandError, match="unknown preset"):
        call_command("setup_utility", code, "--date", "2026-01-01", stdout=io.StringIO())


@pytest.mark.django_db
def test_setup_utility_refuses_an_incomplete_preset_naming_what_it_lacks(tmp_path, settings, monkeypatch):
    from ordinance import files as presets

    text = (presets.PRESET_DIR / "lansing.toml").read_text()
    (tmp_path / "broken.toml").write_text(text.replace('office_address = "Village of Lansing\\nTompkins County, New '
                                                       'York"\n', ""))
    (tmp_path / "nopenalty.toml").write_text(text.replace("[penalty]", "[not_penalty]"))
    monkeypatch.setattr(presets, "PRESET_DIR", tmp_path)
    with pytest.raises(CommandError, match=r"broken.toml cannot be installed: \[utility\] needs office_address"):
        call_command("setup_utility", "broken", "--date", "2026-01-01", stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"\[not_penalty\] is not a table any part of the product reads.*"
                                           r"\[penalty\] is missing"):
        call_command("setup_utility", "nopenalty", "--date", "2026-01-01", stdout=io.StringIO())


@pytest.mark.django_db
def test_a_trailing_tab_in_an_account_number_is_refused_not_stripped_and_posted(mineola, tmp_path):
    account, _ = account_with_meter(book=1)
    path = tmp_path / "payments.csv"
    path.write_text(f"account_no,amount,paid_on,reference\n{account.account_no}\t,10.00,2026-05-01,CHK-9\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="rejected with 1 error"):
        call_command("import_payments", str(path), "--date", "2026-05-10", stdout=io.StringIO(), stderr=err)
    assert "line 2: account_no: contains a control character (U+0009, a tab)" in err.getvalue()
    assert not Payment.objects.exists()
