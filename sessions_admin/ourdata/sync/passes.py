"""One pass over the store's new messages feeds every consumer of our side database.

``manage.py sync_index`` reads the messages after the last id it has seen
(:mod:`sessions_admin.store.feed`) and hands each batch to every
:class:`SyncListener` in :data:`LISTENERS`, inside the same transaction on
the side database as the batch's bookkeeping, so an interrupted build resumes
where its last committed batch ended and the consumers never drift apart.

Changes to session rows reach the consumers three ways:

* the dashboard's own deletes call :func:`forget_sessions` right after the
  store's transaction commits (``deletion/``), so their rows go at once;
* a pass starts by walking every session row beside what it kept
  (:mod:`.sessionwalk`): rows the store lost are forgotten, new rows taken
  in (with any older messages of theirs), edited rows updated, and rows
  moved to another target, profile, principal or created_at forgotten and
  taken in again, so no count stays in the wrong cell (a first build, which
  holds nothing yet, walks after its batches instead: :func:`_walk_after`);
* each batch reads its sessions' rows inside its own transaction: messages
  whose session is gone (or never existed: orphans) are not counted, and
  the same reconciliation applies to rows edited since the walk.

One writer at a time: a pass holds :func:`sidedb.pass_lock` from start to
end, and every batch skips messages at or below the mark it reads inside its
transaction, so overlapping runs (two cron lines, cron beside ``--follow``)
can never count a message twice.

The consumers are the listeners the app registered
(:mod:`sessions_admin.ourdata.sync.listeners`).
"""

from __future__ import annotations

import logging
import sqlite3
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from sessions_admin import clock
from sessions_admin.ourdata import sessionwalk, sidedb
from sessions_admin.ourdata.sync.listeners import call_hooks, listeners
from sessions_admin.ourdata.sync.progress import progress_state
from sessions_admin.ourdata.sync.state import (
    BATCH_SIZE,
    LONG_PASS,
    SESSION_CHUNK,
    prepare,
    read_state,
    record_failure,
    set_state,
    side_transaction,
)
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedMessage, FeedSession

logger = logging.getLogger("sessions_admin.ourdata.sync")

#: Sessions forgotten per side transaction after our deletes.
FORGET_CHUNK = 10_000
#: From this many sessions a forgetting writes the text index from a thread of its own
#: (``begin_forgetting``): worth its connection and thread, which a single delete is not.
PARALLEL_FORGET = 1_000
#: Pages of the search index one purge step rewrites (about a tenth of a second).
PURGE_PAGES = 500


@dataclass
class SyncReport:
    messages: int = 0
    batches: int = 0
    sessions_forgotten: int = 0
    sessions_added: int = 0
    #: Rows edited in place (title, turn count, last activity...).
    sessions_updated: int = 0
    #: Sessions moved to another target, profile, principal or created_at: taken in again.
    sessions_retaken: int = 0
    last_id: int = feed.BEFORE_FIRST_ID
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


def _call_update_sessions(side: sqlite3.Connection, sessions: Sequence[FeedSession]) -> None:
    if not sessions:
        return
    for listener in listeners():
        update = getattr(listener, "update_sessions", None)
        if update is not None:
            update(side, sessions)


@dataclass(frozen=True)
class _Held:
    """What the last pass kept of a session row (digests of the whole row and its identity)."""

    sig: bytes
    ident: bytes


def _held(side: sqlite3.Connection, session_ids: Iterable[str]) -> dict[str, _Held]:
    found: dict[str, _Held] = {}
    for chunk in chunks(list(session_ids)):
        marks = placeholders(len(chunk))
        found.update(
            (sidedb.read_id(sid), _Held(sig, ident))
            for sid, sig, ident in side.execute(
                f"SELECT id, sig, ident FROM sync_sessions WHERE id IN ({marks})",
                [sidedb.bind_id(sid) for sid in chunk],
            )
        )
    return found


def _remember(side: sqlite3.Connection, rows: Iterable[FeedSession]) -> None:
    side.executemany(
        "INSERT INTO sync_sessions (id, srowid, sig, ident) VALUES (?, ?, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET srowid = excluded.srowid, sig = excluded.sig, "
        "ident = excluded.ident",
        [(sidedb.bind_id(row.id), row.rowid, row.sig, row.ident) for row in rows],
    )


def _forget_in(side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
    for listener in listeners():
        listener.forget_sessions(side, session_ids)
    side.executemany(
        "DELETE FROM sync_sessions WHERE id = ?", [(sidedb.bind_id(sid),) for sid in session_ids]
    )


def _feed_messages(side: sqlite3.Connection, messages: Sequence[FeedMessage]) -> None:
    for part in chunks(messages, BATCH_SIZE):
        for listener in listeners():
            listener.add_messages(side, part)


def _reconcile(
    side: sqlite3.Connection, rows: dict[str, FeedSession], up_to: int, report: SyncReport
) -> None:
    """Bring these sessions' share of every consumer in line with their current rows.

    A session new to us takes in its messages up to ``up_to`` (a first pass
    has none; later ones may: a session row that arrived after its messages).
    One whose target, profile, principal or created_at changed is forgotten
    and taken in again, so the rollups move its counts to the right cells.
    Any other edit (title, turn count, last activity) is an update. Runs
    inside the caller's transaction.
    """
    held = _held(side, rows)
    moved = [sid for sid, row in rows.items() if sid in held and held[sid].ident != row.ident]
    fresh = [sid for sid in rows if sid not in held]
    if moved:
        _forget_in(side, moved)
        report.sessions_retaken += len(moved)
    again = moved + fresh
    if again and up_to > feed.BEFORE_FIRST_ID:
        _feed_messages(side, _as_of(feed.messages_of_sessions(again, up_to), rows))
    edited = [row for sid, row in rows.items() if sid not in held or held[sid].sig != row.sig]
    _call_update_sessions(side, edited)
    _remember(side, edited)
    report.sessions_added += len(fresh)
    report.sessions_updated += len(edited) - len(fresh) - len(moved)


def _as_of(messages: Sequence[FeedMessage], rows: dict[str, FeedSession]) -> list[FeedMessage]:
    """The messages of sessions that still exist, carrying their rows' current columns.

    A batch is read without its sessions' columns (:func:`feed.messages_after`),
    and a session's messages read earlier may carry older ones: the rows read
    inside the transaction are what the sync keeps, so each message takes them
    (in place: the pass owns its batches). Orphans (no session row) are
    dropped: a message counts with its session.
    """
    kept: list[FeedMessage] = []
    for m in messages:
        row = rows.get(m.session_id)
        if row is None:
            continue
        m.target_key, m.profile_key, m.principal_id = (
            row.target_key,
            row.profile_key,
            row.principal_id,
        )
        kept.append(m)
    return kept


def _take_batch(
    side: sqlite3.Connection,
    batch: Sequence[FeedMessage],
    report: SyncReport,
    started: float,
    total: int,
) -> int:
    """One transaction: the batch's sessions reconciled, its messages taken in, the mark
    moved, and the pass's progress (since ``started``, of ``total``) recorded for the pages.

    Messages at or below the stored mark are skipped, so even two writers that
    got past the pass lock (it is advisory) could never count a message twice.
    """
    with side_transaction(side):
        mark = read_state(side).last_id
        batch = [m for m in batch if m.id > mark]
        if not batch:
            return 0
        ids = list(dict.fromkeys(m.session_id for m in batch))
        rows = feed.sessions_by_id(ids)
        vanished = [sid for sid in _held(side, ids) if sid not in rows]
        if vanished:
            _forget_in(side, vanished)
            report.sessions_forgotten += len(vanished)
        _reconcile(side, rows, mark, report)
        _feed_messages(side, _as_of(batch, rows))
        done = report.messages + len(batch)
        progress = progress_state(done, total, time.perf_counter() - started)
        set_state(side, last_id=batch[-1].id, **progress)
    return len(batch)


def _first_walk(side: sqlite3.Connection, up_to: int, report: SyncReport) -> None:
    """Every session row in one sequential scan, when we hold none: a first build whose
    batches took no session in (a store of sessions without messages yet)."""
    rows: dict[str, FeedSession] = {}
    for session in feed.all_sessions():
        rows[session.id] = session
        if len(rows) >= SESSION_CHUNK:
            with side_transaction(side):
                _reconcile(side, rows, up_to, report)
            rows = {}
    if rows:
        with side_transaction(side):
            _reconcile(side, rows, up_to, report)


def _holds_no_session(side: sqlite3.Connection) -> bool:
    return side.execute("SELECT 1 FROM sync_sessions LIMIT 1").fetchone() is None


def _walk_after(side: sqlite3.Connection) -> bool:
    """Should this pass walk the session rows after its messages, not before?

    When we hold no session (a first build, a rebuild), every batch takes in
    its sessions' rows as it reads them (:func:`_take_batch`), as any pass
    does for a session new to it. Walking 500,000 rows first cost a first
    build 30 s with the other core idle; inside the batches that work runs
    beside the reading and trigram threads. The walk afterwards finds what is
    left: sessions without a message, rows edited or deleted meanwhile. An
    interrupted build holds some sessions, so the next pass walks first, as
    usual.
    """
    return _holds_no_session(side)


def _apply_session_changes(side: sqlite3.Connection, up_to: int, report: SyncReport) -> None:
    """Forget the sessions the store lost; take in new, edited and moved rows."""
    if _holds_no_session(side):
        _first_walk(side, up_to, report)
    found = sessionwalk.walk(side)
    for chunk in chunks(found.gone, SESSION_CHUNK):
        with side_transaction(side):
            _forget_in(side, chunk)
    moved = set(found.moved)
    for chunk in chunks(found.new + found.changed + found.moved, SESSION_CHUNK):
        rows = feed.sessions_by_id(chunk)
        with side_transaction(side):
            # Gone since the walk, or moved (re-created: its old messages may be
            # gone too): forgotten, and the moved ones taken in again from scratch.
            _forget_in(side, [sid for sid in _held(side, chunk) if sid not in rows or sid in moved])
            _reconcile(side, rows, up_to, report)
    sessionwalk.settle(side, found)
    if len(found.gone) >= SESSION_CHUNK:
        sidedb.release_free_pages(side)  # e.g. after a clear-all: give the disk back
    set_state(side, unindexable_sessions=found.unindexable)
    report.sessions_forgotten += len(found.gone)
    report.forgotten_ids = found.gone[:100]


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
        report.messages += _take_batch(side, batch, report, started, total)
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
    committed batch. One pass at a time: while another holds the writer's
    lock this raises :class:`~sessions_admin.ourdata.sidedb.PassRunning` at
    once, having touched nothing.
    """
    started = time.perf_counter()
    report = SyncReport()
    with sidedb.pass_lock():
        own = side is None
        side = side or sidedb.connect()
        try:
            try:
                _pass(side, report, batch_size, on_progress, should_stop)
            except Exception as exc:
                record_failure(side, exc)
                raise
            set_state(side, run_finished_at_ms=clock.now_ms())
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
    call_hooks("begin_pass", side)
    try:
        _pass_work(side, report, batch_size, on_progress, should_stop)
    finally:
        call_hooks("end_pass", side)


def _pass_work(
    side: sqlite3.Connection,
    report: SyncReport,
    batch_size: int,
    on_progress: Callable[[Progress], None] | None,
    should_stop: Callable[[], bool] | None,
) -> None:
    state = read_state(side)
    backlog = _estimate(feed.last_message_id(), state.last_id)
    set_state(side, run_started_at_ms=clock.now_ms(), **progress_state(0, backlog, 0.0))
    if state.started_at_ms is None:
        set_state(side, started_at_ms=clock.now_ms())
    # A first build (no session held yet) takes its sessions in with their messages,
    # batch by batch, and walks the session rows once they are in: see _walk_after.
    walk_after = _walk_after(side)
    if not walk_after:
        _apply_session_changes(side, state.last_id, report)
    last_id = state.last_id
    newest = feed.last_message_id()
    total = _estimate(newest, last_id)
    prefetch = _Prefetch(batch_size)
    building = total >= LONG_PASS
    if building:
        # A build: no fsync per batch. A killed process loses nothing (the OS
        # has the pages) and a power cut at worst the file, which the next
        # --rebuild derives again; the commits stay, so resuming is exact.
        side.execute("PRAGMA synchronous = OFF")
        call_hooks("build_mode_on", side)
    try:
        last_id = _take_all(side, prefetch, last_id, total, report, on_progress, should_stop)
    finally:
        prefetch.close()
        if building:
            side.execute("PRAGMA synchronous = NORMAL")
            call_hooks("build_mode_off", side)
    if walk_after and not report.interrupted:
        # The sessions without a message, and any row edited or deleted meanwhile.
        _apply_session_changes(side, last_id, report)
    if report.messages >= LONG_PASS and not report.interrupted:
        _finish_build(side)
    if not report.interrupted:
        set_state(side, synced_at_ms=clock.now_ms())
    report.last_id = last_id


def _estimate(newest: int, last_id: int) -> int:
    """How many messages lie above ``last_id``, guessed from the ids (they may have gaps,
    and the mark before every id would count the negative half of the range)."""
    return max(newest - max(last_id, 0), 0)


def _finish_build(side: sqlite3.Connection) -> None:
    for listener in listeners():
        finish = getattr(listener, "finish_build", None)
        if finish is None:
            continue
        with side_transaction(side):
            finish(side)
    # The merge freed the old segments' pages and went through the WAL: give both back.
    side.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    sidedb.release_free_pages(side)


def rebuild() -> None:
    """Forget everything: a new, empty side database; the next pass builds from the start.

    Everything in it is derived from the store, so the file itself goes (and
    with it any free pages or tables of an older layout). Stop a running
    ``--follow`` first: it would keep writing to the removed file.
    """
    with sidedb.pass_lock():
        for path in (sidedb.side_path(), sidedb.text_path()):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{path}{suffix}").unlink(missing_ok=True)
        side = sidedb.connect()
        try:
            prepare(side)
        finally:
            side.close()


def _forget_all(side: sqlite3.Connection, ids: list[str], hold_purges: bool) -> None:
    large = len(ids) >= PARALLEL_FORGET
    if large:
        call_hooks("begin_forgetting", side)
    try:
        # Most of a transaction's cost is writing the rollup cells and index pages it
        # touched, which the sessions of one erasure share: the bigger, the cheaper.
        for chunk in chunks(ids, FORGET_CHUNK):
            with side_transaction(side):
                if hold_purges:
                    call_hooks("hold_purges", side)
                _forget_in(side, chunk)
    finally:
        if large:
            call_hooks("end_forgetting", side)


def forget_sessions(session_ids: Iterable[str], *, hold_purges: bool = False) -> bool:
    """Drop these sessions from every consumer now (called after a delete commits).

    Never raises: the store's delete has already happened, and if the side
    database is busy or damaged the next sync's walk of session ids forgets
    them anyway. Returns whether it succeeded (or there was nothing to do).

    ``hold_purges``: a listener that would rewrite its files to purge what was
    forgotten (the search index's segments) waits for :func:`purge_step`, which
    the caller then runs to the end (an erasure job, after its receipt).
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
        _forget_all(side, ids, hold_purges)
        return True
    except Exception:
        logger.exception("could not forget %d sessions; the next sync will", len(ids))
        return False
    finally:
        side.close()


def purge_step(pages: int = PURGE_PAGES) -> bool:
    """One short step of every listener's purge after a forgetting that held it
    (:func:`forget_sessions`); True while some listener has more to do."""
    if not sidedb.exists():
        return False
    more = False
    for listener in listeners():
        step = getattr(listener, "purge_step", None)
        if step is not None:
            more = step(pages) or more
    return more
