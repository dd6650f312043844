"""The cascade as the dashboard runs it, and one session: delete, wipe.

:func:`cascade_delete` is the one door to the store's cascade
(:func:`sessions_admin.store.cascade.delete_rows`, which holds the three DELETE
statements): every bulk form in :mod:`.bulk` and :mod:`.orphans` calls it, and once
the rows are committed it is the one place every deleted id passes, where our own
data about sessions (the side index, the rollups, the review notes, labels and
queue items) forgets them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from sessions_admin.deletion.audit import Outcome, audited, count_forgotten, refuse_wrong_store
from sessions_admin.deletion.results import Actor, DeletionResult, SessionNotFound
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.review import forget as review_forget
from sessions_admin.ourdata.sync import forget_sessions
from sessions_admin.store.cascade import (
    Counts,
    FramesReport,
    delete_rows,
    frames_kept_bytes,
    remove_frames,
)
from sessions_admin.store.queries import SessionFilter


def cascade_delete(
    session_ids: Sequence[str],
    *,
    still_matching: SessionFilter | None = None,
    children_only: bool = False,
    timings: dict[str, float] | None = None,
    forget: bool = True,
) -> tuple[Counts, list[str]]:
    """The store's cascade (see :func:`~sessions_admin.store.cascade.delete_rows` for
    ``still_matching`` and ``children_only``), then our own data forgets the ids
    deleted. Returns the counts and those ids.

    ``timings``, if given, receives ``store_ms`` (the store's transaction, what the
    runtime's writer waits behind) and ``forget_ms`` (our side data, no store lock
    held), so a caller can pace itself on the lock alone.

    ``forget=False`` hands the forgetting to the caller, who must forget every id
    returned once its batches end, failed or not: the side index and rollups
    (:func:`~sessions_admin.ourdata.sync.forget_sessions`, in a few large side
    transactions instead of one per batch, whose rollup cells and index pages the
    sessions share) and the review records
    (:func:`~sessions_admin.ourdata.review.forget.forget_sessions`). An erasure job
    forgets the side data beside its batches and both again in its last step, over
    every id it listed."""
    refuse_wrong_store()  # our records of another store must never learn of these deletes
    started = time.perf_counter()
    counts, ids = delete_rows(
        session_ids, still_matching=still_matching, children_only=children_only
    )
    committed = time.perf_counter()
    # Committed. What keeps data about sessions (the side index, the rollups) forgets
    # ``ids`` here, after the store's transaction, so a failed delete forgets nothing.
    if forget:
        forget_sessions(ids)
    # Our notes, labels and queue items about them go in the same operation, counted
    # in the running audit. Unlike the index this may raise: the audit then says the
    # delete failed, and the next sync_index finishes the job (review.forget.forget_gone).
    if ids and forget:
        count_forgotten(review_forget.forget_sessions(ids))
    if timings is not None:
        timings["store_ms"] = (committed - started) * 1000
        timings["forget_ms"] = (time.perf_counter() - committed) * 1000
    return counts, ids


def delete_session(session_id: str, *, actor: Actor, wipe_frames: bool = False) -> DeletionResult:
    """The runtime's ``$sessionDelete``; with ``wipe_frames`` also its frames directory."""
    operation = (
        DeletionAudit.Operation.WIPE_SESSION
        if wipe_frames
        else DeletionAudit.Operation.DELETE_SESSION
    )
    report = FramesReport() if wipe_frames else None
    with audited(operation, actor, {"session_ids": [session_id]}, report=report) as run:
        started = time.perf_counter()
        counts, deleted = cascade_delete([session_id])
        cascade_ms = (time.perf_counter() - started) * 1000  # BEGIN IMMEDIATE … COMMIT
        run.counts = counts
        if counts.rows == 0:
            error = SessionNotFound(session_id)
            run.report = None
            run.save(Outcome.REFUSED, error.message)
            raise error
        if report is not None:
            remove_frames(deleted, report)
        run.finish()
    return DeletionResult(
        counts=counts,
        frames=report,
        audit_id=run.audit_id,
        batches=1,
        longest_batch_ms=cascade_ms,
        frames_kept_bytes=None if report is not None else frames_kept_bytes(session_id),
    )
