"""Bulk deletes as many short, paced batches of whole sessions.

Candidates are walked in rowid order outside any transaction, cut into
batches sized (by :class:`Pacer`) to hold the write lock about
``TARGET_BATCH_MS``, and each batch goes through
:func:`~sessions_admin.deletion.cascade.cascade_delete` with a re-check
inside its transaction. Built on it: a filtered set, clear-all, retention,
selected ids (the admin action), and the stepped clear-all the admin page
drives one request at a time. What it reads to choose and size batches, and
the exact counts of a dry run, are the store's (:mod:`sessions_admin.store.cascade`).

The settings below are read at run time (a pacer reads them when it is made),
so tests and callers tune them on this module.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from sessions_admin.deletion.audit import (
    AUDIT_MAX_IDS,
    audited,
    check_writable,
    start_audit,
)
from sessions_admin.deletion.cascade import cascade_delete
from sessions_admin.deletion.results import Actor, DeletionResult
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.jobs import Job
from sessions_admin.sqlhelpers import CHUNK, chunks
from sessions_admin.store.cascade import (
    Counts,
    FramesReport,
    candidates,
    child_counts,
    count_matching,
    max_rowid,
    remove_frames,
)
from sessions_admin.store.connection import StoreError
from sessions_admin.store.queries import SessionFilter
from sessions_admin.store.timeutil import to_epoch_ms

#: How long one batch may hold the store's write lock (aimed at, not guaranteed).
TARGET_BATCH_MS = 60
#: The pause after each batch: long enough for a writer polling in SQLite's busy
#: handler (which retries after 1, 2, 5, 10, 15, 20, 25 ms…) to get in.
MIN_PAUSE_MS = 25
PAUSE_FRACTION = 0.4
#: Most sessions in one batch's ``IN (…)`` list: the shared ``CHUNK``, but a pacing
#: setting of its own, so tests (and operators) can make batches smaller.
MAX_BATCH_SESSIONS = CHUNK
#: Rows (messages + state + session) per batch before we have measured anything.
INITIAL_ROW_BUDGET = 2_000
MIN_ROW_BUDGET = 50
MAX_ROW_BUDGET = 50_000


BatchHook = Callable[[Counts, int], None]


@dataclass
class Pacer:
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
            self.row_budget = max(
                MIN_ROW_BUDGET, min(MAX_ROW_BUDGET, (self.row_budget + wanted) // 2)
            )
        return max(MIN_PAUSE_MS, elapsed_ms * PAUSE_FRACTION)


def whole_session_batches(
    session_ids: list[str], sizes: dict[str, int], budget: int
) -> list[list[str]]:
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
    pacer: Pacer | None = None,
) -> Pacer:
    pacer = pacer or Pacer()
    # At least one round per call, so a step with a tiny time budget still progresses.
    rounds = 0
    while True:
        if deadline is not None and rounds and time.monotonic() >= deadline:
            break
        rounds += 1
        limit = max(1, min(MAX_BATCH_SESSIONS, pacer.row_budget))
        rows = candidates(session_filter, state.after_rowid, limit, state.max_rowid)
        if not rows:
            state.done = True
            break
        state.after_rowid = rows[-1][0]
        ids = [row[1] for row in rows]
        sizes = child_counts(ids)
        for batch in whole_session_batches(ids, sizes, pacer.row_budget):
            started = time.perf_counter()
            counts, deleted = cascade_delete(batch, still_matching=session_filter)
            elapsed_ms = (time.perf_counter() - started) * 1000
            state.counts.add(counts)
            state.batches += 1
            state.skipped += len(batch) - len(deleted)
            if wipe_frames and deleted:
                remove_frames(deleted, state.report)
            if on_batch is not None:
                on_batch(state.counts, state.batches)
            # Let a writer waiting in its busy handler take the lock.
            time.sleep(pacer.record(counts.rows, elapsed_ms) / 1000)
    return pacer


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
    if dry_run:
        return DeletionResult(counts=count_matching(session_filter), dry_run=True)
    report = FramesReport() if wipe_frames else None
    with audited(operation, actor, {**target, "wipe_frames": wipe_frames}, report=report) as run:
        state = _BulkState(counts=run.counts, report=report, max_rowid=max_rowid())
        # Whole batches only: what is counted is gone, everything else is intact.
        run.progress = lambda: f"stopped after {state.batches} batches"
        pacer = _run_bulk(session_filter, state, wipe_frames=wipe_frames, on_batch=on_batch)
        detail = f"{state.batches} batches, longest {pacer.longest_ms:.0f} ms"
        if state.skipped:
            detail += f"; {state.skipped} sessions stopped matching and were left whole"
        run.finish(detail)
    return DeletionResult(
        counts=state.counts,
        frames=state.report,
        audit_id=run.audit_id,
        batches=state.batches,
        longest_batch_ms=pacer.longest_ms,
        skipped=state.skipped,
    )


def delete_filtered(
    session_filter: SessionFilter,
    *,
    actor: Actor,
    dry_run: bool = False,
    wipe_frames: bool = False,
    on_batch: BatchHook | None = None,
) -> DeletionResult:
    """Every session matching the list filters (e.g. one principal's, for an erasure)."""
    if session_filter.is_empty():
        raise StoreError(
            "A filtered delete needs at least one filter; use clear-all for every session."
        )
    return _bulk(
        DeletionAudit.Operation.DELETE_FILTERED,
        session_filter,
        {"filter": session_filter.describe()},
        actor=actor,
        wipe_frames=wipe_frames,
        dry_run=dry_run,
        on_batch=on_batch,
    )


def clear_all(
    *,
    actor: Actor,
    dry_run: bool = False,
    wipe_frames: bool = False,
    on_batch: BatchHook | None = None,
) -> DeletionResult:
    """The runtime's ``$sessionClearAll``: every session with its messages and state."""
    return _bulk(
        DeletionAudit.Operation.CLEAR_ALL,
        SessionFilter(),
        {"all": True},
        actor=actor,
        wipe_frames=wipe_frames,
        dry_run=dry_run,
        on_batch=on_batch,
    )


def retention_filter(older_than: timedelta, *, now=None) -> SessionFilter:
    cutoff = (now or timezone.now()) - older_than
    return SessionFilter(active_before_ms=to_epoch_ms(cutoff))


def delete_older_than(
    older_than: timedelta,
    *,
    actor: Actor,
    dry_run: bool = False,
    wipe_frames: bool = False,
    on_batch: BatchHook | None = None,
) -> DeletionResult:
    """Retention: sessions whose last activity is older than ``older_than``."""
    if older_than <= timedelta(0):
        raise StoreError("The retention age must be positive.")
    session_filter = retention_filter(older_than)
    target = {
        "older_than_days": older_than.total_seconds() / 86400,
        "active_before_ms": session_filter.active_before_ms,
    }
    return _bulk(
        DeletionAudit.Operation.RETENTION,
        session_filter,
        target,
        actor=actor,
        wipe_frames=wipe_frames,
        dry_run=dry_run,
        on_batch=on_batch,
    )


def delete_sessions(
    session_ids: Sequence[str], *, actor: Actor, wipe_frames: bool = False
) -> DeletionResult:
    """Selected sessions (the admin's action), in paced batches of whole sessions."""
    ids = list(dict.fromkeys(session_ids))
    target = {"session_ids": ids[:AUDIT_MAX_IDS], "selected": len(ids)}
    report = FramesReport() if wipe_frames else None
    pacer = Pacer()
    batches = 0
    with audited(DeletionAudit.Operation.DELETE_FILTERED, actor, target, report=report) as run:
        for chunk in chunks(ids, MAX_BATCH_SESSIONS):
            for batch in whole_session_batches(chunk, child_counts(chunk), pacer.row_budget):
                started = time.perf_counter()
                batch_counts, deleted = cascade_delete(batch)
                run.counts.add(batch_counts)
                batches += 1
                if report is not None:
                    remove_frames(deleted, report)
                elapsed_ms = (time.perf_counter() - started) * 1000
                time.sleep(pacer.record(batch_counts.rows, elapsed_ms) / 1000)
        run.finish(f"{batches} batches")
    return DeletionResult(
        counts=run.counts,
        frames=report,
        audit_id=run.audit_id,
        batches=batches,
        longest_batch_ms=pacer.longest_ms,
    )


# --- Clear-all as a job (the admin page asks; the worker carries it out) --------------


def request_clear_all(*, actor: Actor, expected_sessions: int, wipe_frames: bool = False) -> Job:
    """Record a clear-all for ``manage.py run_jobs``: its audit row and its job, at once.

    The worker lists every session up to the newest row now and deletes them
    as :func:`clear_all` does; sessions the runtime makes meanwhile are not part
    of it (so a clear-all under load still ends).
    """
    target = {"all": True, "expected_sessions": expected_sessions, "wipe_frames": wipe_frames}
    check_writable(DeletionAudit.Operation.CLEAR_ALL, actor, target)
    user = actor.user if getattr(actor.user, "pk", None) else None
    with transaction.atomic():
        audit = start_audit(DeletionAudit.Operation.CLEAR_ALL, actor, target)
        return Job.objects.create(
            kind=Job.Kind.CLEAR_ALL,
            actor=actor.name[:200],
            user=user,
            audit=audit,
            wipe_frames=wipe_frames,
            expected=expected_sessions,
        )
