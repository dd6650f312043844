"""The runtime's cascade, the only SQL that writes to the store, and one session.

:func:`_cascade` holds the three DELETE statements (every bulk form in
:mod:`.bulk` and :mod:`.orphans` calls it). Also here: the read helpers
the other modules query through, frame-directory removal after a commit, and
the single-session operations (preview, delete, delete with frames wipe).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import DatabaseError, transaction

from sessions_admin.store import frames
from sessions_admin.store.connection import (
    StoreReadOnly,
    describe_database_error,
    frames_root,
    is_read_only,
    store_connection,
)
from sessions_admin.store.deletion.audit import (
    _audit_save,
    _audit_start,
    _check_writable,
    _failure_text,
)
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
                present = {
                    row[0] for row in _fetch(f"SELECT id FROM sessions WHERE id IN ({marks})", ids)
                }
                ids = [i for i in ids if i not in present]
            elif still_matching is not None:
                marks = ", ".join("?" * len(ids))
                clauses, params = still_matching.where()
                where = " AND ".join([f"id IN ({marks})", *clauses])
                present = {
                    row[0]
                    for row in _fetch(f"SELECT id FROM sessions WHERE {where}", [*ids, *params])
                }
                ids = [i for i in ids if i in present]
            if not ids:
                return Counts(), []
            match = "= ?" if len(ids) == 1 else f"IN ({', '.join('?' * len(ids))})"
            counts = Counts()
            counts.messages = _execute(
                f"DELETE FROM session_messages WHERE session_id {match}", ids
            )
            counts.state = _execute(f"DELETE FROM session_state WHERE session_id {match}", ids)
            if not children_only:
                counts.sessions = _execute(f"DELETE FROM sessions WHERE id {match}", ids)
    except DatabaseError as exc:
        raise describe_database_error(exc) from exc
    return counts, ids


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
    messages = _fetch("SELECT COUNT(*) FROM session_messages WHERE session_id = ?", [session_id])[
        0
    ][0]
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

    operation = (
        DeletionAudit.Operation.WIPE_SESSION
        if wipe_frames
        else DeletionAudit.Operation.DELETE_SESSION
    )
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
    outcome = (
        DeletionAudit.Outcome.PARTIAL if report and report.refused else DeletionAudit.Outcome.OK
    )
    _audit_save(audit, counts, report, outcome)
    return DeletionResult(
        counts=counts, frames=report, audit_id=audit.pk, batches=1, longest_batch_ms=cascade_ms
    )
