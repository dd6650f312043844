"""A host's share of the fleet's directory, written after each sync pass.

The sessions a pass changed are noted in the side database (:mod:`.dirty`); here
each noted session's directory row is written again from what is true now: its
store row (or none: it is deleted from the directory) and the counts the rollups
hold for it. A chunk's rows are replaced in one transaction of the shared
database, and its ids cleared from the side database only after that commits, so
a kill or a database that cannot be reached leaves them for the next pass.
"""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from sessions_admin import clock
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.erasures import shown_principal
from sessions_admin.ourdata.fleet.dirty import EVERYTHING, SCHEMA, publishing
from sessions_admin.ourdata.fleet.models import (
    NAME_CHARS,
    NO_TIME,
    TITLE_CHARS,
    FleetHost,
    FleetSession,
    exact_key,
)
from sessions_admin.ourdata.sidedb import bind_id, read_id, run_script
from sessions_admin.ourdata.storeids import to_column
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedSession

logger = logging.getLogger("sessions_admin.fleet")

#: Sessions written per transaction of the shared database (``FLEET_PUBLISH_CHUNK``).
PUBLISH_CHUNK = 2_000
#: Characters of a failed publish's reason kept on the host's row.
ERROR_CHARS = 300
DAY_MS = 86_400_000


@dataclass
class Published:
    """What one publish did."""

    written: int = 0
    removed: int = 0
    swept: int = 0
    seconds: float = 0.0
    error: str = ""


def publish_after_pass() -> Published | None:
    """:func:`publish` under the side database's writer's lock (no pass notes a session
    while its row is written); None when not publishing or a pass holds the lock (the
    next one publishes)."""
    if not publishing():
        return None
    try:
        with sidedb.pass_lock():
            side = sidedb.connect()
            try:
                return publish(side)
            finally:
                side.close()
    except sidedb.PassRunning:
        return None


def publish(side: sqlite3.Connection) -> Published | None:
    """Write what the last pass changed to the directory; None when not publishing.
    A database that cannot be reached is reported (and logged), never raised: the
    side index stays current and the next pass catches the directory up."""
    if not publishing():
        return None
    started = time.perf_counter()
    done = Published()
    run_script(side, SCHEMA)
    try:
        host = _host()
        fresh = False
        if _everything(side, host):
            side.execute("INSERT OR IGNORE INTO fleet_dirty (id) SELECT id FROM sync_sessions")
            done.swept = _sweep(side, host)
            side.execute("DELETE FROM fleet_state WHERE key = ?", [EVERYTHING])
            fresh = not FleetSession.objects.filter(host=host).exists()
        chunk = getattr(settings, "FLEET_PUBLISH_CHUNK", PUBLISH_CHUNK)
        while ids := [read_id(r[0]) for r in side.execute(_NEXT, [chunk]).fetchall()]:
            written, removed = _write(side, host, ids, fresh=fresh)
            done.written += written
            done.removed += removed
        _describe_host(side, host, error="")
    except DatabaseError as exc:
        done.error = f"{type(exc).__name__}: {exc}"[:ERROR_CHARS]
        logger.warning("publishing to the fleet's directory failed: %s", done.error)
        # The database may be away: the host's row then says nothing new until it is back.
        with contextlib.suppress(DatabaseError, FleetHost.DoesNotExist):
            _describe_host(side, FleetHost.objects.get(store_name=current_store()), done.error)
    done.seconds = time.perf_counter() - started
    return done


_NEXT = "SELECT id FROM fleet_dirty LIMIT ?"


def _host() -> FleetHost:
    host, _ = FleetHost.objects.get_or_create(store_name=current_store())
    partition_for(host)
    url = str(getattr(settings, "PUBLIC_URL", "") or "").rstrip("/")
    if host.public_url != url:
        host.public_url = url
        host.save(update_fields=["public_url"])
    return host


def partition_for(host: FleetHost) -> None:
    """On PostgreSQL, the host's own partition of the directory (made once; migration 0020
    partitions the table by host). A host whose rows already sit in the default
    partition keeps them there: PostgreSQL would refuse the new partition."""
    if connection.vendor != "postgresql" or host.pk in _PARTITIONED:
        return
    name = f"{_TABLE}_h{int(host.pk)}"
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass(%s) IS NOT NULL", [name])
        exists = cursor.fetchone()[0]
        cursor.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_partitioned_table WHERE partrelid = to_regclass(%s))",
            [_TABLE],
        )
        partitioned = cursor.fetchone()[0]
        if partitioned and not exists:
            cursor.execute(f"SELECT 1 FROM {_TABLE}_default WHERE host_id = %s LIMIT 1", [host.pk])
            if cursor.fetchone() is None:
                cursor.execute(
                    f"CREATE TABLE IF NOT EXISTS {name} PARTITION OF {_TABLE} "
                    f"FOR VALUES IN ({int(host.pk)})"
                )
    _PARTITIONED.add(host.pk)


#: Hosts whose partition this process has seen to.
_PARTITIONED: set[int] = set()


def _everything(side: sqlite3.Connection, host: FleetHost) -> bool:
    """Must every session be written again (a first publish, a rebuild)?"""
    flagged = side.execute("SELECT 1 FROM fleet_state WHERE key = ?", [EVERYTHING]).fetchone()
    return flagged is not None or host.last_pass_at is None


def _write(
    side: sqlite3.Connection, host: FleetHost, ids: Sequence[str], *, fresh: bool = False
) -> tuple[int, int]:
    """Replace these sessions' rows (``fresh``: the host has none yet, nothing to delete);
    clear them from the side database once committed."""
    rows = feed.sessions_by_id(ids)
    counts = _counts(side, list(rows))
    principals: dict[object, str] = {}
    values = [
        _values(host, row, counts.get(sid, (0, 0, 0)), principals) for sid, row in rows.items()
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        removed = 0 if fresh else _delete(cursor, host, [exact_key(sid) for sid in ids])
        _insert(cursor, values)
    with sidedb.transaction(side):
        side.executemany("DELETE FROM fleet_dirty WHERE id = ?", [(bind_id(s),) for s in ids])
    return len(values), max(0, removed - len(values))


_NONE = (0, 0, 0)
#: The directory's columns as :func:`_values` gives them, in order.
_COLUMNS = (
    "host_id", "key", "session_id", "target", "profile", "principal", "principal_key", "title",
    "created_at", "last_active", "newest", "messages", "tool_calls", "failed_calls",
)  # fmt: skip
_TABLE = FleetSession._meta.db_table


def _delete(cursor, host: FleetHost, keys: list[str]) -> int:
    removed = 0
    for chunk in chunks(keys, 500):
        marks = ", ".join(["%s"] * len(chunk))
        cursor.execute(
            f"DELETE FROM {_TABLE} WHERE host_id = %s AND key IN ({marks})", [host.pk, *chunk]
        )
        removed += cursor.rowcount
    return removed


def _insert(cursor, values: list[tuple]) -> None:
    """The rows in one go: PostgreSQL's COPY (the ORM's bulk_create built each row as a
    model first: a fifth of the rate), or SQLite's executemany."""
    if not values:
        return
    if connection.vendor == "postgresql":
        with cursor.cursor.copy(f"COPY {_TABLE} ({', '.join(_COLUMNS)}) FROM STDIN") as copy:
            for row in values:
                copy.write_row(row)
        return
    marks = ", ".join(["%s"] * len(_COLUMNS))
    cursor.executemany(f"INSERT INTO {_TABLE} ({', '.join(_COLUMNS)}) VALUES ({marks})", values)


def _counts(side: sqlite3.Connection, ids: list[str]) -> dict[str, tuple[int, int, int]]:
    """(messages, tool calls, failed calls) the rollups hold per session."""
    found: dict[str, tuple[int, int, int]] = {}
    for chunk in chunks(ids):
        sql = (
            "SELECT s.session_id, s.messages, "
            "(SELECT count(*) FROM rollup_call AS c WHERE c.session = s.key), "
            "(SELECT count(*) FROM rollup_call AS c WHERE c.session = s.key AND c.failed) "
            f"FROM rollup_session AS s WHERE s.session_id IN ({placeholders(len(chunk))})"
        )
        for sid, messages, calls, failed in side.execute(sql, [bind_id(s) for s in chunk]):
            found[read_id(sid)] = (messages, calls, failed)
    return found


def shown(value: str | None, limit: int = NAME_CHARS) -> str:
    """A store text as the directory keeps it for pages: NUL as U+2400 (PostgreSQL's text
    holds no NUL, as the receipts show it), cut to ``limit`` with "…"."""
    text = shown_principal(str.__str__(value or ""))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _values(
    host: FleetHost, row: FeedSession, counts: tuple[int, int, int], principals: dict
) -> tuple:
    """The session's directory row, in :data:`_COLUMNS` order, as the columns hold it."""
    messages, calls, failed = counts
    principal = row.principal_id
    if principal not in principals:  # a principal's key once per chunk
        principals[principal] = exact_key(principal)
    return (
        host.pk,
        exact_key(row.id),
        to_column(row.id),
        shown(row.target_key),
        shown(row.profile_key),
        shown(principal),
        principals[principal],
        shown(row.title, TITLE_CHARS),
        row.created_at,
        row.last_active,
        NO_TIME if row.last_active is None else row.last_active,
        messages,
        calls,
        failed,
    )


def _sweep(side: sqlite3.Connection, host: FleetHost) -> int:
    """Delete the host's rows of sessions the side index no longer holds."""
    held = {exact_key(read_id(r[0])) for r in side.execute("SELECT id FROM sync_sessions")}
    stale = [
        pk
        for pk, key in FleetSession.objects.filter(host=host).values_list("pk", "key").iterator()
        if key not in held
    ]
    for chunk in chunks(stale, 500):
        FleetSession.objects.filter(pk__in=chunk).delete()
    return len(stale)


def _describe_host(side: sqlite3.Connection, host: FleetHost, error: str) -> None:
    """The host's row: its last pass, how far behind its store, its totals."""
    now = clock.now_ms()
    state = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    last_id = int(state.get("last_id") or feed.BEFORE_FIRST_ID)
    host.last_pass_at = timezone.now()
    host.last_outcome = FleetHost.Outcome.FAILED if error else FleetHost.Outcome.OK
    host.last_error = error
    host.behind_messages = max(0, feed.last_message_id() - max(last_id, 0))
    host.unpublished = side.execute("SELECT count(*) FROM fleet_dirty").fetchone()[0]
    host.unlisted = int(state.get("unindexable_sessions") or 0)
    host.sessions = side.execute("SELECT count(*) FROM sync_sessions").fetchone()[0]
    host.messages = side.execute(
        "SELECT coalesce(sum(messages), 0) FROM rollup_session"
    ).fetchone()[0]
    host.failed_calls_24h = side.execute(
        "SELECT count(*) FROM rollup_call WHERE failed AND ts >= ?", [now - DAY_MS]
    ).fetchone()[0]
    host.save()
