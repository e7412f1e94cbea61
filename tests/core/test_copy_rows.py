"""``core.db.copy_rows``: rows streamed to COPY a chunk at a time arrive whole, in order, quoted as written."""

import pytest
from django.db import connection

from accounts.models import Customer
from core.db import _CsvStream, copy_rows

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def needs_postgres():
    if connection.vendor != "postgresql":
        pytest.skip("COPY is PostgreSQL's (set DATABASE_URL); elsewhere the callers use bulk_create")


def test_a_generator_of_several_chunks_is_written_whole():
    count = 2 * _CsvStream.CHUNK + 7
    rows = ((f"Owner {n}", f"{n} Main Street\nMineola, NY 11501", "", f'"{n}", ext. 2') for n in range(count))
    copy_rows(Customer, ("name", "mailing_address", "email", "phone"), rows)
    assert Customer.objects.count() == count
    last = Customer.objects.get(name=f"Owner {count - 1}")
    assert (last.mailing_address, last.email, last.phone) == (f"{count - 1} Main Street\nMineola, NY 11501", "",
                                                              f'"{count - 1}", ext. 2')


def test_no_rows_write_nothing():
    copy_rows(Customer, ("name", "mailing_address", "email", "phone"), iter(()))
    copy_rows(Customer, ("name", "mailing_address", "email", "phone"), [])
    assert not Customer.objects.exists()
