"""The database's hot paths: bulk writes (PostgreSQL COPY, or ``bulk_create`` elsewhere) and the bulk read of
``values_rows``.

A billing run writes several rows per bill; Django's ``bulk_create`` spends most of its time building
model instances and preparing values, while COPY streams plain rows. Ids are reserved from the table's
sequence first, so the rows can reference each other (a line its bill) before they are written.
"""

import csv
import gc
import io
import itertools
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from django.core.exceptions import EmptyResultSet
from django.db import connection, models
from django.db.models import Lookup
from django.db.models.sql.constants import MULTI


def is_postgres() -> bool:
    return connection.vendor == "postgresql"


def is_any_of(column: str, values: Sequence, *, vendor: str | None = None) -> tuple[str, list]:
    """SQL and parameters for ``column`` being one of ``values``: one array parameter on PostgreSQL
    (``= ANY(%s)``), a list of parameters elsewhere. For raw queries over a chunk's thousand ids, and the
    ``__any`` lookup. Raises ``EmptyResultSet`` for no values where an array is not used."""
    if (vendor or connection.vendor) == "postgresql":
        return f"{column} = ANY(%s)", [list(values)]
    if not values:
        raise EmptyResultSet
    return f"{column} IN ({', '.join(['%s'] * len(values))})", list(values)


class AnyOf(Lookup):
    """``field__any=ids``: ``field = ANY(%s)`` with the ids as one array on PostgreSQL (``IN`` elsewhere).

    ``__in`` prepares every value through the field and writes a literal list into the SQL; a chunk's
    thousand ids made that a tenth of a billing run's time. The values are used as given (ints for ids)."""

    lookup_name = "any"
    prepare_rhs = False

    def get_prep_lookup(self):
        return list(self.rhs)

    def as_sql(self, compiler, connection):
        lhs, lhs_params = self.process_lhs(compiler, connection)
        sql, params = is_any_of(lhs, self.rhs, vendor=connection.vendor)
        return sql, [*lhs_params, *params]


def reserve_ids(model: type[models.Model], count: int) -> list[int]:
    """``count`` fresh primary keys from the model's sequence (PostgreSQL only)."""
    if count == 0:
        return []
    table = model._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute("SELECT nextval(pg_get_serial_sequence(%s, 'id')) FROM generate_series(1, %s)",
                       [table, count])
        return [row[0] for row in cursor.fetchall()]


class _CsvStream:
    """The rows as CSV text for COPY, written a chunk at a time as the driver reads: the database takes one
    chunk while the next is formatted, so a large COPY costs about the slower of the two, not their sum."""

    CHUNK = 5000  # rows per read

    def __init__(self, rows: Iterator[Sequence]):
        self._rows = rows
        self._buffer = io.StringIO()
        self._writer = csv.writer(self._buffer, lineterminator="\n")

    def read(self, size: int = -1) -> str:
        self._buffer.seek(0)
        self._buffer.truncate()
        self._writer.writerows(itertools.islice(self._rows, self.CHUNK))
        return self._buffer.getvalue()


def copy_rows(model: type[models.Model], columns: Sequence[str], rows: Iterable[Sequence]) -> None:
    """Write ``rows`` (values in ``columns`` order, database column names) with COPY ... FROM STDIN. ``rows``
    may be a generator: they are formatted as the database reads them."""
    rows = iter(rows)
    first = next(rows, None)
    if first is None:
        return
    quote = connection.ops.quote_name
    # An empty unquoted CSV field reads as NULL; text columns that are NOT NULL read it as "" instead.
    text_columns = [f.column for f in model._meta.concrete_fields
                    if isinstance(f, models.CharField | models.TextField | models.FileField) and not f.null
                    and f.column in columns]
    options = "FORMAT csv" + (f", FORCE_NOT_NULL ({', '.join(quote(c) for c in text_columns)})" if text_columns else "")
    quoted = ", ".join(quote(c) for c in columns)
    # csv writes None as an empty field (NULL), and str() of dates, decimals, UUIDs and booleans is what
    # PostgreSQL reads. COPY runs on the driver's cursor: its errors are turned into Django's
    # (IntegrityError, ...) here.
    with connection.cursor() as cursor, connection.wrap_database_errors:
        cursor.cursor.copy_expert(f"COPY {quote(model._meta.db_table)} ({quoted}) "
                                  f"FROM STDIN WITH ({options})", _CsvStream(itertools.chain([first], rows)))


def column_set(model: type[models.Model], field_name: str, values: dict[int, object]) -> None:
    """Set one column of many rows, each its own value (``values``: primary key → value), in one statement on
    PostgreSQL (``UPDATE … FROM unnest(ids, values)``); ``bulk_update`` elsewhere. For tens of thousands of
    rows, where ``bulk_update``'s ``CASE WHEN`` takes seconds. Writes no history: the caller records what it
    changed."""
    if not values:
        return
    field = model._meta.get_field(field_name)
    if not is_postgres():
        model.objects.bulk_update([model(**{model._meta.pk.attname: pk, field.attname: value})
                                   for pk, value in values.items()], [field.name], batch_size=2000)
        return
    quote = connection.ops.quote_name
    table, column, pk = quote(model._meta.db_table), quote(field.column), quote(model._meta.pk.column)
    kind = field.db_type(connection)  # names from the model, values as parameters
    with connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET {column} = v.value FROM unnest(%s::bigint[], %s::{kind}[]) "  # noqa: S608
                       f"AS v(pk, value) WHERE {table}.{pk} = v.pk", [list(values), list(values.values())])


@contextmanager
def collector_paused():
    """Python's cyclic garbage collector paused while tens of thousands of rows and entries are made (none of
    them in a cycle): otherwise it runs over and over as they pile up, for a good part of the load."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def lock_for_transaction(key: str) -> None:
    """Hold a lock named ``key`` until the transaction ends (PostgreSQL advisory lock; SQLite already
    runs one writer at a time). Callers count-then-write under it, so concurrent requests queue."""
    if is_postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", [key])


def lock_in_order(queryset, *fields: str) -> list:
    """Lock ``queryset``'s rows (of its own table, not of tables it joins) until the transaction ends, always in
    primary-key order, and return their ``fields`` (``values_list``; the objects when no field is named).

    Every writer that locks several rows of a table (the accounts whose books it writes, the meters it reads)
    takes them this way, so two transactions locking overlapping rows queue one behind the other instead of
    each holding a row the other waits for (a deadlock)."""
    locked = queryset.select_for_update(of=("self",)).order_by("pk")
    return list(locked.values_list(*fields) if fields else locked)


def postgres_only_sql(forward: str, reverse: str):
    """A migration operation that runs raw SQL (triggers, functions) on PostgreSQL and does nothing on
    SQLite. No parameters are bound, so a ``%`` in a PL/pgSQL message stays as written."""
    from django.db import migrations

    def run(sql: str):
        def apply(apps, schema_editor):
            if schema_editor.connection.vendor == "postgresql":
                with schema_editor.connection.cursor() as cursor:
                    cursor.execute(sql)
        return apply

    return migrations.RunPython(run(forward), run(reverse))


def values_rows(queryset) -> list[tuple]:
    """The rows of a ``values_list`` query, each column converted from the database as Django converts it,
    but once per distinct value: a ledger's days and amounts repeat over thousands of rows.

    It reaches into Django's query compiler, which is not a public API (``get_compiler``, ``execute_sql(MULTI)``,
    ``get_converters``, ``select`` and ``col_count``, as Django 5.2 has them): ``tests/core/test_db.py`` checks it
    gives exactly what ``values_list`` gives, column type by column type on both databases, so a Django upgrade
    that changes the compiler fails there, not in a bill."""
    compiler = queryset.query.get_compiler(using=queryset.db)
    raw = [row for chunk in compiler.execute_sql(MULTI) for row in chunk]
    if not raw:
        return []
    converters = compiler.get_converters([s[0] for s in compiler.select[0:compiler.col_count]])
    if not converters:
        return [tuple(row) for row in raw]
    columns = list(zip(*raw, strict=True))
    connection = compiler.connection
    for index, (functions, expression) in converters.items():
        memo = {}
        for value in set(columns[index]):
            python = value
            for function in functions:
                python = function(python, expression, connection)
            memo[value] = python
        columns[index] = list(map(memo.__getitem__, columns[index]))
    return list(zip(*columns, strict=True))


def database_identity() -> str:
    """What tells this database from a copy of it: on PostgreSQL the cluster's system identifier and the database's
    oid (a database restored from a dump, in this cluster or another, has another), on SQLite the file's path and
    inode. The restore drill records it, so a drill run against the live database is told from one run on a copy."""
    if is_postgres():
        with connection.cursor() as cursor:
            cursor.execute("SELECT (SELECT system_identifier FROM pg_control_system()), oid FROM pg_database "
                           "WHERE datname = current_database()")
            system, oid = cursor.fetchone()
        return f"postgresql:{system}:{oid}"
    name = str(connection.settings_dict["NAME"])
    try:
        return f"sqlite:{Path(name).resolve()}:{Path(name).stat().st_ino}"
    except OSError:
        return f"sqlite:{name}"
