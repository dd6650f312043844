"""Leftovers with no session row, found (never removed) here.

A crashed writer can leave messages and state whose session row is gone; the
runtime's own deletes leave frame directories behind. The overview's size
figures and the orphans pages read these; their removal, audited, is in
:mod:`sessions_admin.deletion.orphans`.
"""

from __future__ import annotations

from dataclasses import dataclass

from sessions_admin.store import frames
from sessions_admin.store.cascade import COUNT_TIME_LIMIT_MS
from sessions_admin.store.connection import frames_root, run_sql, time_limit
from sessions_admin.store.queries import existing_session_ids


@dataclass
class OrphanedChildren:
    session_ids: list[str]
    messages: int
    state: int


def find_orphaned_children(limit_ms: int = COUNT_TIME_LIMIT_MS) -> OrphanedChildren:
    """Messages and state whose session row is missing (a crashed writer's leftovers)."""
    found: dict[str, None] = {}
    messages = state = 0
    with time_limit(limit_ms):
        for table in ("session_messages", "session_state"):
            rows = run_sql(
                f"SELECT session_id, COUNT(*) FROM {table} AS child WHERE NOT EXISTS "
                "(SELECT 1 FROM sessions WHERE sessions.id = child.session_id) "
                "GROUP BY session_id",
                [],
            )
            for sid, count in rows:
                found[sid] = None
                if table == "session_messages":
                    messages += count
                else:
                    state += count
    return OrphanedChildren(sorted(found), messages, state)


def find_orphan_frames() -> frames.OrphanReport:
    """Frame directories with no session row (the runtime's own deletes leave them),
    with every directory's size, in one scan of the frames root."""
    return frames.scan_frame_dirs(frames_root(), existing_session_ids)
