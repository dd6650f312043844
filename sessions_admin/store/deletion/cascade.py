"""The runtime's cascade, the only SQL that writes to the store, and one session.

:func:`cascade_delete` holds the three DELETE statements (every bulk form in
:mod:`.bulk` and :mod:`.orphans` calls it, and every delete leaves through it
once its rows are committed). Also here: frame-directory removal after a commit,
and the single-session operations (preview, delete, delete with frames wipe).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence

from django.db import DatabaseError, transaction

from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.store import frames
from sessions_admin.store.connection import (
    StoreReadOnly,
    describe_database_error,
    frames_root,
    is_read_only,
    run_sql,
)
from sessions_admin.store.deletion.audit import Outcome, audited
from sessions_admin.store.deletion.results import (
    Actor,
    Counts,
    DeletionResult,
    FramesReport,
    SessionNotFound,
    SessionPreview,
)
from sessions_admin.store.queries import SessionFilter
from sessions_admin.store.router import STORE_ALIAS
from sessions_admin.store.values import exact_key


def cascade_delete(
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
    # Keyed exactly: two ids that are not UTF-8 may read alike yet be two rows.
    ids = list({exact_key(i): i for i in session_ids}.values())
    if not ids:
        return Counts(), []
    try:
        with transaction.atomic(using=STORE_ALIAS):
            if children_only:
                marks = ", ".join("?" * len(ids))
                present = {
                    exact_key(row[0])
                    for row in run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", ids)
                }
                ids = [i for i in ids if exact_key(i) not in present]
            elif still_matching is not None:
                marks = ", ".join("?" * len(ids))
                clauses, params = still_matching.where()
                where = " AND ".join([f"id IN ({marks})", *clauses])
                present = {
                    exact_key(row[0])
                    for row in run_sql(f"SELECT id FROM sessions WHERE {where}", [*ids, *params])
                }
                ids = [i for i in ids if exact_key(i) in present]
            if not ids:
                return Counts(), []
            match = "= ?" if len(ids) == 1 else f"IN ({', '.join('?' * len(ids))})"
            counts = Counts()
            counts.messages = run_sql(
                f"DELETE FROM session_messages WHERE session_id {match}", ids
            ).rowcount
            counts.state = run_sql(
                f"DELETE FROM session_state WHERE session_id {match}", ids
            ).rowcount
            if not children_only:
                counts.sessions = run_sql(f"DELETE FROM sessions WHERE id {match}", ids).rowcount
    except DatabaseError as exc:
        raise describe_database_error(exc) from exc
    # Committed. The one place every delete passes after its rows are gone: what keeps
    # data about sessions (the side index, the rollups) forgets ``ids`` here.
    from sessions_admin.ourdata.sync import forget_sessions

    forget_sessions(ids)
    return counts, ids


# --- Frames --------------------------------------------------------------------------


def remove_frames(session_ids: Iterable[str], report: FramesReport) -> None:
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
        if not removed.existed:
            report.missing += 1
        else:
            # An empty directory, or one holding only FIFOs or symlinks, was
            # removed too: it counts, with what it held.
            report.dirs_removed += 1
            report.bytes_removed += removed.bytes
            report.files_removed += removed.files
            for kind, count in removed.others:
                report.others_removed[kind] = report.others_removed.get(kind, 0) + count


# --- One session ---------------------------------------------------------------------


def preview_session(session_id: str) -> SessionPreview:
    """Counts for the confirmation dialog (and the frames directory's size)."""
    messages = run_sql("SELECT COUNT(*) FROM session_messages WHERE session_id = ?", [session_id])[
        0
    ][0]
    state = run_sql("SELECT COUNT(*) FROM session_state WHERE session_id = ?", [session_id])[0][0]
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
        frames_kept_bytes=None if report is not None else _kept_bytes(session_id),
    )


def _kept_bytes(session_id: str) -> int | None:
    """The size of the frames directory a delete left behind, for the flash message."""
    try:
        usage = frames.dir_usage(frames_root(), session_id)
    except (frames.FramesRefused, OSError):
        return None
    return None if usage is None else usage[0]
