"""The parallel run: the old system's bills of one period against our preview of the same period, nothing
issued (Mineola's sample rates, worked by hand).

Book 1 is billed 2026-02-01 from the readings of 2026-01-12 (§ 45.29 A, D): 10,000 gal → the $45.00 minimum;
30,000 gal → $45.00 + 10,000 × $3.10 = $76.00; 45,000 gal → $45.00 + 25,000 × $3.10 = $122.50; 62,500 gal →
$186.13 (docs/ordinances.md's worked example).
"""

import io
import json
from datetime import date
from decimal import Decimal as D

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from billing.models import Bill, RateSchedule
from conversion.parallel import legacy_bills_csv, our_bills, parallel_run
from tests.billing.steps import account_with_meter, read, run

pytestmark = [pytest.mark.django_db, pytest.mark.citation("§ 45.28 A(1)")]
FEB = date(2026, 2, 1)
TODAY = date(2026, 12, 3)


@pytest.fixture
def village(mineola):
    accounts = {}
    for number, gallons in (("1-0001", 10_000), ("1-0002", 30_000), ("1-0003", 62_500), ("1-0004", 45_000)):
        account, meter = account_with_meter(book=1, account_no=number)
        read(meter, date(2026, 1, 12), 1_000_000 + gallons)
        accounts[number] = account
    account_with_meter(book=1, account_no="1-0005")  # no reading in the window: we would not bill it
    return accounts


def legacy_file(tmp_path, text: str):
    path = tmp_path / "legacy.csv"
    path.write_text(text)
    return path


def convert(*args) -> str:
    out = io.StringIO()
    call_command("convert", *args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


def test_the_old_systems_bills_of_our_rates_are_all_identical(village, tmp_path):
    ours, why_not = our_bills(run_on=FEB, today=TODAY)
    assert {number: str(sum(kinds.values())) for number, kinds in ours.items()} == {
        "1-0001": "45.00", "1-0002": "76.00", "1-0003": "186.13", "1-0004": "122.50"}
    assert "1-0005" in why_not
    path = legacy_file(tmp_path, legacy_bills_csv(ours, bill_date=FEB))
    result = parallel_run(legacy=path, run_on=FEB, today=TODAY)
    assert (result.count("identical"), result.count("different"), result.not_identical) == (4, 0, [])
    assert result.legacy_total == result.our_total == D("429.63")
    assert not Bill.objects.exists()  # nothing issued
    out = convert("parallel", str(path), "--date", "2026-02-01")
    assert "4 identical, 0 different, 0 only in the old system, 0 only in ours (4 accounts)" in out
    assert "totals: old system $429.63, ours $429.63, difference $0.00" in out


def test_one_rate_changed_lists_the_accounts_and_the_line(village, tmp_path):
    """Our 20,001–50,000 gal block at $3.20 instead of the old system's $3.10: 1-0002 (10,000 gal in it) differs
    by $1.00, 1-0003 and 1-0004 (30,000 and 25,000 gal) by $3.00 and $2.50; 1-0001 (inside the minimum) does not."""
    path = legacy_file(tmp_path, legacy_bills_csv(our_bills(run_on=FEB, today=TODAY)[0], bill_date=FEB))
    schedule = RateSchedule.objects.get()
    rules = schedule.rules
    rules["per_bill"]["one_two_family"]["blocks"][0]["per_1000"] = "3.20"
    RateSchedule.objects.filter(pk=schedule.pk).update(rules=rules)
    result = parallel_run(legacy=path, run_on=FEB, today=TODAY)
    assert [(a.account_no, a.status, [(k.kind, str(k.legacy), str(k.ours), str(k.difference)) for k in a.kinds])
            for a in result.not_identical] == [
        ("1-0002", "different", [("water", "76.00", "77.00", "1.00")]),
        ("1-0003", "different", [("water", "186.13", "189.13", "3.00")]),
        ("1-0004", "different", [("water", "122.50", "125.00", "2.50")])]
    assert (result.count("identical"), result.our_total - result.legacy_total) == (1, D("6.50"))
    report = json.loads(convert("parallel", str(path), "--date", "2026-02-01", "--format", "json"))
    assert (report["identical"], report["different"], report["difference"]) == (1, 3, "6.50")
    assert report["differences"][0]["lines"] == [{"kind": "water", "legacy": "76.00", "ours": "77.00",
                                                  "difference": "1.00"}]
    text = convert("parallel", str(path), "--date", "2026-02-01")
    assert "1-0002: different, old system $76.00, ours $77.00" in text


def test_accounts_in_only_one_of_them_are_listed_with_why(village, tmp_path):
    ours = our_bills(run_on=FEB, today=TODAY)[0]
    del ours["1-0004"]  # the old system did not bill it
    ours["1-0005"] = {"water": D("45.00"), "fee": D("25.00")}  # the old system billed one we cannot
    result = parallel_run(legacy=legacy_file(tmp_path, legacy_bills_csv(ours, bill_date=FEB)), run_on=FEB,
                          today=TODAY)
    only = {a.account_no: (a.status, a.note) for a in result.not_identical}
    assert only["1-0004"] == ("only_ours", "")
    assert only["1-0005"][0] == "only_legacy" and only["1-0005"][1].startswith("not billed by us: ")
    assert [(k.kind, k.legacy, k.ours) for k in result.accounts[-1].kinds] == [("water", D("45.00"), None),
                                                                               ("fee", D("25.00"), None)]


@pytest.mark.citation("policy: bad input changes nothing")
def test_a_bad_legacy_file_is_refused_with_every_row_and_field(village, tmp_path):
    path = legacy_file(tmp_path, "account_no,bill_date,kind,amount\n"
                                 "1-0001,2026-02-01,water,45.00\n"
                                 "9-9999,2026-02-01,water,10.00\n"
                                 "1-0002,2026-02-01,penalty,3.00\n"
                                 "1-0003,2026-01-28,water,abc\n")
    err = io.StringIO()
    with pytest.raises(CommandError, match="refused: 4 error"):
        call_command("convert", "parallel", str(path), "--date", "2026-02-01", stdout=io.StringIO(), stderr=err)
    said = err.getvalue()
    assert "line 3: account_no: unknown account '9-9999'" in said
    assert "line 4: kind: 'penalty' is not a charge of a period's bill" in said
    assert "line 5: amount: 'abc' is not an amount" in said
    assert "line 5: bill_date: 2026-01-28 is another period than 2026-01-28" not in said
    assert "bill_date" in said and "a parallel run compares the bills of one period" in said
    assert not Bill.objects.exists()


def test_an_account_already_billed_is_compared_with_its_issued_bill(village, tmp_path):
    path = legacy_file(tmp_path, legacy_bills_csv(our_bills(run_on=FEB, today=TODAY)[0], bill_date=FEB))
    run("run_billing", "--date", "2026-02-01")
    result = parallel_run(legacy=path, run_on=FEB, today=TODAY)
    assert result.count("identical") == 4 and result.not_identical == []


def test_the_conversion_page_checks_and_compares_in_the_admin(village, tmp_path, client):
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.urls import reverse

    client.force_login(get_user_model().objects.create_superuser("root", "root@example.org", "x"))
    page = reverse("admin:conversion")
    assert page in client.get(reverse("admin:index")).content.decode()
    legacy = legacy_bills_csv(our_bills(run_on=FEB, today=TODAY)[0], bill_date=FEB).replace(
        "1-0002,2026-02-01,water,76.00", "1-0002,2026-02-01,water,75.00")
    shown = client.post(page, {"form": "parallel", "parallel-bill_date": "2026-02-01",
                               "parallel-legacy": SimpleUploadedFile("legacy.csv", legacy.encode())})
    html = shown.content.decode()
    assert shown.status_code == 200
    assert "3 identical, 1 different, 0 only in the old system, 0 only in ours" in html
    assert "<td>1-0002</td><td>different</td><td>water</td>" in html and "$1.00" in html
    bad = client.post(page, {"form": "check", "check-file": SimpleUploadedFile(
        "open.csv", b"account_no,bill_no,bill_date,due_date,kind,amount,description\n9-9,L,2026-02-01,2026-03-01,"
                    b"water,1.00,\n")})
    assert "unknown account &#x27;9-9&#x27;" in bad.content.decode() and bad.status_code == 200
    good = client.post(page, {"form": "check", "check-file": SimpleUploadedFile(
        "open.csv", b"account_no,bill_no,bill_date,due_date,kind,amount,description\n1-0001,L,2026-02-01,2026-03-01,"
                    b"water,186.13,\n")})
    assert "Control totals: no problems in 1 rows" in good.content.decode()
    assert not Bill.objects.exists()
