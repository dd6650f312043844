"""One pass over the store's new messages feeds every consumer of our side database.

``manage.py sync_index`` reads the messages after the last id it has seen
(:mod:`sessions_admin.store.feed`) and hands each batch to every
:class:`SyncListener` in :data:`LISTENERS`, inside the same transaction on
the side database as the batch's bookkeeping, so an interrupted build resumes
where its last committed batch ended and the consumers never drift apart.

Deletions reach the consumers two ways:

* the dashboard's own deletes call :func:`forget_sessions` right after the
  store's transaction commits (``deletion/``), so their rows go at once;
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
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from sessions_admin.ourdata import sidedb
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedMessage, FeedSession

logger = logging.getLogger(__name__)


class SyncListener(Protocol):
    """A consumer of the sync: the search index, the rollups.

    Optional methods, called when a listener has them:

    * ``update_sessions(side, sessions)`` takes the current rows
      (:class:`~sessions_admin.store.feed.FeedSession`) of sessions that are
      new or got new messages in the batch, in the batch's transaction;
    * ``finish_build(side)`` runs in its own transaction after a pass that
      took in at least :data:`LONG_PASS` messages (a first build), e.g. to
      merge an index's segments.

    Deferring an index to the end of a build was measured and dropped: this
    SQLite keeps its temporary files in memory (``SQLITE_TEMP_STORE=3``), so
    sorting ten million keys at the end took peak RSS to 628 MB.
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

#: Bumped when a table of the side database changes shape; an older file asks
#: for ``sync_index --rebuild`` (pages treat it as no index).
LAYOUT_VERSION = 1
#: Messages per batch (one side-database transaction each).
BATCH_SIZE = 20_000
#: A pass that took in this many messages ends with the listeners' ``finish_build``.
LONG_PASS = 1_000_000
#: Sessions per transaction when a pass meets sessions new to it.
SESSION_CHUNK = 10_000
#: Characters of a failed pass's reason kept for the pages.
ERROR_CHARS = 300

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sync_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sync_sessions (id TEXT PRIMARY KEY, last_active INTEGER) WITHOUT ROWID;
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
    sidedb.run_script(side, _SCHEMA)
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


def _set_state(side: sqlite3.Connection, **values: int | str | None) -> None:
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


def _stale_sessions(side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> list[str]:
    """Sessions whose row we hold is older than a message in the batch (or unknown).

    A first build reads every session row once, in the walk before the
    messages, so its batches re-read none; an incremental pass re-reads the
    rows of the sessions that got new messages.
    """
    newest: dict[str, int] = {}
    for message in batch:
        ts = message.ts if message.ts is not None else 0
        if ts > newest.get(message.session_id, -1):
            newest[message.session_id] = ts
    ids = list(newest)
    known: dict[str, int | None] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        known.update(
            side.execute(
                f"SELECT id, last_active FROM sync_sessions WHERE id IN ({marks})", chunk
            ).fetchall()
        )
    return [
        sid
        for sid, ts in newest.items()
        if sid not in known or not isinstance(known[sid], int) or known[sid] < ts
    ]


def _remember_sessions(
    side: sqlite3.Connection, ids: Sequence[str], sessions: dict[str, FeedSession]
) -> None:
    side.executemany(
        "INSERT INTO sync_sessions (id, last_active) VALUES (?, ?) "
        "ON CONFLICT (id) DO UPDATE SET last_active = excluded.last_active "
        "WHERE excluded.last_active IS NOT NULL",
        [(sid, sessions[sid].last_active if sid in sessions else None) for sid in ids],
    )


def _take_batch(side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> int:
    """One transaction: the listeners take the batch, and the bookkeeping moves on."""
    side.execute("BEGIN IMMEDIATE")
    try:
        stale = _stale_sessions(side, batch)
        sessions = feed.sessions_by_id(stale) if stale else {}
        for listener in listeners():
            listener.add_messages(side, batch)
        _call_update_sessions(side, list(sessions.values()))
        _remember_sessions(side, stale, sessions)
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


def _add_sessions(side: sqlite3.Connection, rows: dict[str, FeedSession]) -> None:
    side.execute("BEGIN IMMEDIATE")
    try:
        _call_update_sessions(side, list(rows.values()))
        _remember_sessions(side, list(rows), rows)
        side.execute("COMMIT")
    except BaseException:
        side.execute("ROLLBACK")
        raise


def _apply_session_changes(side: sqlite3.Connection, report: SyncReport) -> None:
    if side.execute("SELECT 1 FROM sync_sessions LIMIT 1").fetchone() is None:
        # A first build: every session is new, read them in one sequential scan.
        rows: dict[str, FeedSession] = {}
        for session in feed.all_sessions():
            rows[session.id] = session
            if len(rows) >= SESSION_CHUNK:
                _add_sessions(side, rows)
                report.sessions_added += len(rows)
                rows = {}
        if rows:
            _add_sessions(side, rows)
            report.sessions_added += len(rows)
        return
    gone, new = detect_deleted_sessions(side)
    for start in range(0, len(gone), SESSION_CHUNK):
        side.execute("BEGIN IMMEDIATE")
        try:
            _forget_in(side, gone[start : start + SESSION_CHUNK])
            side.execute("COMMIT")
        except BaseException:
            side.execute("ROLLBACK")
            raise
    for start in range(0, len(new), SESSION_CHUNK):
        _add_sessions(side, feed.sessions_by_id(new[start : start + SESSION_CHUNK]))
    if len(gone) >= SESSION_CHUNK:
        sidedb.release_free_pages(side)  # e.g. after a clear-all: give the disk back
    report.sessions_forgotten += len(gone)
    report.sessions_added += len(new)
    report.forgotten_ids = gone[:100]


def _take_all(
    side: sqlite3.Connection,
    prefetch: _Prefetch,
    last_id: int,
    total: int,
    report: SyncReport,
    on_progress: Callable[[Progress], None] | None,
    should_stop: Callable[[], bool] | None,
) -> int:
    """Every batch after ``last_id``, each in its own transaction; returns the last id."""
    started = time.perf_counter()
    while True:
        if should_stop is not None and should_stop():
            report.interrupted = True
            return last_id
        batch = prefetch.after(last_id)
        if not batch:
            return last_id
        report.messages += _take_batch(side, batch)
        report.batches += 1
        last_id = batch[-1].id
        if on_progress is not None:
            total = max(total, report.messages)
            on_progress(Progress(report.messages, total, time.perf_counter() - started, last_id))


class _Prefetch:
    """Reads the next batch from the store in a second thread while this one indexes it.

    SQLite releases the GIL while it steps, so reading batch n+1 (and turning
    its rows into FeedMessages) overlaps the FTS5 inserts of batch n: on two
    cores a first build runs faster. The thread has its own store connection
    (Django keeps one per thread), closed with the prefetcher.
    """

    def __init__(self, batch_size: int) -> None:
        self.batch_size = batch_size
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="sync-feed")
        self.pending: tuple[int, Future] | None = None

    def _read(self, after_id: int) -> list[FeedMessage]:
        return feed.messages_after(after_id, self.batch_size)

    def after(self, after_id: int) -> list[FeedMessage]:
        if self.pending is not None and self.pending[0] == after_id:
            batch = self.pending[1].result()
        else:
            batch = self.pool.submit(self._read, after_id).result()
        self.pending = None
        if len(batch) == self.batch_size:
            self.pending = (batch[-1].id, self.pool.submit(self._read, batch[-1].id))
        return batch

    def close(self) -> None:
        if self.pending is not None:
            self.pending[1].cancel()
        self.pool.submit(feed.close_thread_connection).result()
        self.pool.shutdown()


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
        try:
            _pass(side, report, batch_size, on_progress, should_stop)
        except Exception as exc:
            _record_failure(side, exc)
            raise
        _set_state(side, run_finished_at_ms=_now_ms())
    finally:
        if own:
            side.close()
    report.seconds = time.perf_counter() - started
    return report


def _pass(
    side: sqlite3.Connection,
    report: SyncReport,
    batch_size: int,
    on_progress: Callable[[Progress], None] | None,
    should_stop: Callable[[], bool] | None,
) -> None:
    prepare(side)
    _set_state(side, run_started_at_ms=_now_ms())
    state = read_state(side)
    if state.started_at_ms is None:
        _set_state(side, started_at_ms=_now_ms())
    _apply_session_changes(side, report)
    last_id = state.last_id
    newest = feed.last_message_id()
    total = max(newest - last_id, 0)
    prefetch = _Prefetch(batch_size)
    building = total >= LONG_PASS
    if building:
        # A build: no fsync per batch. A killed process loses nothing (the OS
        # has the pages) and a power cut at worst the file, which the next
        # --rebuild derives again; the commits stay, so resuming is exact.
        side.execute("PRAGMA synchronous = OFF")
    try:
        last_id = _take_all(side, prefetch, last_id, total, report, on_progress, should_stop)
    finally:
        prefetch.close()
        if building:
            side.execute("PRAGMA synchronous = NORMAL")
    if report.messages >= LONG_PASS and not report.interrupted:
        _finish_build(side)
    if not report.interrupted:
        _set_state(side, synced_at_ms=_now_ms())
    report.last_id = last_id


def _record_failure(side: sqlite3.Connection, exc: Exception) -> None:
    """Keep when and why this pass failed, for the pages (:func:`last_run`).

    The failed batch has already rolled back; this write is its own
    transaction. If even it fails (the side database is gone or locked), the
    pass's own error is the one that matters, so it is only logged.
    """
    reason = " ".join(f"{type(exc).__name__}: {exc}".split())[:ERROR_CHARS]
    try:
        if side.in_transaction:
            side.execute("ROLLBACK")
        sidedb.run_script(side, _SCHEMA)
        _set_state(side, run_failed_at_ms=_now_ms(), run_error=reason)
    except Exception:
        logger.exception("could not record the failed sync (%s)", reason)


@dataclass(frozen=True)
class LastRun:
    """The latest passes of ``sync_index``, as the side database's bookkeeping has them.

    Times are epoch milliseconds (``None``: never). ``failed_at_ms`` and
    ``error`` (one line, ``"OverflowError: …"``) are the last failure's, kept
    after later passes succeed; :attr:`failed` says whether the latest pass
    is the one that failed.
    """

    started_at_ms: int | None = None
    finished_at_ms: int | None = None
    failed_at_ms: int | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        if self.failed_at_ms is None:
            return False
        return self.started_at_ms is None or self.failed_at_ms >= self.started_at_ms


def last_run(side: sqlite3.Connection | None = None) -> LastRun:
    """When the latest sync started and finished, and the last failure (time and reason).

    Reads the side database (a read-only connection of its own unless one is
    given); with no side database yet, or one no sync has prepared, every
    field is ``None``.
    """
    own = side is None
    if own:
        side = sidedb.connect_readonly()
        if side is None:
            return LastRun()
    try:
        if not has_tables(side):
            return LastRun()
        values = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    finally:
        if own:
            side.close()

    def number(key: str) -> int | None:
        value = values.get(key)
        return value if isinstance(value, int) else None

    error = values.get("run_error")
    return LastRun(
        started_at_ms=number("run_started_at_ms"),
        finished_at_ms=number("run_finished_at_ms"),
        failed_at_ms=number("run_failed_at_ms"),
        error=error if isinstance(error, str) else None,
    )


def _finish_build(side: sqlite3.Connection) -> None:
    for listener in listeners():
        finish = getattr(listener, "finish_build", None)
        if finish is None:
            continue
        side.execute("BEGIN IMMEDIATE")
        try:
            finish(side)
            side.execute("COMMIT")
        except BaseException:
            side.execute("ROLLBACK")
            raise
    # The merge freed the old segments' pages and went through the WAL: give both back.
    side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sidedb.release_free_pages(side)


def rebuild() -> None:
    """Forget everything: a new, empty side database; the next pass builds from the start.

    Everything in it is derived from the store, so the file itself goes (and
    with it any free pages or tables of an older layout). Stop a running
    ``--follow`` first: it would keep writing to the removed file.
    """
    path = sidedb.side_path()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    side = sidedb.connect()
    try:
        prepare(side)
    finally:
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
