"""Reading TEXT that is not valid UTF-8 without paying for it on every other row.

SQLite keeps whatever bytes a writer gave a TEXT value. Python's sqlite3
decodes TEXT as UTF-8 in C and raises ``OperationalError: Could not decode to
UTF-8 column …`` on the first value that is not, which used to fail the whole
query (a sync pass, a page, an export).

A Python ``text_factory`` that decodes with replacement would survive it, but
costs on every value: half as slow again on the ten million messages a first
build reads. So the default stays, and only a row that fails
is read again with :func:`~sessions_admin.store.values.decode_text`:

* a failed fetch does not step the statement (CPython's ``iternext`` builds the
  row before stepping), so the same row can be fetched again at once with the
  tolerant factory set on the connection for that one row;
* ``fetchall``/``fetchmany`` would drop the rows they had gathered when one
  fails, so they gather with ``list.extend`` over the cursor instead (C speed,
  and the rows before the failure stay in the list): 446–687 ms against
  533–551 ms for ``fetchall`` on 500,000 three-column rows, the same within
  the machine's noise.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from itertools import islice

from sessions_admin.store.values import decode_text

_DECODE_ERROR = "Could not decode to UTF-8"


def is_decode_error(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and str(exc).startswith(_DECODE_ERROR)


def refetch_row(cursor: sqlite3.Cursor) -> tuple | None:
    """The row a fetch just failed on, read again with the tolerant factory."""
    connection = cursor.connection
    previous = connection.text_factory
    connection.text_factory = decode_text
    try:
        return sqlite3.Cursor.fetchone(cursor)
    finally:
        connection.text_factory = previous


def gather(cursor: sqlite3.Cursor, size: int | None = None) -> list:
    """Up to ``size`` rows (all when None), undecodable text read as ``Undecodable``."""
    rows: list = []
    while size is None or len(rows) < size:
        wanted = len(rows)
        try:
            # The cursor's own C iterator (sqlite3.Cursor.__iter__ returns the cursor).
            rows.extend(cursor if size is None else islice(cursor, size - wanted))
        except sqlite3.OperationalError as exc:
            if not is_decode_error(exc):
                raise
            row = refetch_row(cursor)
            if row is None:
                break
            rows.append(row)
            continue
        break
    return rows


def tolerant_rows(cursor: sqlite3.Cursor) -> Iterator[tuple]:
    """Iterate a cursor's rows, undecodable text read as ``Undecodable`` (a streamed walk)."""
    while True:
        try:
            yield from cursor
            return
        except sqlite3.OperationalError as exc:
            if not is_decode_error(exc):
                raise
            row = refetch_row(cursor)
            if row is None:
                return
            yield row


def fetchone(cursor: sqlite3.Cursor) -> tuple | None:
    try:
        return sqlite3.Cursor.fetchone(cursor)
    except sqlite3.OperationalError as exc:
        if not is_decode_error(exc):
            raise
        return refetch_row(cursor)
