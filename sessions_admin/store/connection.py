"""Where the store is, how it is opened, and how long a query may run.

Everything else in :mod:`sessions_admin.store` reaches SQLite through here;
views, admin and commands never open the store themselves.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connections

from sessions_admin.store.health import StoreStatus, cached_store_status
from sessions_admin.store.router import STORE_ALIAS
from sessions_admin.store.values import Undecodable


class StoreError(Exception):
    """A problem with the store that staff should read as a sentence."""

    status_code = 503

    def __init__(self, message: str, *, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class StoreTimeout(StoreError):
    status_code = 422

    def __init__(self, limit_ms: int) -> None:
        super().__init__(
            f"This query was stopped after {limit_ms / 1000:g} s.",
            hint="Narrow your filter: pick a target or a shorter time range.",
        )
        self.limit_ms = limit_ms


class StoreReadOnly(StoreError):
    status_code = 403

    def __init__(self) -> None:
        super().__init__(
            "The dashboard runs in read-only mode (SESSIONS_ADMIN_READ_ONLY=1): "
            "nothing can be deleted.",
        )


def store_connection():  # -> django.db.backends.base.base.BaseDatabaseWrapper
    return connections[STORE_ALIAS]


def store_path() -> Path:
    return Path(store_connection().settings_dict["NAME"])


def is_read_only() -> bool:
    return bool(store_connection().settings_dict.get("OPTIONS", {}).get("read_only"))


def frames_root() -> Path:
    return Path(settings.FRAMES_DIR)


def _deleted_mark() -> Path:
    # In our data folder, never the store's: one mark per store, as the folder is.
    return Path(settings.VAR_DIR) / "store-deleted-at"


def note_store_deleted() -> None:
    """Say that this dashboard deleted rows from the store just now (any process: the
    worker's clear-all too), so counts kept from before are counted again."""
    mark = _deleted_mark()
    try:
        mark.parent.mkdir(parents=True, exist_ok=True)
        mark.touch()
        now = time.time()
        os.utime(mark, (now, now))
    except OSError:
        pass  # counts then stay as old as they say they are


def store_deleted_at() -> float:
    """When this dashboard last deleted rows from the store (0: never, or unknown)."""
    try:
        return _deleted_mark().stat().st_mtime
    except OSError:
        return 0.0


def store_status(*, fresh: bool = False) -> StoreStatus:
    return cached_store_status(store_path(), read_only=is_read_only(), ttl_s=0 if fresh else 5)


class Rows(list):
    """The rows a statement returned; ``rowcount`` is how many it changed (deletes)."""

    rowcount: int = -1


def run_sql(sql: str, params: Sequence[Any] = ()) -> Rows:
    """Run one statement on the store and fetch its rows: the store layer's only SQL helper.

    The SQL reads with SQLite's own ``?`` placeholders; Django's cursor wants ``%s``.
    It goes through Django's ``agents`` connection, so the backend's authorizer, the
    transaction (``BEGIN IMMEDIATE`` in ``transaction.atomic``) and :func:`time_limit`
    all apply. Rows are read by the backend's tolerant cursor (TEXT that is not
    UTF-8 arrives as :class:`~sessions_admin.store.values.Undecodable`), and
    such a value passed back as a parameter is bound as the bytes it was read
    from (:func:`exact_parameters`), so a lookup or a delete finds its row.
    """
    sql, params = exact_parameters(sql, params)
    with store_connection().cursor() as cursor:
        cursor.execute(sql.replace("?", "%s"), params)
        rows = Rows(cursor.fetchall())
        rows.rowcount = cursor.rowcount
        return rows


def exact_parameters(sql: str, params: Sequence[Any]) -> tuple[str, list[Any]]:
    """Each :class:`Undecodable` parameter's ``?`` as ``CAST(? AS TEXT)`` over its raw bytes.

    Bytes alone would bind as a BLOB, which never equals a TEXT value; the
    cast makes them TEXT holding exactly the stored bytes. (The statements
    here hold no ``?`` inside a string literal: ``run_sql`` relies on it too.)
    """
    params = list(params)
    if not any(type(value) is Undecodable for value in params):
        return sql, params
    pieces = sql.split("?")
    if len(pieces) - 1 != len(params):
        return sql, params  # not ours to rewrite; the statement fails or finds nothing
    out = [pieces[0]]
    for index, piece in enumerate(pieces[1:]):
        value = params[index]
        if type(value) is Undecodable:
            out.append("CAST(? AS TEXT)")
            params[index] = value.raw
        else:
            out.append("?")
        out.append(piece)
    return "".join(out), params


def raw_connection() -> sqlite3.Connection:
    conn = store_connection()
    conn.ensure_connection()
    return conn.connection


@contextmanager
def time_limit(limit_ms: int | None = None) -> Iterator[None]:
    """Interrupt any store query that runs longer than ``limit_ms``.

    SQLite calls the progress handler every N virtual-machine steps; returning
    true aborts the statement with "interrupted", which we turn into
    :class:`StoreTimeout` so the page can say "narrow your filter".
    """
    limit_ms = limit_ms or settings.STORE_QUERY_TIME_LIMIT_MS
    raw = raw_connection()
    deadline = time.monotonic() + limit_ms / 1000
    raw.set_progress_handler(lambda: time.monotonic() > deadline, 20_000)
    try:
        yield
    except (DatabaseError, sqlite3.OperationalError) as exc:
        if "interrupted" in str(exc):
            raise StoreTimeout(limit_ms) from exc
        raise
    finally:
        raw.set_progress_handler(None, 0)


def describe_database_error(exc: BaseException) -> StoreError:
    """Turn an SQLite error from the store into a sentence for staff."""
    message = str(exc)
    if "locked" in message or "busy" in message:
        return StoreError(
            "The store is locked by the runtime right now.",
            hint="Try again in a moment; if it lasts, the runtime may be stuck in a long write.",
        )
    if "unable to open" in message:
        return StoreError(
            f"The store file cannot be opened ({store_path()}).",
            hint="Check AGENTS_HOST_HOME / SESSIONS_ADMIN_STORE and the file's permissions.",
        )
    if "not a database" in message or "malformed" in message:
        return StoreError("The store file is not an SQLite database, or it is damaged.")
    if "no such table" in message or "no such column" in message:
        return StoreError(
            f"The store's schema is not the one the dashboard knows ({message}).",
        )
    if "readonly" in message or "read-only" in message:
        return StoreError("The store is opened read-only: this action cannot write to it.")
    if "not authorized" in message:
        return StoreError("The dashboard refused a statement that would change the store.")
    return StoreError(f"The store could not answer: {message}.")
