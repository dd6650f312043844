"""One pass over the store's new messages feeds every consumer of our side database.

``manage.py sync_index`` reads the messages after the last id it has seen
(:mod:`sessions_admin.store.feed`) and hands each batch to every
:class:`SyncListener` in :data:`LISTENERS`, inside the same transaction on
the side database as the batch's bookkeeping, so an interrupted build resumes
where its last committed batch ended and the consumers never drift apart.

Deletions reach the consumers two ways:

* the dashboard's own deletes call :func:`forget_sessions` right after the
  store's transaction commits (``store/deletion``), so their rows go at once;
* a pass starts by walking the store's session ids beside the ones we have
  seen (:func:`detect_deleted_sessions`): a session the runtime deleted, or
  one whose forget failed, is forgotten there.

The consumers are the modules named in :data:`CONSUMERS`; importing one
appends its listener to :data:`LISTENERS`.
"""

from __future__ import annotations

import importlib
import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from sessions_admin.ourdata import sidedb
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedMessage, FeedSession

logger = logging.getLogger(__name__)


class SyncListener(Protocol):
    """A consumer of the sync: the search index, the rollups.

    A listener may also define ``update_sessions(side, sessions)``, taking
    the current rows (:class:`~sessions_admin.store.feed.FeedSession`) of
    sessions that are new or got new messages in the batch; the runner calls
    it when present, in the same transaction.
    """

    name: str

    def create(self, side: sqlite3.Connection) -> None:
        """Create this consumer's tables in the side database if they are missing."""

    def reset(self, side: sqlite3.Connection) -> None:
        """Forget everything (``sync_index --rebuild``)."""

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        """Take in a batch of new messages, ids increasing."""

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        """Drop what these sessions contributed (deleted by the runtime or by us)."""

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        """Drop what these messages contributed (deleted while their session stays)."""


#: Filled in by the consumers' modules (the search index, the rollups).
LISTENERS: list[SyncListener] = []

#: The modules whose import registers a listener.
CONSUMERS: list[str] = ["sessions_admin.ourdata.index", "sessions_admin.ourdata.rollups"]

#: Messages per batch (one side-database transaction each).
BATCH_SIZE = 5000

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sync_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_sessions (id TEXT PRIMARY KEY) WITHOUT ROWID;
"""


def listeners() -> list[SyncListener]:
    for module in CONSUMERS:
        importlib.import_module(module)
    return LISTENERS


@dataclass(frozen=True)
class SyncState:
    """Where the sync stands: the last message id every listener has taken in."""

    last_id: int = 0
    synced_at_ms: int | None = None  # end of the last complete pass
    started_at_ms: int | None = None  # start of the first build (kept until --rebuild)


@dataclass
class SyncReport:
    messages: int = 0
    batches: int = 0
    sessions_forgotten: int = 0
    sessions_added: int = 0
    last_id: int = 0
    seconds: float = 0.0
    interrupted: bool = False
    forgotten_ids: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Progress:
    """What a progress bar needs after each batch."""

    done: int
    total: int  # an estimate: the newest id minus where this pass started
    elapsed_s: float
    last_id: int

    @property
    def rate(self) -> float:
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def eta_s(self) -> float | None:
        if self.rate <= 0:
            return None
        return max(self.total - self.done, 0) / self.rate


def _now_ms() -> int:
    return int(time.time() * 1000)


def prepare(side: sqlite3.Connection) -> None:
    """The runner's tables and every listener's, created if missing."""
    side.executescript(_SCHEMA)
    for listener in listeners():
        listener.create(side)


def read_state(side: sqlite3.Connection) -> SyncState:
    """The bookkeeping (call :func:`prepare` first, or check the table exists)."""
    values = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    return SyncState(
        last_id=int(values.get("last_id") or 0),
        synced_at_ms=values.get("synced_at_ms"),
        started_at_ms=values.get("started_at_ms"),
    )


def has_tables(side: sqlite3.Connection) -> bool:
    """Has a sync ever prepared this side database?"""
    row = side.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sync_state'"
    ).fetchone()
    return row is not None


def _set_state(side: sqlite3.Connection, **values: int | None) -> None:
    side.executemany(
        "INSERT INTO sync_state (key, value) VALUES (?, ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        list(values.items()),
    )


def _call_update_sessions(side: sqlite3.Connection, sessions: Sequence[FeedSession]) -> None:
    if not sessions:
        return
    for listener in listeners():
        update = getattr(listener, "update_sessions", None)
        if update is not None:
            update(side, sessions)


def _take_batch(side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> int:
    """One transaction: the listeners take the batch, and the bookkeeping moves on."""
    touched = list(dict.fromkeys(message.session_id for message in batch))
    sessions = feed.sessions_by_id(touched)
    side.execute("BEGIN IMMEDIATE")
    try:
        for listener in listeners():
            listener.add_messages(side, batch)
        _call_update_sessions(side, list(sessions.values()))
        side.executemany(
            "INSERT OR IGNORE INTO sync_sessions (id) VALUES (?)", [(sid,) for sid in touched]
        )
        _set_state(side, last_id=batch[-1].id)
        side.execute("COMMIT")
    except BaseException:
        side.execute("ROLLBACK")
        raise
    return len(batch)


def _merge_walk(ours: Iterator[str], theirs: Iterator[str]) -> tuple[list[str], list[str]]:
    """Two ascending id streams: (ids only in ours, ids only in theirs)."""
    gone: list[str] = []
    new: list[str] = []
    a = next(ours, None)
    b = next(theirs, None)
    while a is not None or b is not None:
        if b is None or (a is not None and a < b):
            gone.append(a)
            a = next(ours, None)
        elif a is None or b < a:
            new.append(b)
            b = next(theirs, None)
        else:
            a = next(ours, None)
            b = next(theirs, None)
    return gone, new


def detect_deleted_sessions(side: sqlite3.Connection) -> tuple[list[str], list[str]]:
    """Sessions we have seen that the store no longer holds, and store sessions new to us.

    Both lists come from one ordered walk of each side's primary key (about
    half a second for 500,000 sessions), so nothing is held in memory but
    the differences.
    """
    ours = (row[0] for row in side.execute("SELECT id FROM sync_sessions ORDER BY id"))
    # Python orders str by code point, SQLite's BINARY collation by UTF-8 bytes:
    # the two orders are the same.
    return _merge_walk(ours, feed.session_ids())


def _forget_in(side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
    for listener in listeners():
        listener.forget_sessions(side, session_ids)
    side.executemany("DELETE FROM sync_sessions WHERE id = ?", [(sid,) for sid in session_ids])


def _apply_session_changes(side: sqlite3.Connection, report: SyncReport) -> None:
    gone, new = detect_deleted_sessions(side)
    for start in range(0, len(gone), 1000):
        chunk = gone[start : start + 1000]
        side.execute("BEGIN IMMEDIATE")
        try:
            _forget_in(side, chunk)
            side.execute("COMMIT")
        except BaseException:
            side.execute("ROLLBACK")
            raise
    for start in range(0, len(new), 1000):
        chunk = new[start : start + 1000]
        rows = list(feed.sessions_by_id(chunk).values())
        side.execute("BEGIN IMMEDIATE")
        try:
            _call_update_sessions(side, rows)
            side.executemany(
                "INSERT OR IGNORE INTO sync_sessions (id) VALUES (?)", [(r.id,) for r in rows]
            )
            side.execute("COMMIT")
        except BaseException:
            side.execute("ROLLBACK")
            raise
    report.sessions_forgotten += len(gone)
    report.sessions_added += len(new)
    report.forgotten_ids = gone[:100]


def sync_once(
    *,
    batch_size: int = BATCH_SIZE,
    on_progress: Callable[[Progress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    side: sqlite3.Connection | None = None,
) -> SyncReport:
    """One pass: forget what the store lost, then take in every message after the last id.

    Stops cleanly between batches when ``should_stop()`` turns true (the
    report says ``interrupted``); a KeyboardInterrupt inside a batch rolls
    that batch back. Either way the next pass resumes after the last
    committed batch.
    """
    started = time.perf_counter()
    own = side is None
    side = side or sidedb.connect()
    report = SyncReport()
    try:
        prepare(side)
        state = read_state(side)
        if state.started_at_ms is None:
            _set_state(side, started_at_ms=_now_ms())
        _apply_session_changes(side, report)
        last_id = state.last_id
        newest = feed.last_message_id()
        total = max(newest - last_id, 0)
        while True:
            if should_stop is not None and should_stop():
                report.interrupted = True
                break
            batch = feed.messages_after(last_id, batch_size)
            if not batch:
                break
            report.messages += _take_batch(side, batch)
            report.batches += 1
            last_id = batch[-1].id
            if on_progress is not None:
                elapsed = time.perf_counter() - started
                total = max(total, report.messages)
                on_progress(Progress(report.messages, total, elapsed, last_id))
        if not report.interrupted:
            _set_state(side, synced_at_ms=_now_ms())
        report.last_id = last_id
    finally:
        if own:
            side.close()
    report.seconds = time.perf_counter() - started
    return report


def rebuild(side: sqlite3.Connection | None = None) -> None:
    """Forget everything: the next pass builds from the first message."""
    own = side is None
    side = side or sidedb.connect()
    try:
        prepare(side)
        side.execute("BEGIN IMMEDIATE")
        try:
            for listener in listeners():
                listener.reset(side)
            side.execute("DELETE FROM sync_state")
            side.execute("DELETE FROM sync_sessions")
            side.execute("COMMIT")
        except BaseException:
            side.execute("ROLLBACK")
            raise
    finally:
        if own:
            side.close()


def forget_sessions(session_ids: Iterable[str]) -> bool:
    """Drop these sessions from every consumer now (called after a delete commits).

    Never raises: the store's delete has already happened, and if the side
    database is busy or damaged the next sync's walk of session ids forgets
    them anyway. Returns whether it succeeded (or there was nothing to do).
    """
    ids = [sid for sid in dict.fromkeys(session_ids) if isinstance(sid, str)]
    if not ids or not sidedb.exists():
        return True
    try:
        side = sidedb.connect(create=False, busy_timeout_ms=2000)
    except Exception:
        logger.warning("side database unavailable; the next sync forgets %d sessions", len(ids))
        return False
    try:
        prepare(side)
        for start in range(0, len(ids), 1000):
            side.execute("BEGIN IMMEDIATE")
            try:
                _forget_in(side, ids[start : start + 1000])
                side.execute("COMMIT")
            except BaseException:
                side.execute("ROLLBACK")
                raise
        return True
    except Exception:
        logger.exception("could not forget %d sessions; the next sync will", len(ids))
        return False
    finally:
        side.close()
