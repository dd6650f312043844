"""The side database's bookkeeping: its layout, where the sync stands, its transactions."""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from sessions_admin import clock
from sessions_admin.ourdata import sessionwalk, sidedb
from sessions_admin.ourdata.sync.listeners import call_hooks, listeners
from sessions_admin.store import feed

logger = logging.getLogger("sessions_admin.ourdata.sync")

#: Bumped when a table of the side database changes shape; an older file asks
#: for ``sync_index --rebuild`` (pages treat it as no index).
LAYOUT_VERSION = 5
#: Messages per batch (one side-database transaction each).
BATCH_SIZE = 20_000
#: A pass that took in this many messages ends with the listeners' ``finish_build``.
LONG_PASS = 1_000_000
#: Sessions per transaction when a pass meets sessions new to it.
SESSION_CHUNK = 10_000
#: Characters of a failed pass's reason kept for the pages.
ERROR_CHARS = 300

SCHEMA = (
    """
CREATE TABLE IF NOT EXISTS sync_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
"""
    + sessionwalk.SCHEMA
)


@dataclass(frozen=True)
class SyncState:
    """Where the sync stands: the last message id every listener has taken in
    (:data:`~sessions_admin.store.feed.BEFORE_FIRST_ID` while none)."""

    last_id: int = feed.BEFORE_FIRST_ID
    synced_at_ms: int | None = None  # end of the last complete pass
    started_at_ms: int | None = None  # start of the first build (kept until --rebuild)


class SideLayoutChanged(RuntimeError):
    """The side database was made by an older layout: ``sync_index --rebuild``."""


def prepare(side: sqlite3.Connection) -> None:
    """The runner's tables and every listener's, created if missing."""
    version = side.execute("PRAGMA user_version").fetchone()[0]
    if version not in (0, LAYOUT_VERSION) or (version == 0 and has_tables(side)):
        raise SideLayoutChanged(
            f"The side database {sidedb.side_path()} has an older layout: run "
            "manage.py sync_index --rebuild."
        )
    sidedb.run_script(side, SCHEMA)
    for listener in listeners():
        listener.create(side)
    if version == 0:
        side.execute(f"PRAGMA user_version = {LAYOUT_VERSION}")


def is_current(side: sqlite3.Connection) -> bool:
    """Was this side database made by this layout (and prepared at least once)?"""
    version = side.execute("PRAGMA user_version").fetchone()[0]
    return version == LAYOUT_VERSION and has_tables(side)


def read_state(side: sqlite3.Connection) -> SyncState:
    """The bookkeeping (call :func:`prepare` first, or check the table exists)."""
    values = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    last_id = values.get("last_id")
    return SyncState(
        last_id=feed.BEFORE_FIRST_ID if last_id is None else int(last_id),
        synced_at_ms=values.get("synced_at_ms"),
        started_at_ms=values.get("started_at_ms"),
    )


def has_tables(side: sqlite3.Connection) -> bool:
    """Has a sync ever prepared this side database?"""
    row = side.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sync_state'"
    ).fetchone()
    return row is not None


def set_state(side: sqlite3.Connection, **values: int | str | None) -> None:
    side.executemany(
        "INSERT INTO sync_state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )


@contextmanager
def side_transaction(side: sqlite3.Connection) -> Iterator[None]:
    """A pass's transaction: the listeners' own files commit (or roll back) with it."""
    with sidedb.transaction(side):
        try:
            yield
            call_hooks("before_commit", side)
        except BaseException:
            call_hooks("after_rollback", side)
            raise


def record_failure(side: sqlite3.Connection, exc: Exception) -> None:
    """Keep when and why this pass failed, for the pages (:func:`last_run`).

    The failed batch has already rolled back; this write is its own
    transaction. If even it fails (the side database is gone or locked), the
    pass's own error is the one that matters, so it is only logged.
    """
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:ERROR_CHARS]
    try:
        if side.in_transaction:
            side.execute("ROLLBACK")
        sidedb.run_script(side, SCHEMA)
        set_state(side, run_failed_at_ms=clock.now_ms(), run_error=reason)
    except Exception:
        logger.exception("could not record the failed sync (%s)", reason)
