"""Usage alerts from the readings imported: use 4× the account's own (the bill hold's rule and factor), use on a
vacant account, none on an occupied one; to the clerk's list, and to the customer where they chose it."""

import io
from datetime import date
from decimal import Decimal

import pytest
from django.core import mail
from django.core.management import call_command

from accounts.models import Account
from meters.models import UsageAlert
from notices.models import CustomerNotice, NoticePreference
from tests.billing.steps import account_with_meter, read

pytestmark = pytest.mark.django_db


def metered(account_no: str, *, status=Account.Status.ACTIVE):
    account, meter = account_with_meter(book=1, account_no=account_no, start=date(2025, 4, 1), value=1_000_000)
    account.status = status
    account.owner.email = f"{account_no}@example.com"
    account.owner.save()
    account.save()
    # A year at 9,000 gal a quarter (about 98 gal/day).
    for day, value in ((date(2025, 7, 1), 1_009_000), (date(2025, 10, 1), 1_018_000), (date(2026, 1, 1), 1_027_000)):
        read(meter, day, value)
    return account, meter


@pytest.fixture
def import_readings(tmp_path, django_capture_on_commit_callbacks):
    """Import readings as the clerk does; what follows their commit (the alerts, the notices) runs too."""
    def imported(rows: list[str], on: str = "2026-04-02"):
        path = tmp_path / "readings.csv"
        path.write_text("meter_serial,read_date,reading,read_type\n" + "\n".join(rows) + "\n")
        with django_capture_on_commit_callbacks(execute=True):
            call_command("import_readings", str(path), "--date", on, stdout=io.StringIO())
    return imported


def test_a_reading_four_times_the_accounts_average_alerts_the_clerk_and_the_customer(mineola, import_readings):
    account, meter = metered("1-0001")
    usual, usual_meter = metered("1-0002")
    # 36,000 gal in 90 days: 400 gal/day, over 4 × 98; the other account as usual.
    import_readings([f"{meter.serial},2026-04-01,1063000,actual",
                               f"{usual_meter.serial},2026-04-01,1036000,actual"])
    alert = UsageAlert.objects.get()
    assert (alert.account, alert.kind) == (account, UsageAlert.Kind.HIGH)
    assert "36,000 gal in 90 days (400 gal/day) is over 4× the average of 98 gal/day over the year before" in alert.detail
    notice = CustomerNotice.objects.get(kind=CustomerNotice.Kind.USAGE_ALERT)
    assert notice.account == account and "please check for a leak" in notice.body
    assert mail.outbox[-1].to == ["1-0001@example.com"]
    # Imported again, nothing new: the readings are there already.
    import_readings([f"{meter.serial},2026-04-01,1063000,actual"])
    assert UsageAlert.objects.count() == 1 and CustomerNotice.objects.count() == 1


def test_use_on_a_vacant_account_and_none_on_an_occupied_one(mineola, import_readings):
    vacant, vacant_meter = metered("1-0001", status=Account.Status.VACANT)
    still, still_meter = metered("1-0002")
    import_readings([f"{vacant_meter.serial},2026-04-01,1028000,actual",
                               f"{still_meter.serial},2026-04-01,1027000,actual"])
    kinds = dict(UsageAlert.objects.values_list("account__account_no", "kind"))
    assert kinds == {"1-0001": "vacant", "1-0002": "none"}


def test_a_customer_who_turned_usage_alerts_off_is_not_told_but_the_clerk_is(mineola, import_readings):
    account, meter = metered("1-0001")
    NoticePreference.objects.create(account=account, kinds_off=["usage_alert"])
    import_readings([f"{meter.serial},2026-04-01,1063000,actual"])
    assert UsageAlert.objects.filter(account=account).exists()
    assert not CustomerNotice.objects.exists()


def test_the_clerk_marks_an_alert_looked_at(mineola, import_readings, client):
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group

    from accounts.roles import roles_install

    account, meter = metered("1-0001")
    import_readings([f"{meter.serial},2026-04-01,1063000,actual"])
    roles_install()
    clerk = get_user_model().objects.create_user("clerk", is_staff=True)
    clerk.groups.add(Group.objects.get(name="Clerk"))
    client.force_login(clerk)
    page = client.get("/admin/meters/usagealert/")
    assert page.status_code == 200 and "1-0001" in page.content.decode()
    alert = UsageAlert.objects.get()
    client.post("/admin/meters/usagealert/", {"action": "mark_looked_at", "_selected_action": [alert.pk]})
    alert.refresh_from_db()
    assert alert.resolved_at and alert.resolved_by == clerk


def test_summer_use_is_compared_with_last_summer_not_with_the_winter(mineola, import_readings):
    """Summer sprinkling is several times a winter day, but not several times last summer's: no alert. Twice last
    summer's at a 1.5× factor is one, saying it was compared with the same days last year."""
    from ordinance.models import Utility

    account, meter = account_with_meter(book=1, account_no="1-0001", start=date(2025, 1, 2), value=1_000_000)
    account.owner.email = "1-0001@example.com"
    account.owner.save()
    # Last year: 9,000 gal in the winter quarter, 36,000 gal in the summer one (Jan 2 → Apr 1 → Jul 1 → Oct 1 → Jan 1).
    for day, value in ((date(2025, 4, 1), 1_009_000), (date(2025, 7, 1), 1_045_000), (date(2025, 10, 1), 1_054_000),
                       (date(2026, 1, 1), 1_063_000), (date(2026, 4, 1), 1_072_000)):
        read(meter, day, value)
    Utility.objects.update(high_usage_factor="1.5")
    # This summer as last: 36,000 gal, 4× the year's average day, but last summer's to the gallon.
    import_readings([f"{meter.serial},2026-07-01,1108000,actual"], on="2026-07-02")
    assert not UsageAlert.objects.exists()
    import_readings([f"{meter.serial},2026-10-01,1126000,actual"], on="2026-10-02")  # 18,000: twice last fall's
    alert = UsageAlert.objects.get()
    assert (alert.compared_with, alert.usual_per_day) == ("last_year", Decimal("97.8"))
    assert alert.detail == ("18,000 gal in 92 days (196 gal/day) is over 1.5× the average of 98 gal/day over the same "
                            "period last year")


def test_the_customer_reads_the_figures_in_spanish(mineola, import_readings):
    account, meter = metered("1-0001")
    account.language = "es"
    account.save()
    import_readings([f"{meter.serial},2026-04-01,1063000,actual"])
    alert = UsageAlert.objects.get()
    assert (alert.gallons, alert.days, alert.usual_per_day, alert.compared_with) == (36_000, 90, Decimal("98.2"),
                                                                                      "year")
    notice = CustomerNotice.objects.get(kind=CustomerNotice.Kind.USAGE_ALERT)
    assert notice.language == "es"
    assert "36,000 galones en 90 días (400 al día); su promedio del año anterior: 98 al día" in notice.body
    assert "gal in" not in notice.body
