"""Every delete the dashboard makes: the runtime's cascade and its bulk forms.

The store is the runtime's; it keeps writing while we delete. So:

* The cascade's SQL lives in exactly one function, :func:`_cascade`. It runs
  inside one ``transaction.atomic(using="agents")`` (the backend makes that a
  ``BEGIN IMMEDIATE``) and issues, in the runtime's order (foreign keys are on,
  children go first)::

      DELETE FROM session_messages WHERE session_id = ?
      DELETE FROM session_state    WHERE session_id = ?
      DELETE FROM sessions         WHERE id         = ?

  or the same three with ``IN (?, …)`` for a batch of whole sessions.
* Bulk operations (a filtered set, retention, clear-all) are many short
  batches. Each batch is chosen outside any transaction, sized by the number
  of rows it will delete so it holds the write lock for a few tens of
  milliseconds, then re-checked *inside* its transaction: a session that
  stopped matching (it became active again, or is already gone) is left whole.
  Between batches we pause, so a runtime writer sleeping in SQLite's busy
  handler gets the lock; its longest wait stays well under half a second.
  A crash or a kill between (or inside) batches leaves every session either
  fully present or fully gone, because each batch is one transaction.
* Frame directories (``<frames root>/<id>/``) are removed only after the rows
  are committed, through :func:`sessions_admin.store.frames.remove_session_dir`
  (which never follows a symlink or leaves the root). A refusal is reported,
  never raised: the rows are gone either way.
* Every operation writes a :class:`~sessions_admin.models.DeletionAudit` row in
  Django's own database: "running" before it touches the store, the counts and
  outcome after, so even a crash leaves a trace.
* Read-only mode refuses everything with :class:`StoreReadOnly`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import DatabaseError, transaction
from django.utils import timezone

from sessions_admin.store import frames
from sessions_admin.store.connection import (
    StoreError,
    StoreReadOnly,
    describe_database_error,
    frames_root,
    is_read_only,
    store_connection,
    time_limit,
)
from sessions_admin.store.queries import SessionFilter
from sessions_admin.store.router import STORE_ALIAS
from sessions_admin.store.timeutil import to_epoch_ms

logger = logging.getLogger(__name__)

#: How long one batch may hold the store's write lock (aimed at, not guaranteed).
TARGET_BATCH_MS = 60
#: The pause after each batch: long enough for a writer polling in SQLite's busy
#: handler (which retries after 1, 2, 5, 10, 15, 20, 25 ms…) to get in.
MIN_PAUSE_MS = 25
PAUSE_FRACTION = 0.4
#: Most sessions in one ``IN (…)`` list (SQLite allows 32,766 parameters).
MAX_BATCH_SESSIONS = 500
#: Rows (messages + state + session) per batch before we have measured anything.
INITIAL_ROW_BUDGET = 2_000
MIN_ROW_BUDGET = 50
MAX_ROW_BUDGET = 50_000
#: Session ids listed in an audit row's target (the counts are always exact).
AUDIT_MAX_IDS = 1_000
#: Exact counts on the clear-all page may take a while on ten million messages.
COUNT_TIME_LIMIT_MS = 20_000


class SessionNotFound(StoreError):
    status_code = 404

    def __init__(self, session_id: str) -> None:
        super().__init__(f"No session with id {session_id!r} in the store; nothing was deleted.")


# --- Results ------------------------------------------------------------------------


@dataclass
class Counts:
    sessions: int = 0
    messages: int = 0
    state: int = 0

    def add(self, other: Counts) -> None:
        self.sessions += other.sessions
        self.messages += other.messages
        self.state += other.state

    @property
    def rows(self) -> int:
        return self.sessions + self.messages + self.state

    def describe(self) -> str:
        return (f"{self.sessions:,} session{'s' if self.sessions != 1 else ''}, "
                f"{self.messages:,} message{'s' if self.messages != 1 else ''}, "
                f"{self.state:,} state row{'s' if self.state != 1 else ''}")


@dataclass
class FramesReport:
    dirs_removed: int = 0
    bytes_removed: int = 0
    files_removed: int = 0
    missing: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (session id, reason)

    def describe(self) -> str:
        parts = []
        if self.dirs_removed:
            parts.append(f"frames removed ({self.dirs_removed:,} "
                         f"director{'ies' if self.dirs_removed != 1 else 'y'}, "
                         f"{self.bytes_removed:,} bytes)")
        elif not self.refused:
            parts.append("no frames directory")
        if self.refused:
            parts.append(f"frames NOT removed for {len(self.refused):,} session"
                         f"{'s' if len(self.refused) != 1 else ''}: {self.refused[0][1]}")
        return "; ".join(parts)


@dataclass
class DeletionResult:
    counts: Counts
    frames: FramesReport | None = None
    audit_id: int | None = None
    dry_run: bool = False
    done: bool = True
    batches: int = 0
    longest_batch_ms: float = 0.0
    skipped: int = 0  # sessions that stopped matching and were left whole

    def describe(self) -> str:
        """``87 messages, 2 state rows, frames removed``: what the flash message says."""
        counts = self.counts
        text = (f"{counts.messages:,} message{'s' if counts.messages != 1 else ''}, "
                f"{counts.state:,} state row{'s' if counts.state != 1 else ''}")
        if counts.sessions != 1:
            text = f"{counts.sessions:,} sessions, {text}"
        if self.frames is not None:
            text += f", {self.frames.describe()}"
        return text


@dataclass(frozen=True)
class Actor:
    """Who deletes: a signed-in user, or a command (``manage.py clear_sessions``)."""

    name: str
    user: Any = None

    @classmethod
    def of(cls, user: Any) -> Actor:
        return cls(name=user.get_username(), user=user)

    @classmethod
    def command(cls, name: str) -> Actor:
        return cls(name=f"manage.py {name}")


@dataclass(frozen=True)
class SessionPreview:
    """What deleting one session would remove (for the confirmation dialog)."""

    session_id: str
    messages: int
    state: int
    frames_bytes: int | None  # None: no directory
    frames_files: int | None
    frames_refusal: str | None = None


@dataclass
class OrphanedChildren:
    session_ids: list[str]
    messages: int
    state: int


# --- SQL: the only place that writes to the store -----------------------------------


def _sql(sql: str) -> str:
    # The SQL reads with SQLite's own ``?``; Django's cursor wants ``%s``.
    return sql.replace("?", "%s")


def _execute(sql: str, params: Sequence[Any]) -> int:
    with store_connection().cursor() as cursor:
        cursor.execute(_sql(sql), list(params))
        return cursor.rowcount


def _fetch(sql: str, params: Sequence[Any]) -> list[tuple]:
    with store_connection().cursor() as cursor:
        cursor.execute(_sql(sql), list(params))
        return cursor.fetchall()


def _cascade(
    session_ids: Sequence[str],
    *,
    still_matching: SessionFilter | None = None,
    children_only: bool = False,
) -> tuple[Counts, list[str]]:
    """Delete whole sessions in one IMMEDIATE transaction, children first.

    One id gives exactly the runtime's three statements. Several give the
    same three over ``IN (…)``, after a re-check inside the transaction:
    with ``still_matching``, sessions that no longer match it are left alone.
    ``children_only`` is for orphans: it deletes messages and state of ids
    that have no session row (re-checked too) and never touches ``sessions``.
    Returns the counts and the ids actually deleted.
    """
    if is_read_only():
        raise StoreReadOnly()
    ids = list(dict.fromkeys(session_ids))
    if not ids:
        return Counts(), []
    try:
        with transaction.atomic(using=STORE_ALIAS):
            if children_only:
                marks = ", ".join("?" * len(ids))
                present = {row[0] for row in _fetch(
                    f"SELECT id FROM sessions WHERE id IN ({marks})", ids)}
                ids = [i for i in ids if i not in present]
            elif still_matching is not None:
                marks = ", ".join("?" * len(ids))
                clauses, params = still_matching.where()
                where = " AND ".join([f"id IN ({marks})", *clauses])
                present = {row[0] for row in _fetch(
                    f"SELECT id FROM sessions WHERE {where}", [*ids, *params])}
                ids = [i for i in ids if i in present]
            if not ids:
                return Counts(), []
            match = "= ?" if len(ids) == 1 else f"IN ({', '.join('?' * len(ids))})"
            counts = Counts()
            counts.messages = _execute(
                f"DELETE FROM session_messages WHERE session_id {match}", ids)
            counts.state = _execute(f"DELETE FROM session_state WHERE session_id {match}", ids)
            if not children_only:
                counts.sessions = _execute(f"DELETE FROM sessions WHERE id {match}", ids)
    except DatabaseError as exc:
        raise describe_database_error(exc) from exc
    return counts, ids


# --- Audit ---------------------------------------------------------------------------


def _audit_start(operation: str, actor: Actor, target: dict[str, Any]):
    from sessions_admin.models import DeletionAudit

    user = actor.user if getattr(actor.user, "pk", None) else None
    return DeletionAudit.objects.create(
        operation=operation, actor=actor.name[:200], user=user, target=target,
        outcome=DeletionAudit.Outcome.RUNNING,
    )


def _audit_save(audit, counts: Counts, report: FramesReport | None, outcome: str,
                detail: str = "", *, finished: bool = True) -> None:
    audit.sessions_deleted = counts.sessions
    audit.messages_deleted = counts.messages
    audit.state_deleted = counts.state
    if report is not None:
        audit.frame_dirs_removed = report.dirs_removed
        audit.frame_bytes_removed = report.bytes_removed
        if report.refused:
            refusals = "; ".join(f"{sid!r}: {why}" for sid, why in report.refused[:20])
            more = len(report.refused) - 20
            detail = "\n".join(filter(None, [detail, f"frames refused: {refusals}"
                                             + (f" (and {more} more)" if more > 0 else "")]))
    audit.outcome = outcome
    audit.detail = detail
    audit.finished_at = timezone.now() if finished else None
    audit.save()


def _refuse(operation: str, actor: Actor, target: dict[str, Any], error: StoreError) -> None:
    from sessions_admin.models import DeletionAudit

    audit = _audit_start(operation, actor, target)
    _audit_save(audit, Counts(), None, DeletionAudit.Outcome.REFUSED, error.message)


def _check_writable(operation: str, actor: Actor, target: dict[str, Any]) -> None:
    if is_read_only():
        error = StoreReadOnly()
        _refuse(operation, actor, target, error)
        raise error


# --- Frames --------------------------------------------------------------------------


def _remove_frames(session_ids: Iterable[str], report: FramesReport) -> None:
    """Remove each session's frame directory; refusals are recorded, not raised."""
    root = frames_root()
    for session_id in session_ids:
        try:
            removed = frames.remove_session_dir(root, session_id)
        except frames.FramesRefused as exc:
            report.refused.append((session_id, str(exc)))
            continue
        except OSError as exc:
            report.refused.append((session_id, f"could not remove: {exc.strerror or exc}"))
            continue
        if removed.files == 0 and removed.bytes == 0:
            # remove_session_dir reports a missing directory as (0, 0); an empty
            # one is removed too, and counts as a directory removed.
            report.missing += 1
        else:
            report.dirs_removed += 1
            report.bytes_removed += removed.bytes
            report.files_removed += removed.files


# --- One session ---------------------------------------------------------------------


def preview_session(session_id: str) -> SessionPreview:
    """Counts for the confirmation dialog (and the frames directory's size)."""
    messages = _fetch("SELECT COUNT(*) FROM session_messages WHERE session_id = ?",
                      [session_id])[0][0]
    state = _fetch("SELECT COUNT(*) FROM session_state WHERE session_id = ?", [session_id])[0][0]
    frames_bytes = frames_files = None
    refusal = None
    try:
        usage = frames.dir_usage(frames_root(), session_id)
    except frames.FramesRefused as exc:
        refusal = str(exc)
    except OSError as exc:
        refusal = f"cannot read it: {exc.strerror or exc}"
    else:
        if usage is not None:
            frames_bytes, frames_files = usage
    return SessionPreview(session_id, messages, state, frames_bytes, frames_files, refusal)


def delete_session(session_id: str, *, actor: Actor, wipe_frames: bool = False) -> DeletionResult:
    """The runtime's ``$sessionDelete``; with ``wipe_frames`` also its frames directory."""
    from sessions_admin.models import DeletionAudit

    operation = (DeletionAudit.Operation.WIPE_SESSION if wipe_frames
                 else DeletionAudit.Operation.DELETE_SESSION)
    target = {"session_ids": [session_id]}
    _check_writable(operation, actor, target)
    audit = _audit_start(operation, actor, target)
    started = time.perf_counter()
    try:
        counts, deleted = _cascade([session_id])
    except BaseException as exc:
        _audit_save(audit, Counts(), None, DeletionAudit.Outcome.FAILED, _failure_text(exc))
        raise
    cascade_ms = (time.perf_counter() - started) * 1000  # BEGIN IMMEDIATE … COMMIT
    if counts.rows == 0:
        error = SessionNotFound(session_id)
        _audit_save(audit, counts, None, DeletionAudit.Outcome.REFUSED, error.message)
        raise error
    report = None
    if wipe_frames:
        report = FramesReport()
        _remove_frames(deleted, report)
    outcome = (DeletionAudit.Outcome.PARTIAL if report and report.refused
               else DeletionAudit.Outcome.OK)
    _audit_save(audit, counts, report, outcome)
    return DeletionResult(counts=counts, frames=report, audit_id=audit.pk, batches=1,
                          longest_batch_ms=cascade_ms)


# --- Bulk ----------------------------------------------------------------------------


BatchHook = Callable[[Counts, int], None]


@dataclass
class _Pacer:
    """Sizes batches so each holds the write lock about ``TARGET_BATCH_MS``."""

    # Read when a pacer is made, so the module's settings can be tuned at run time.
    row_budget: int = field(default_factory=lambda: INITIAL_ROW_BUDGET)
    target_ms: float = field(default_factory=lambda: TARGET_BATCH_MS)
    longest_ms: float = 0.0

    def record(self, rows: int, elapsed_ms: float) -> float:
        self.longest_ms = max(self.longest_ms, elapsed_ms)
        if rows > 0 and elapsed_ms > 0:
            rate = rows / elapsed_ms
            wanted = int(rate * self.target_ms)
            # Move halfway toward what the last batch suggests, to damp noise.
            self.row_budget = max(MIN_ROW_BUDGET,
                                  min(MAX_ROW_BUDGET, (self.row_budget + wanted) // 2))
        return max(MIN_PAUSE_MS, elapsed_ms * PAUSE_FRACTION)


def _max_rowid() -> int:
    return _fetch("SELECT MAX(rowid) FROM sessions", [])[0][0] or 0


def _candidates(session_filter: SessionFilter, after_rowid: int, limit: int,
                max_rowid: int | None = None) -> list[tuple]:
    """The next sessions matching the filter, in rowid order (read, no lock).

    Walking the table by rowid reads it once over the whole operation, whatever
    the filter, and never revisits rows already decided."""
    clauses, params = session_filter.where()
    bound: list[str] = []
    bound_params: list[Any] = []
    if max_rowid is not None:
        bound, bound_params = ["rowid <= ?"], [max_rowid]
    where = " AND ".join(["rowid > ?", *bound, *clauses])
    return _fetch(f"SELECT rowid, id FROM sessions WHERE {where} ORDER BY rowid LIMIT ?",
                  [after_rowid, *bound_params, *params, limit])


def _child_counts(session_ids: list[str]) -> dict[str, int]:
    """Messages + state rows per session (index-only reads, no lock)."""
    marks = ", ".join("?" * len(session_ids))
    sizes: dict[str, int] = dict.fromkeys(session_ids, 0)
    for table in ("session_messages", "session_state"):
        for sid, count in _fetch(
            f"SELECT session_id, COUNT(*) FROM {table} WHERE session_id IN ({marks}) "
            "GROUP BY session_id", session_ids,
        ):
            sizes[sid] = sizes.get(sid, 0) + count
    return sizes


def _chunks(session_ids: list[str], sizes: dict[str, int], budget: int) -> list[list[str]]:
    """Split into batches of whole sessions holding at most ``budget`` rows (one
    oversized session makes a batch of its own)."""
    batches: list[list[str]] = []
    current: list[str] = []
    rows = 0
    for sid in session_ids:
        weight = sizes.get(sid, 0) + 1
        if current and rows + weight > budget:
            batches.append(current)
            current, rows = [], 0
        current.append(sid)
        rows += weight
    if current:
        batches.append(current)
    return batches


@dataclass
class _BulkState:
    counts: Counts = field(default_factory=Counts)
    report: FramesReport | None = None
    after_rowid: int = 0
    #: The highest rowid when the operation started: sessions the runtime creates
    #: meanwhile are not part of it (and a clear-all under load still ends).
    max_rowid: int = 0
    batches: int = 0
    skipped: int = 0
    done: bool = False


def _run_bulk(
    session_filter: SessionFilter,
    state: _BulkState,
    *,
    wipe_frames: bool,
    deadline: float | None = None,
    on_batch: BatchHook | None = None,
    pacer: _Pacer | None = None,
) -> _Pacer:
    pacer = pacer or _Pacer()
    # At least one round per call, so a step with a tiny time budget still progresses.
    rounds = 0
    while True:
        if deadline is not None and rounds and time.monotonic() >= deadline:
            break
        rounds += 1
        limit = max(1, min(MAX_BATCH_SESSIONS, pacer.row_budget))
        rows = _candidates(session_filter, state.after_rowid, limit, state.max_rowid)
        if not rows:
            state.done = True
            break
        state.after_rowid = rows[-1][0]
        ids = [row[1] for row in rows]
        sizes = _child_counts(ids)
        for batch in _chunks(ids, sizes, pacer.row_budget):
            started = time.perf_counter()
            counts, deleted = _cascade(batch, still_matching=session_filter)
            elapsed_ms = (time.perf_counter() - started) * 1000
            state.counts.add(counts)
            state.batches += 1
            state.skipped += len(batch) - len(deleted)
            if wipe_frames and deleted:
                _remove_frames(deleted, state.report)
            if on_batch is not None:
                on_batch(state.counts, state.batches)
            # Let a writer waiting in its busy handler take the lock.
            time.sleep(pacer.record(counts.rows, elapsed_ms) / 1000)
    return pacer


def _failure_text(exc: BaseException) -> str:
    if isinstance(exc, StoreError):
        return exc.message
    return f"{type(exc).__name__}: {exc}"


def _bulk(
    operation: str,
    session_filter: SessionFilter,
    target: dict[str, Any],
    *,
    actor: Actor,
    wipe_frames: bool,
    dry_run: bool,
    on_batch: BatchHook | None,
) -> DeletionResult:
    from sessions_admin.models import DeletionAudit

    if dry_run:
        return DeletionResult(counts=count_matching(session_filter), dry_run=True)
    _check_writable(operation, actor, target)
    audit = _audit_start(operation, actor, {**target, "wipe_frames": wipe_frames})
    state = _BulkState(report=FramesReport() if wipe_frames else None, max_rowid=_max_rowid())
    try:
        pacer = _run_bulk(session_filter, state, wipe_frames=wipe_frames, on_batch=on_batch)
    except BaseException as exc:
        # Whole batches only: what is counted is gone, everything else is intact.
        _audit_save(audit, state.counts, state.report, DeletionAudit.Outcome.FAILED,
                    f"stopped after {state.batches} batches: {_failure_text(exc)}")
        raise
    outcome = (DeletionAudit.Outcome.PARTIAL if state.report and state.report.refused
               else DeletionAudit.Outcome.OK)
    detail = f"{state.batches} batches, longest {pacer.longest_ms:.0f} ms"
    if state.skipped:
        detail += f"; {state.skipped} sessions stopped matching and were left whole"
    _audit_save(audit, state.counts, state.report, outcome, detail)
    return DeletionResult(counts=state.counts, frames=state.report, audit_id=audit.pk,
                          batches=state.batches, longest_batch_ms=pacer.longest_ms,
                          skipped=state.skipped)


def delete_filtered(session_filter: SessionFilter, *, actor: Actor, dry_run: bool = False,
                    wipe_frames: bool = False, on_batch: BatchHook | None = None
                    ) -> DeletionResult:
    """Every session matching the list filters (e.g. one principal's, for an erasure)."""
    from sessions_admin.models import DeletionAudit

    if session_filter.is_empty():
        raise StoreError("A filtered delete needs at least one filter; use clear-all for "
                         "every session.")
    return _bulk(DeletionAudit.Operation.DELETE_FILTERED, session_filter,
                 {"filter": session_filter.describe()}, actor=actor, wipe_frames=wipe_frames,
                 dry_run=dry_run, on_batch=on_batch)


def clear_all(*, actor: Actor, dry_run: bool = False, wipe_frames: bool = False,
              on_batch: BatchHook | None = None) -> DeletionResult:
    """The runtime's ``$sessionClearAll``: every session with its messages and state."""
    from sessions_admin.models import DeletionAudit

    return _bulk(DeletionAudit.Operation.CLEAR_ALL, SessionFilter(), {"all": True},
                 actor=actor, wipe_frames=wipe_frames, dry_run=dry_run, on_batch=on_batch)


def retention_filter(older_than: timedelta, *, now=None) -> SessionFilter:
    cutoff = (now or timezone.now()) - older_than
    return SessionFilter(active_before_ms=to_epoch_ms(cutoff))


def delete_older_than(older_than: timedelta, *, actor: Actor, dry_run: bool = False,
                      wipe_frames: bool = False, on_batch: BatchHook | None = None
                      ) -> DeletionResult:
    """Retention: sessions whose last activity is older than ``older_than``."""
    from sessions_admin.models import DeletionAudit

    if older_than <= timedelta(0):
        raise StoreError("The retention age must be positive.")
    session_filter = retention_filter(older_than)
    target = {"older_than_days": older_than.total_seconds() / 86400,
              "active_before_ms": session_filter.active_before_ms}
    return _bulk(DeletionAudit.Operation.RETENTION, session_filter, target, actor=actor,
                 wipe_frames=wipe_frames, dry_run=dry_run, on_batch=on_batch)


def delete_sessions(session_ids: Sequence[str], *, actor: Actor, wipe_frames: bool = False
                    ) -> DeletionResult:
    """Selected sessions (the admin's action), in paced batches of whole sessions."""
    from sessions_admin.models import DeletionAudit

    ids = list(dict.fromkeys(session_ids))
    target = {"session_ids": ids[:AUDIT_MAX_IDS], "selected": len(ids)}
    operation = DeletionAudit.Operation.DELETE_FILTERED
    _check_writable(operation, actor, target)
    audit = _audit_start(operation, actor, target)
    counts = Counts()
    report = FramesReport() if wipe_frames else None
    pacer = _Pacer()
    batches = 0
    try:
        for start in range(0, len(ids), MAX_BATCH_SESSIONS):
            chunk = ids[start:start + MAX_BATCH_SESSIONS]
            for batch in _chunks(chunk, _child_counts(chunk), pacer.row_budget):
                started = time.perf_counter()
                batch_counts, deleted = _cascade(batch)
                counts.add(batch_counts)
                batches += 1
                if report is not None:
                    _remove_frames(deleted, report)
                elapsed_ms = (time.perf_counter() - started) * 1000
                time.sleep(pacer.record(batch_counts.rows, elapsed_ms) / 1000)
    except BaseException as exc:
        _audit_save(audit, counts, report, DeletionAudit.Outcome.FAILED, _failure_text(exc))
        raise
    outcome = (DeletionAudit.Outcome.PARTIAL if report and report.refused
               else DeletionAudit.Outcome.OK)
    _audit_save(audit, counts, report, outcome, f"{batches} batches")
    return DeletionResult(counts=counts, frames=report, audit_id=audit.pk, batches=batches,
                          longest_batch_ms=pacer.longest_ms)


# --- Stepped clear-all (the admin page drives it one request at a time) ---------------


def start_clear_all(*, actor: Actor, expected_sessions: int, wipe_frames: bool = False):
    """Open the audit row of a clear-all that :func:`continue_clear_all` will run."""
    from sessions_admin.models import DeletionAudit

    target = {"all": True, "expected_sessions": expected_sessions, "after_rowid": 0,
              "max_rowid": _max_rowid(), "batches": 0, "wipe_frames": wipe_frames}
    _check_writable(DeletionAudit.Operation.CLEAR_ALL, actor, target)
    return _audit_start(DeletionAudit.Operation.CLEAR_ALL, actor, target)


def continue_clear_all(audit, *, seconds: float = 1.0) -> DeletionResult:
    """Run the clear-all recorded in ``audit`` for about ``seconds``, then save progress.

    The audit row carries the position and the running counts, so each step
    (one request) picks up where the last stopped; a step that never comes
    leaves a "running" row whose counts are exactly what is gone.
    """
    from sessions_admin.models import DeletionAudit

    if audit.outcome != DeletionAudit.Outcome.RUNNING:
        counts = Counts(audit.sessions_deleted, audit.messages_deleted, audit.state_deleted)
        return DeletionResult(counts=counts, audit_id=audit.pk, done=True)
    if is_read_only():
        _audit_save(audit, Counts(audit.sessions_deleted, audit.messages_deleted,
                                  audit.state_deleted), None, DeletionAudit.Outcome.REFUSED,
                    StoreReadOnly().message)
        raise StoreReadOnly()
    target = dict(audit.target)
    wipe = bool(target.get("wipe_frames"))
    state = _BulkState(
        counts=Counts(audit.sessions_deleted, audit.messages_deleted, audit.state_deleted),
        report=FramesReport(dirs_removed=audit.frame_dirs_removed,
                            bytes_removed=audit.frame_bytes_removed) if wipe else None,
        after_rowid=int(target.get("after_rowid", 0)),
        max_rowid=int(target.get("max_rowid", 0)),
        batches=int(target.get("batches", 0)),
    )
    try:
        pacer = _run_bulk(SessionFilter(), state, wipe_frames=wipe,
                          deadline=time.monotonic() + seconds)
    except BaseException as exc:
        _audit_save(audit, state.counts, state.report, DeletionAudit.Outcome.FAILED,
                    f"stopped after {state.batches} batches: {_failure_text(exc)}")
        raise
    audit.target = {**target, "after_rowid": state.after_rowid, "batches": state.batches}
    if state.done:
        outcome = (DeletionAudit.Outcome.PARTIAL if state.report and state.report.refused
                   else DeletionAudit.Outcome.OK)
        _audit_save(audit, state.counts, state.report, outcome, f"{state.batches} batches")
    else:
        _audit_save(audit, state.counts, state.report, DeletionAudit.Outcome.RUNNING,
                    f"{state.batches} batches so far", finished=False)
    return DeletionResult(counts=state.counts, frames=state.report, audit_id=audit.pk,
                          done=state.done, batches=state.batches,
                          longest_batch_ms=pacer.longest_ms)


# --- Counting ------------------------------------------------------------------------


def count_all() -> Counts:
    """Exact totals of the three tables (for the clear-all confirmation)."""
    with time_limit(COUNT_TIME_LIMIT_MS):
        return Counts(
            sessions=_fetch("SELECT COUNT(*) FROM sessions", [])[0][0],
            messages=_fetch("SELECT COUNT(*) FROM session_messages", [])[0][0],
            state=_fetch("SELECT COUNT(*) FROM session_state", [])[0][0],
        )


def count_matching(session_filter: SessionFilter) -> Counts:
    """Exactly what a bulk delete with this filter would remove right now (dry run)."""
    if session_filter.is_empty():
        return count_all()
    counts = Counts()
    after = 0
    with time_limit(COUNT_TIME_LIMIT_MS):
        while rows := _candidates(session_filter, after, MAX_BATCH_SESSIONS):
            after = rows[-1][0]
            ids = [row[1] for row in rows]
            marks = ", ".join("?" * len(ids))
            counts.sessions += len(ids)
            counts.messages += _fetch(
                f"SELECT COUNT(*) FROM session_messages WHERE session_id IN ({marks})", ids)[0][0]
            counts.state += _fetch(
                f"SELECT COUNT(*) FROM session_state WHERE session_id IN ({marks})", ids)[0][0]
    return counts


def count_ids(session_ids: Sequence[str]) -> Counts:
    """Exactly what deleting these sessions would remove (missing ids count nothing)."""
    ids = list(dict.fromkeys(session_ids))
    counts = Counts()
    for start in range(0, len(ids), MAX_BATCH_SESSIONS):
        chunk = ids[start:start + MAX_BATCH_SESSIONS]
        marks = ", ".join("?" * len(chunk))
        counts.sessions += _fetch(f"SELECT COUNT(*) FROM sessions WHERE id IN ({marks})",
                                  chunk)[0][0]
        counts.messages += _fetch(
            f"SELECT COUNT(*) FROM session_messages WHERE session_id IN ({marks})", chunk)[0][0]
        counts.state += _fetch(
            f"SELECT COUNT(*) FROM session_state WHERE session_id IN ({marks})", chunk)[0][0]
    return counts


# --- Orphaned children ---------------------------------------------------------------


def find_orphaned_children(limit_ms: int = COUNT_TIME_LIMIT_MS) -> OrphanedChildren:
    """Messages and state whose session row is missing (a crashed writer's leftovers)."""
    found: dict[str, None] = {}
    messages = state = 0
    with time_limit(limit_ms):
        for table in ("session_messages", "session_state"):
            rows = _fetch(
                f"SELECT session_id, COUNT(*) FROM {table} AS child WHERE NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE sessions.id = child.session_id) "
                "GROUP BY session_id", [])
            for sid, count in rows:
                found[sid] = None
                if table == "session_messages":
                    messages += count
                else:
                    state += count
    return OrphanedChildren(sorted(found), messages, state)


def remove_orphaned_children(*, actor: Actor) -> DeletionResult:
    """Delete orphaned messages and state (never a session row), batch by batch."""
    from sessions_admin.models import DeletionAudit

    operation = DeletionAudit.Operation.ORPHAN_CHILDREN
    _check_writable(operation, actor, {"orphans": True})
    orphans = find_orphaned_children()
    audit = _audit_start(operation, actor, {"orphans": True,
                                            "session_ids": orphans.session_ids[:AUDIT_MAX_IDS]})
    counts = Counts()
    pacer = _Pacer()
    batches = 0
    try:
        ids = orphans.session_ids
        for start in range(0, len(ids), MAX_BATCH_SESSIONS):
            chunk = ids[start:start + MAX_BATCH_SESSIONS]
            for batch in _chunks(chunk, _child_counts(chunk), pacer.row_budget):
                started = time.perf_counter()
                batch_counts, _ = _cascade(batch, children_only=True)
                counts.add(batch_counts)
                batches += 1
                elapsed_ms = (time.perf_counter() - started) * 1000
                time.sleep(pacer.record(batch_counts.rows, elapsed_ms) / 1000)
    except BaseException as exc:
        _audit_save(audit, counts, None, DeletionAudit.Outcome.FAILED, _failure_text(exc))
        raise
    _audit_save(audit, counts, None, DeletionAudit.Outcome.OK, f"{batches} batches")
    return DeletionResult(counts=counts, audit_id=audit.pk, batches=batches)


# --- Orphaned frame directories -----------------------------------------------------


def _existing_ids(session_ids: list[str]) -> set[str]:
    """Which of these ids have a session row (for :func:`frames.scan_frame_dirs`)."""
    found: set[str] = set()
    for start in range(0, len(session_ids), MAX_BATCH_SESSIONS):
        chunk = session_ids[start:start + MAX_BATCH_SESSIONS]
        marks = ", ".join("?" * len(chunk))
        found.update(row[0] for row in _fetch(
            f"SELECT id FROM sessions WHERE id IN ({marks})", chunk))
    return found


def find_orphan_frames() -> frames.OrphanReport:
    """Frame directories with no session row (the runtime's own deletes leave them),
    with every directory's size, in one scan of the frames root."""
    return frames.scan_frame_dirs(frames_root(), _existing_ids)


def remove_orphan_frames(session_ids: Sequence[str] | None = None, *, actor: Actor
                         ) -> DeletionResult:
    """Remove orphaned frame directories: the ``session_ids`` given, or (None) every
    orphan a fresh scan finds. Never touches the store's rows.

    Each id is re-checked against the store just before its directory goes, so a
    directory whose session row exists (again: the runtime reuses an id, or the id was
    never an orphan) is left alone and counted in ``skipped``. Ids that are not a plain
    directory under the root are refused by :mod:`~sessions_admin.store.frames` and
    recorded as refusals, never raised.
    """
    from sessions_admin.models import DeletionAudit

    operation = DeletionAudit.Operation.ORPHAN_FRAMES
    every = session_ids is None
    target: dict[str, Any] = {"orphans": "all" if every else "selected"}
    if not every:
        target["session_ids"] = list(dict.fromkeys(session_ids))[:AUDIT_MAX_IDS]
    _check_writable(operation, actor, target)
    audit = _audit_start(operation, actor, target)
    report = FramesReport()
    skipped = 0
    try:
        if every:
            ids = [d.session_id for d in find_orphan_frames().orphans]
            audit.target = {**target, "session_ids": ids[:AUDIT_MAX_IDS], "found": len(ids)}
        else:
            ids = list(dict.fromkeys(session_ids))
        for start in range(0, len(ids), MAX_BATCH_SESSIONS):
            chunk = ids[start:start + MAX_BATCH_SESSIONS]
            present = _existing_ids(chunk)
            skipped += len(present)
            _remove_frames([sid for sid in chunk if sid not in present], report)
    except BaseException as exc:
        _audit_save(audit, Counts(), report, DeletionAudit.Outcome.FAILED, _failure_text(exc))
        raise
    outcome = DeletionAudit.Outcome.PARTIAL if report.refused else DeletionAudit.Outcome.OK
    detail = f"{report.missing} already gone" if report.missing else ""
    if skipped:
        detail = "; ".join(filter(None, [detail, f"{skipped} have a session row and were "
                                                  "left alone"]))
    _audit_save(audit, Counts(), report, outcome, detail)
    return DeletionResult(counts=Counts(), frames=report, audit_id=audit.pk, skipped=skipped)
