"""Thousands of review rows written in one ``executemany`` per thousand.

Django's ``bulk_create`` builds a model instance and prepares every field of
every row (10,000 queue items: 1.2 s of the 3 s a queue may take to make), and
``bulk_update`` writes a ``CASE WHEN`` per field that SQLite evaluates row by
row (10,000 label copies: about 10 s). These take plain values for the
columns named, which every row of a call shares, and leave the other columns
to their database defaults (inserts) or as they are (updates).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db import connections, models, router

from sessions_admin.ourdata.storeids import StoreIdField
from sessions_admin.sqlhelpers import chunks

#: Rows per ``executemany``.
BATCH = 1000


def sql_names(
    model: type[models.Model], fields: Sequence[str], *, write: bool = True
) -> tuple[Any, str, list[str]]:
    """For SQL of our own on ``model``: its database's connection (for writing, or for
    reading), its table's name and the columns of ``fields``, each quoted."""
    connection = connections[(router.db_for_write if write else router.db_for_read)(model)]
    quote = connection.ops.quote_name
    meta = model._meta
    return connection, quote(meta.db_table), [quote(meta.get_field(f).column) for f in fields]


def prepared(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]], connection
) -> list[list[Any]]:
    """``rows`` as the database takes them: only the fields that need it go through their
    field's preparation (a store id, :class:`~sessions_admin.ourdata.storeids.StoreIdField`)."""
    meta = model._meta
    preps = [
        (n, field)
        for n, field in enumerate(meta.pk if f == "pk" else meta.get_field(f) for f in fields)
        if isinstance(field, StoreIdField)
    ]
    if not preps:
        return list(rows)
    out = []
    for row in rows:
        row = list(row)
        for n, field in preps:
            row[n] = field.get_db_prep_save(row[n], connection)
        out.append(row)
    return out


def insert_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Insert ``rows`` (values of ``fields``, in that order) into ``model``'s table."""
    connection, table, columns = sql_names(model, fields)
    sql = f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(fields))})"
    with connection.cursor() as cursor:
        for chunk in chunks(prepared(model, fields, rows, connection), BATCH):
            cursor.executemany(sql, chunk)


def update_rows(
    model: type[models.Model], fields: Sequence[str], rows: Sequence[Sequence[Any]]
) -> None:
    """Set ``fields`` on each row: ``rows`` are the values of ``fields`` then the pk."""
    connection, table, columns = sql_names(model, fields)
    pk = connection.ops.quote_name(model._meta.pk.column)
    sql = f"UPDATE {table} SET {', '.join(f'{c} = %s' for c in columns)} WHERE {pk} = %s"
    with connection.cursor() as cursor:
        for chunk in chunks(prepared(model, [*fields, "pk"], rows, connection), BATCH):
            cursor.executemany(sql, chunk)
