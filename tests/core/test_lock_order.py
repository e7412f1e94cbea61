"""``core.db.lock_in_order``: every writer that locks several rows of a table takes them in primary-key order and
only of that table, so two transactions locking overlapping rows queue instead of deadlocking."""

import threading

import pytest
from django.db import connection, connections, transaction
from django.test.utils import CaptureQueriesContext

from accounts.models import Account
from core.db import is_postgres, lock_in_order
from tests.factories import AccountFactory


@pytest.mark.django_db
def test_the_rows_come_back_in_id_order_with_the_fields_asked_for():
    accounts = [AccountFactory() for _ in range(3)]
    ids = sorted(a.pk for a in accounts)
    with transaction.atomic(), CaptureQueriesContext(connection) as queries:
        rows = lock_in_order(Account.objects.filter(pk__in=ids).select_related("owner"), "id", "owner__name")
        objects = lock_in_order(Account.objects.filter(pk__in=list(reversed(ids))))
    assert [row[0] for row in rows] == ids and all(row[1] for row in rows)
    assert [a.pk for a in objects] == ids
    if is_postgres():
        # Locks the accounts alone (not the owners joined for their names), in id order.
        assert all("FOR UPDATE OF" in q["sql"] and 'ORDER BY "accounts_account"."id" ASC' in q["sql"]
                   for q in queries.captured_queries)


@pytest.mark.django_db(transaction=True)
def test_two_writers_locking_the_same_accounts_in_opposite_orders_queue_instead_of_deadlocking():
    if not is_postgres():
        pytest.skip("needs PostgreSQL (set DATABASE_URL): SQLite serializes writers, so there is no lock to order")
    ids = [AccountFactory().pk for _ in range(2)]
    errors, first_holds, done = [], threading.Event(), []

    def writer(order: list[int], *, wait: bool):
        try:
            with transaction.atomic():
                lock_in_order(Account.objects.filter(pk__in=order), "id")
                if not wait:
                    first_holds.set()
                    threading.Event().wait(0.3)
                done.append(order)
        except Exception as exc:  # a deadlock would surface here
            errors.append(exc)
        finally:
            connections.close_all()

    first = threading.Thread(target=writer, args=(ids,), kwargs={"wait": False})
    first.start()
    first_holds.wait(5)
    second = threading.Thread(target=writer, args=(list(reversed(ids)),), kwargs={"wait": True})
    second.start()
    first.join(10)
    second.join(10)
    assert errors == [] and len(done) == 2
