"""Leftovers with no session row removed: orphaned children and frame directories.

A crashed writer can leave messages and state whose session row is gone;
the runtime's own deletes leave frame directories behind. Both are found by
:mod:`sessions_admin.store.orphans` and removed here in batches (children
through the cascade with ``children_only``, never touching ``sessions``;
directories only after a re-check that their session row is still absent).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

# MAX_BATCH_SESSIONS is read as bulk.MAX_BATCH_SESSIONS, so a value tuned on
# that module applies here too, as it did when all of this was one module.
from sessions_admin.deletion import bulk
from sessions_admin.deletion.audit import AUDIT_MAX_IDS, audited, check_writable
from sessions_admin.deletion.bulk import Pacer, whole_session_batches
from sessions_admin.deletion.cascade import cascade_delete
from sessions_admin.deletion.results import Actor, DeletionResult
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store.cascade import Counts, FramesReport, child_counts, remove_frames
from sessions_admin.store.orphans import find_orphan_frames, find_orphaned_children
from sessions_admin.store.queries import existing_session_ids

# --- Orphaned children ---------------------------------------------------------------


def remove_orphaned_children(*, actor: Actor) -> DeletionResult:
    """Delete orphaned messages and state (never a session row), batch by batch."""
    operation = DeletionAudit.Operation.ORPHAN_CHILDREN
    # Refused before the (possibly long) search for orphans, which then names them.
    check_writable(operation, actor, {"orphans": True})
    orphans = find_orphaned_children()
    target = {"orphans": True, "session_ids": orphans.session_ids[:AUDIT_MAX_IDS]}
    pacer = Pacer()
    batches = 0
    with audited(operation, actor, target) as run:
        ids = orphans.session_ids
        for chunk in chunks(ids, bulk.MAX_BATCH_SESSIONS):
            for batch in whole_session_batches(chunk, child_counts(chunk), pacer.row_budget):
                started = time.perf_counter()
                batch_counts, _ = cascade_delete(batch, children_only=True)
                run.counts.add(batch_counts)
                batches += 1
                elapsed_ms = (time.perf_counter() - started) * 1000
                time.sleep(pacer.record(batch_counts.rows, elapsed_ms) / 1000)
        run.finish(f"{batches} batches")
    return DeletionResult(counts=run.counts, audit_id=run.audit_id, batches=batches)


# --- Orphaned frame directories -----------------------------------------------------


def remove_orphan_frames(
    session_ids: Sequence[str] | None = None, *, actor: Actor
) -> DeletionResult:
    """Remove orphaned frame directories: the ``session_ids`` given, or (None) every
    orphan a fresh scan finds. Never touches the store's rows.

    Each id is re-checked against the store just before its directory goes, so a
    directory whose session row exists (again: the runtime reuses an id, or the id was
    never an orphan) is left alone and counted in ``skipped``. Ids that are not a plain
    directory under the root are refused by :mod:`~sessions_admin.store.frames` and
    recorded as refusals, never raised.
    """
    operation = DeletionAudit.Operation.ORPHAN_FRAMES
    every = session_ids is None
    target: dict[str, Any] = {"orphans": "all" if every else "selected"}
    if not every:
        target["session_ids"] = list(dict.fromkeys(session_ids))[:AUDIT_MAX_IDS]
    report = FramesReport()
    skipped = 0
    with audited(operation, actor, target, report=report) as run:
        if every:
            ids = [d.session_id for d in find_orphan_frames().orphans]
            run.audit.target = {**target, "session_ids": ids[:AUDIT_MAX_IDS], "found": len(ids)}
        else:
            ids = list(dict.fromkeys(session_ids))
        for chunk in chunks(ids, bulk.MAX_BATCH_SESSIONS):
            present = existing_session_ids(chunk)
            skipped += len(present)
            remove_frames([sid for sid in chunk if sid not in present], report)
        detail = f"{report.missing} already gone" if report.missing else ""
        if skipped:
            detail = "; ".join(
                filter(None, [detail, f"{skipped} have a session row and were left alone"])
            )
        run.finish(detail)
    return DeletionResult(counts=Counts(), frames=report, audit_id=run.audit_id, skipped=skipped)
