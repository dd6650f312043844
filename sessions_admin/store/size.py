"""How big the store is: its files, its row counts and the frames on disk.

File sizes are one ``stat`` each and always live. Row counts and the frames
scan are not free at production size (``COUNT(*)`` over 800,000 state rows
is ~0.6 s, the frames scan ~0.2 s per 10,000 directories), so
:func:`store_counts` keeps its answer for :data:`COUNTS_TTL_S` per process, or
until this dashboard deletes from the store (in any of its processes), and says
when it counted; the overview fetches them after the page (htmx).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass

from sessions_admin.store.connection import run_sql, store_deleted_at, store_path, time_limit
from sessions_admin.store.frames import FramesError
from sessions_admin.store.orphans import find_orphan_frames

COUNTS_TTL_S = 300.0


@dataclass(frozen=True)
class FileSizes:
    db: int | None
    wal: int | None

    @property
    def total(self) -> int:
        return (self.db or 0) + (self.wal or 0)


def _size(path: str) -> int | None:
    try:
        return os.stat(path).st_size
    except OSError:
        return None


def store_file_sizes() -> FileSizes:
    path = str(store_path())
    return FileSizes(_size(path), _size(path + "-wal"))


@dataclass(frozen=True)
class StoreCounts:
    sessions: int
    state_rows: int
    #: The highest message id: messages ever written, deleted ones included.
    last_message_id: int
    frames_bytes: int | None
    orphan_dirs: int | None
    counted_at: float

    @property
    def counted_at_ms(self) -> int:
        return int(self.counted_at * 1000)


_lock = threading.Lock()
_cached: dict[str, StoreCounts] = {}


def store_counts(*, fresh: bool = False) -> StoreCounts:
    """Row counts and frames use, recounted at most every :data:`COUNTS_TTL_S`."""
    key = str(store_path())
    with _lock:
        cached = _cached.get(key)
    if (
        cached is not None
        and not fresh
        and time.time() - cached.counted_at < COUNTS_TTL_S
        and store_deleted_at() < cached.counted_at  # no delete of ours since
    ):
        return cached
    with time_limit(10_000):
        sessions = run_sql("SELECT COUNT(*) FROM sessions")[0][0]
        state_rows = run_sql("SELECT COUNT(*) FROM session_state")[0][0]
        last = run_sql("SELECT coalesce(max(id), 0) FROM session_messages")[0][0]
    try:
        report = find_orphan_frames()
        frames, orphans = report.total_bytes, len(report.orphans)
    except (OSError, FramesError):  # a frames problem must not hide the row counts
        frames = orphans = None
    counts = StoreCounts(sessions, state_rows, last, frames, orphans, time.time())
    with _lock:
        _cached[key] = counts
    return counts
