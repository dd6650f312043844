"""The store's side of every delete: the runtime's cascade, and what sizes and counts it.

:func:`delete_rows` is the only SQL that writes to the store: in one
``transaction.atomic(using="agents")`` (the backend makes that a
``BEGIN IMMEDIATE``) it issues, in the runtime's order (foreign keys are on,
children go first)::

    DELETE FROM session_messages WHERE session_id = ?
    DELETE FROM session_state    WHERE session_id = ?
    DELETE FROM sessions         WHERE id         = ?

or the same three with ``IN (?, …)`` for a batch of whole sessions.
:func:`remove_frames` removes frame directories after a commit. Only
:mod:`sessions_admin.deletion` calls either: it wraps every call in an audit row
and tells our own data which sessions are gone. The rest of this module reads:
the candidates and sizes a bulk delete batches by, exact counts for a dry run
or a confirmation, one session's preview.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from django.db import DatabaseError, transaction

from sessions_admin.humanize import file_size
from sessions_admin.sqlhelpers import CHUNK, chunks, placeholders
from sessions_admin.store import frames
from sessions_admin.store.connection import (
    StoreReadOnly,
    describe_database_error,
    frames_root,
    is_read_only,
    note_store_deleted,
    run_sql,
    store_connection,
    store_path,
    time_limit,
)
from sessions_admin.store.queries import SessionFilter
from sessions_admin.store.router import STORE_ALIAS
from sessions_admin.store.values import exact_key

#: Most ids in one ``IN (…)`` list when counting (SQLite allows 32,766 parameters).
IDS_PER_QUERY = CHUNK
#: Exact counts on the clear-all page may take a while on ten million messages.
COUNT_TIME_LIMIT_MS = 20_000


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
        return (
            f"{self.sessions:,} session{'s' if self.sessions != 1 else ''}, "
            f"{self.messages:,} message{'s' if self.messages != 1 else ''}, "
            f"{self.state:,} state row{'s' if self.state != 1 else ''}"
        )


@dataclass
class FramesReport:
    dirs_removed: int = 0
    bytes_removed: int = 0
    files_removed: int = 0
    missing: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)  # (session id, reason)
    #: What the removed directories held besides regular files, by kind.
    others_removed: dict[str, int] = field(default_factory=dict)
    #: Symlinks and files standing where a session's directory would (an erasure's):
    #: (session id, what it was), unlinked, their targets never touched.
    unlinked: list[tuple[str, str]] = field(default_factory=list)

    def merge(self, other: FramesReport) -> None:
        """Add another report's removals and refusals (one per worker) to this one."""
        self.dirs_removed += other.dirs_removed
        self.bytes_removed += other.bytes_removed
        self.files_removed += other.files_removed
        self.missing += other.missing
        self.refused.extend(other.refused)
        self.unlinked.extend(other.unlinked)
        for kind, count in other.others_removed.items():
            self.others_removed[kind] = self.others_removed.get(kind, 0) + count

    def describe_others(self) -> str:
        """``2 symlinks, 1 FIFO`` (unlinked, never followed); empty when none."""
        kinds = sorted(self.others_removed.items())
        return ", ".join(f"{n:,} {kind}{'s' if n != 1 else ''}" for kind, n in kinds)

    def describe(self) -> str:
        parts = []
        if self.dirs_removed:
            others = self.describe_others()
            parts.append(
                f"frames removed ({self.dirs_removed:,} "
                f"director{'ies' if self.dirs_removed != 1 else 'y'}, "
                f"{file_size(self.bytes_removed)}" + (f", also {others}" if others else "") + ")"
            )
        elif not self.refused:
            parts.append("no frames directory")
        if self.refused:
            parts.append(
                f"frames NOT removed for {len(self.refused):,} session"
                f"{'s' if len(self.refused) != 1 else ''}: {self.refused[0][1]}"
            )
        return "; ".join(parts)


@dataclass(frozen=True)
class SessionPreview:
    """What deleting one session would remove (for the confirmation dialog)."""

    session_id: str
    messages: int
    state: int
    frames_bytes: int | None  # None: no directory
    frames_files: int | None
    frames_refusal: str | None = None


# --- The writes -------------------------------------------------------------------------


def delete_rows(
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
                marks = placeholders(len(ids))
                present = {
                    exact_key(row[0])
                    for row in run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", ids)
                }
                ids = [i for i in ids if exact_key(i) not in present]
            elif still_matching is not None:
                marks = placeholders(len(ids))
                clauses, params = still_matching.where()
                where = " AND ".join([f"id IN ({marks})", *clauses])
                present = {
                    exact_key(row[0])
                    for row in run_sql(f"SELECT id FROM sessions WHERE {where}", [*ids, *params])
                }
                ids = [i for i in ids if exact_key(i) in present]
            if not ids:
                return Counts(), []
            match = "= ?" if len(ids) == 1 else f"IN ({placeholders(len(ids))})"
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
    if counts.rows:
        note_store_deleted()
    return counts, ids


@contextmanager
def deferred_sync():
    """Commit the deletes inside without an fsync each, then make them durable together.

    A long job commits hundreds of batches: in WAL mode each commit under the
    store's ``synchronous = FULL`` waits for the WAL's fsync. Inside this block
    our connection commits under ``NORMAL`` (a killed process loses nothing, the
    OS holds the pages); on leaving it, :func:`flush_to_disk` syncs the store's
    files, so nothing is reported done before it would survive a power cut.
    """
    connection = store_connection()
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA synchronous")
        before = cursor.fetchone()[0]
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA wal_autocheckpoint")
        autocheckpoint = cursor.fetchone()[0]
        # The commit's own checkpoint would count as time the batch held the lock (the
        # pacer would shrink the batches for it): the job checkpoints in its pauses.
        cursor.execute("PRAGMA wal_autocheckpoint = 0")
    try:
        yield
    finally:
        with connection.cursor() as cursor:
            cursor.execute(f"PRAGMA synchronous = {int(before)}")
            cursor.execute(f"PRAGMA wal_autocheckpoint = {int(autocheckpoint)}")
        checkpoint()
        flush_to_disk()


def checkpoint() -> None:
    """Copy what the WAL holds into the store's file without waiting for anyone
    (``PASSIVE``: the runtime's writes go on meanwhile); never raises."""
    try:
        with store_connection().cursor() as cursor:
            cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")
            cursor.fetchall()
    except DatabaseError:
        pass  # the next commit's own checkpoint, or the runtime's, does it


def flush_to_disk() -> None:
    """fsync the store's WAL and file, read-only: what this process committed is on disk."""
    path = store_path()
    for name in (f"{path}-wal", str(path)):
        try:
            fd = os.open(name, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_frames(
    session_ids: Iterable[str], report: FramesReport, *, unlink_entries: bool = False
) -> None:
    """Remove each session's frame directory; refusals are recorded, not raised.

    ``unlink_entries`` (an erasure): a symlink or file standing at a session's
    path is unlinked too, never followed; otherwise it is refused and left.
    """
    root = frames_root()
    for session_id in session_ids:
        try:
            if unlink_entries and (entry := frames.unlink_session_entry(root, session_id)):
                what = f"a {entry.kind}"
                if entry.target:
                    what += f" to {entry.target!r} (unlinked; the target was not touched)"
                report.unlinked.append((session_id, what))
                continue
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


# --- What a bulk delete batches by (reads, no lock) --------------------------------------


def max_rowid() -> int:
    return run_sql("SELECT MAX(rowid) FROM sessions", [])[0][0] or 0


def candidates(
    session_filter: SessionFilter, after_rowid: int, limit: int, max_rowid: int | None = None
) -> list[tuple]:
    """The next sessions matching the filter, in rowid order (read, no lock).

    Walking the table by rowid reads it once over the whole operation, whatever
    the filter, and never revisits rows already decided."""
    clauses, params = session_filter.where()
    bound: list[str] = []
    bound_params: list[Any] = []
    if max_rowid is not None:
        bound, bound_params = ["rowid <= ?"], [max_rowid]
    where = " AND ".join(["rowid > ?", *bound, *clauses])
    return run_sql(
        f"SELECT rowid, id FROM sessions WHERE {where} ORDER BY rowid LIMIT ?",
        [after_rowid, *bound_params, *params, limit],
    )


def child_counts(session_ids: list[str]) -> dict[str, int]:
    """Messages + state rows per session (index-only reads, no lock)."""
    marks = placeholders(len(session_ids))
    sizes: dict[str, int] = dict.fromkeys(session_ids, 0)
    for table in ("session_messages", "session_state"):
        for sid, count in run_sql(
            f"SELECT session_id, COUNT(*) FROM {table} WHERE session_id IN ({marks}) "
            "GROUP BY session_id",
            session_ids,
        ):
            sizes[sid] = sizes.get(sid, 0) + count
    return sizes


# --- Counting -------------------------------------------------------------------------


def count_all() -> Counts:
    """Exact totals of the three tables (for the clear-all confirmation)."""
    with time_limit(COUNT_TIME_LIMIT_MS):
        return Counts(
            sessions=run_sql("SELECT COUNT(*) FROM sessions", [])[0][0],
            messages=run_sql("SELECT COUNT(*) FROM session_messages", [])[0][0],
            state=run_sql("SELECT COUNT(*) FROM session_state", [])[0][0],
        )


def count_matching(session_filter: SessionFilter) -> Counts:
    """Exactly what a bulk delete with this filter would remove right now (dry run)."""
    if session_filter.is_empty():
        return count_all()
    counts = Counts()
    after = 0
    with time_limit(COUNT_TIME_LIMIT_MS):
        while rows := candidates(session_filter, after, IDS_PER_QUERY):
            after = rows[-1][0]
            ids = [row[1] for row in rows]
            marks = placeholders(len(ids))
            counts.sessions += len(ids)
            counts.messages += run_sql(
                f"SELECT COUNT(*) FROM session_messages WHERE session_id IN ({marks})", ids
            )[0][0]
            counts.state += run_sql(
                f"SELECT COUNT(*) FROM session_state WHERE session_id IN ({marks})", ids
            )[0][0]
    return counts


def count_ids(session_ids: Sequence[str]) -> Counts:
    """Exactly what deleting these sessions would remove (missing ids count nothing)."""
    ids = list(dict.fromkeys(session_ids))
    counts = Counts()
    for chunk in chunks(ids, IDS_PER_QUERY):
        marks = placeholders(len(chunk))
        counts.sessions += run_sql(f"SELECT COUNT(*) FROM sessions WHERE id IN ({marks})", chunk)[
            0
        ][0]
        counts.messages += run_sql(
            f"SELECT COUNT(*) FROM session_messages WHERE session_id IN ({marks})", chunk
        )[0][0]
        counts.state += run_sql(
            f"SELECT COUNT(*) FROM session_state WHERE session_id IN ({marks})", chunk
        )[0][0]
    return counts


# --- One session ----------------------------------------------------------------------


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


def frames_kept_bytes(session_id: str) -> int | None:
    """The size of the frames directory a delete left behind, for the flash message."""
    try:
        usage = frames.dir_usage(frames_root(), session_id)
    except (frames.FramesRefused, OSError):
        return None
    return None if usage is None else usage[0]
