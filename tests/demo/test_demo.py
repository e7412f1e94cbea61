from collections import defaultdict
from datetime import date

import pytest
from django.db import transaction

from accounts.models import Account, Customer, Ownership
from core.errors import ApplicationError
from demo import village as demo_village
from demo.village import demo_accounts_create
from meters.models import Installation, Meter, Reading
from meters.units import size_inches

pytestmark = pytest.mark.django_db

AS_OF = date(2026, 11, 30)
# § 45.29 A: the months each pair of books is billed in; reads fall in the month before each.
BILL_MONTHS = {1: (2, 8), 2: (2, 8), 3: (3, 9), 4: (3, 9), 5: (4, 10), 6: (4, 10), 7: (5, 11), 8: (5, 11),
               9: (6, 12), 10: (6, 12)}


def readings_by_meter() -> dict[int, list[Reading]]:
    out = defaultdict(list)
    for reading in Reading.objects.order_by("meter_id", "read_on"):
        out[reading.meter_id].append(reading)
    return out


def snapshot() -> list[tuple]:
    """Everything a seed decides, without database ids (and without the random portal secrets)."""
    rows = []
    accounts = (Account.objects.select_related("owner", "occupant", "premises").order_by("account_no")
                .prefetch_related("installations__meter__readings", "ownerships__owner"))
    for a in accounts:
        meters = [(i.meter.serial, i.meter.size, i.meter.unit, i.meter.dials, i.installed_on,
                   [(r.read_on, r.value, r.read_type, r.source) for r in i.meter.readings.all()])
                  for i in a.installations.all()]
        rows.append((a.account_no, a.book, a.category, a.opened_on, a.paperless, a.sprinkler_supply_inches,
                     a.owner.name, a.owner.mailing_address, a.owner.email, a.occupant and a.occupant.name,
                     a.premises.service_address, a.premises.sbl, a.premises.use_category,
                     sorted((o.owner.name, o.started_on, o.ended_on) for o in a.ownerships.all()), meters))
    return rows


@pytest.fixture
def village(mineola):
    assert demo_accounts_create(count=400, as_of=AS_OF, seed=11) == 400


def test_every_account_is_complete(village):
    assert Account.objects.count() == 400
    assert Meter.objects.count() == Installation.objects.count() == 400
    assert Ownership.objects.filter(ended_on__isnull=True).count() == 400
    for account in Account.objects.prefetch_related("installations", "ownerships"):
        installation = account.installations.get()
        assert installation.installed_on == account.opened_on
        assert account.ownerships.get(ended_on__isnull=True).owner_id == account.owner_id
        assert account.account_no.startswith(f"{account.book}-")


def test_the_village_has_every_book_category_and_meter_kind(village):
    assert set(Account.objects.values_list("book", flat=True)) == set(range(1, 11))
    categories = list(Account.objects.values_list("category", flat=True))
    assert set(categories) == {"one_two_family", "other", "nonprofit"}
    assert 0.8 < categories.count("one_two_family") / len(categories) < 0.95
    sizes = list(Meter.objects.values_list("size", flat=True))
    assert {"5/8", "3/4"} <= set(sizes)
    assert 0 < sum(size_inches(s) > 1 for s in sizes) < 0.08 * len(sizes)
    assert Meter.objects.filter(unit="cf").exists()
    assert Account.objects.exclude(occupant=None).count() > 20
    assert Account.objects.exclude(sprinkler_supply_inches="").exists()
    assert set(Account.objects.exclude(sprinkler_supply_inches="").values_list(
        "sprinkler_supply_inches", flat=True)) <= {"2", "3", "4", "6", "8"}
    absentee = [a for a in Account.objects.select_related("owner", "premises")
                if not a.owner.mailing_address.startswith(a.premises.service_address)]
    assert absentee
    assert Customer.objects.filter(mailing_address__contains="Mineola, NY 11501").exists()


def test_readings_never_decrease_and_start_two_years_back(village):
    for meter_id, readings in readings_by_meter().items():
        values = [r.value for r in readings]
        assert values == sorted(values), meter_id
        assert readings[0].source == "install"
        assert (AS_OF - readings[0].read_on).days >= 730
        assert readings[-1].read_on <= AS_OF
        assert all(r.read_on.weekday() < 5 for r in readings)
    assert Reading.objects.filter(read_type="estimated").exists()
    assert Reading.objects.filter(read_type="estimated").count() < 0.05 * Reading.objects.count()


def test_reads_follow_the_book_calendar(village):
    by_meter = readings_by_meter()
    for inst in Installation.objects.select_related("meter", "account"):
        install, *reads = by_meter[inst.meter_id]
        assert (install.read_on.year, install.read_on.month) < (reads[0].read_on.year, reads[0].read_on.month)
        months = [(r.read_on.year, r.read_on.month) for r in reads]
        assert len(months) == len(set(months)), "one read per read window"
        if size_inches(inst.meter.size) > 1:
            assert len(reads) >= 23, "monthly meters are read every month"
        else:
            expected = {m - 1 for m in BILL_MONTHS[inst.account.book]}
            assert {m for _, m in months} == expected
            assert 3 <= len(reads) <= 4


def test_half_year_use_of_a_house_is_plausible(village):
    by_meter = readings_by_meter()
    uses = []
    for inst in Installation.objects.filter(account__category="one_two_family", meter__unit="gal"):
        reads = by_meter[inst.meter_id]
        uses += [b.value - a.value for a, b in zip(reads[1:], reads[2:], strict=False)
                 if b.read_type == a.read_type == "actual"]
    average = sum(uses) / len(uses)
    assert 40_000 < average < 90_000


def test_the_same_seed_gives_the_same_village(mineola):
    class Rollback(Exception):
        pass

    taken = []
    for _ in range(2):
        try:
            with transaction.atomic():
                demo_accounts_create(count=120, as_of=AS_OF, seed=5)
                taken.append(snapshot())
                raise Rollback
        except Rollback:
            pass
    assert taken[0] == taken[1]
    demo_accounts_create(count=120, as_of=AS_OF, seed=6)
    assert snapshot() != taken[0]


def test_a_second_call_adds_more_without_collisions(mineola):
    demo_accounts_create(count=150, as_of=AS_OF, seed=1)
    first = set(Account.objects.values_list("account_no", flat=True))
    demo_accounts_create(count=150, as_of=AS_OF, seed=1)
    assert Account.objects.count() == 300
    second = set(Account.objects.values_list("account_no", flat=True)) - first
    assert len(second) == 150

    def number(account_no: str) -> int:
        return int(account_no.split("-")[1])

    assert len({number(n) for n in first | second}) == 300
    assert min(map(number, second)) > max(map(number, first))
    assert Meter.objects.values("serial").distinct().count() == 300
    addresses = Account.objects.values_list("premises__service_address", flat=True)
    assert len(set(addresses)) == 300


def test_without_a_preset_the_demo_asks_for_one_first():
    with pytest.raises(ApplicationError, match="no preset is installed; run `manage.py setup_utility mineola` first"):
        demo_accounts_create(count=30, as_of=AS_OF, seed=2)
    assert not Reading.objects.exists()


def test_rows_are_written_in_bulk(mineola, monkeypatch, django_assert_max_num_queries):
    monkeypatch.setattr(demo_village, "CHUNK_ACCOUNTS", 50)
    # Per chunk: a serial check, seven bulk inserts and six history inserts, however many accounts (SQLite takes
    # the accounts' history in two inserts: 50 rows of it pass its 999 parameters a statement).
    with django_assert_max_num_queries(4 * 15 + 15):
        demo_accounts_create(count=200, as_of=AS_OF, seed=3)
    assert Account.objects.count() == 200


def test_a_meter_already_on_file_keeps_its_serial(mineola):
    from tests.factories import MeterFactory

    MeterFactory(serial="N00000003")
    MeterFactory(serial="S00000003")
    MeterFactory(serial="B00000003")
    MeterFactory(serial="I00000003")
    demo_accounts_create(count=5, as_of=AS_OF, seed=4)
    assert Meter.objects.count() == 9
    assert Meter.objects.filter(serial__endswith="00000003-1").count() == 1
