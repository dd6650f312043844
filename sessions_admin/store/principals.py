"""One principal in the store: its sessions, exact counts, tools and frame directories.

A principal is ``sessions.principal_id``, matched exactly (``= ?`` with text):
a principal stored as a BLOB, or as TEXT that is not UTF-8, is never matched
by a text id from a URL, so such sessions show up on the list (through the
side index, decoded and marked) but no URL reaches or erases them.

The store has no index on ``principal_id``: finding a principal's sessions is
one scan of ``sessions`` (about 50 ms per 500,000 rows), under a time limit;
their messages and state are then counted through the session-id indexes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store import frames
from sessions_admin.store.cascade import COUNT_TIME_LIMIT_MS, Counts, count_ids
from sessions_admin.store.connection import frames_root, run_sql, time_limit


def session_ids_of(principal: str) -> list[str]:
    """Every session id whose row names ``principal`` exactly, in rowid order."""
    with time_limit(COUNT_TIME_LIMIT_MS):
        rows = run_sql("SELECT id FROM sessions WHERE principal_id = ? ORDER BY rowid", [principal])
    return [row[0] for row in rows]


def text_principal_exists(principal: str) -> bool:
    """Whether a session names ``principal`` as valid TEXT (one scan, under a time limit).

    The side index keeps a principal stored as a BLOB, or as TEXT that is not
    UTF-8, as its text with U+FFFD for what could not be read: such a name
    reaches no session, unless one holds that very text.
    """
    with time_limit(COUNT_TIME_LIMIT_MS):
        rows = run_sql(
            "SELECT 1 FROM sessions WHERE principal_id = ? AND typeof(principal_id) = 'text' "
            "LIMIT 1",
            [principal],
        )
    return bool(rows)


@dataclass
class FramesUsage:
    """The frame directories of some sessions: how many, their bytes, what could not be read."""

    dirs: int = 0
    bytes: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    #: The ids whose directory is there.
    present: list[str] = field(default_factory=list)


def frames_usage(session_ids: Sequence[str]) -> FramesUsage:
    """Frame directories present for these sessions (confined to the frames root)."""
    usage = FramesUsage()
    root = frames_root()
    # One lstat each first: most sessions have no frames, and the checks below resolve
    # the root and the path again for every id.
    for session_id in frames.standing(root, list(session_ids)):
        if not isinstance(session_id, str):
            continue  # a BLOB or NULL id names no directory
        try:
            found = frames.dir_usage(root, session_id)
        except frames.FramesRefused as exc:
            usage.refused.append((session_id, str(exc)))
            continue
        except OSError as exc:
            usage.refused.append((session_id, f"cannot read it: {exc.strerror or exc}"))
            continue
        if found is not None:
            usage.present.append(session_id)
            usage.dirs += 1
            usage.bytes += found[0]
    return usage


def tools_of(session_ids: Sequence[str], limit: int = 50) -> list[tuple[str, int]]:
    """The tools these sessions' messages name, with their message counts, most used first."""
    counted: dict[object, int] = {}
    for chunk in chunks(list(session_ids)):
        for name, n in run_sql(
            "SELECT tool_name, count(*) FROM session_messages WHERE session_id IN "
            f"({placeholders(len(chunk))}) AND tool_name IS NOT NULL AND tool_name != '' "
            "GROUP BY tool_name",
            chunk,
        ):
            counted[name] = counted.get(name, 0) + n
    ranked = sorted(counted.items(), key=lambda item: (-item[1], str(item[0])))
    return ranked[:limit]


@dataclass(frozen=True)
class PrincipalFootprint:
    """What the store and the frames root hold for one principal, exactly."""

    principal: str
    session_ids: list[str]
    counts: Counts
    frames: FramesUsage


def footprint(principal: str) -> PrincipalFootprint:
    """Exact counts: sessions, messages, state rows; frame directories and their bytes."""
    ids = session_ids_of(principal)
    with time_limit(COUNT_TIME_LIMIT_MS):
        counts = count_ids(ids)
    return PrincipalFootprint(principal, ids, counts, frames_usage(ids))
