"""Principals in our side data: the ``/principals/`` list, and what an erasure checks.

The list reads ``rollup_principal`` only (one row per principal, kept by the
rollups' listener): newest activity first through its index, keyset pages,
``?q=`` a substring of the folded principal (:func:`sessions_admin.folding.fold`).
It never reads the store.

For an erasure: what the side database holds about one principal and its
sessions (:func:`side_counts`), and the ids it still holds for that principal
(:func:`side_session_ids`), so a run finishes what an earlier one left.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

from sessions_admin.folding import fold
from sessions_admin.ourdata import sidedb
from sessions_admin.sqlhelpers import chunks, placeholders

#: Principals per page of the list.
PAGE_SIZE = 50


@dataclass(frozen=True)
class PrincipalTotals:
    principal: str  # "" for sessions with no principal
    sessions: int
    messages: int
    calls: int
    errors: int
    first_ms: int | None
    last_ms: int | None


@dataclass(frozen=True)
class PrincipalList:
    rows: list[PrincipalTotals]
    #: Where the next page starts: (last activity, principal) of this page's last row.
    next_cursor: tuple[int, str] | None
    #: False when no sync has built the rollups yet (or they predate the table).
    built: bool


def principal_list(
    q: str | None, cursor: tuple[int, str] | None, limit: int | None = None
) -> PrincipalList:
    """One page of principals, newest activity first (a cursor continues after a row)."""
    limit = limit or PAGE_SIZE  # read now, so the page size can be tuned at run time
    side = sidedb.connect_readonly()
    if side is None:
        return PrincipalList([], None, built=False)
    clauses: list[str] = []
    params: list[object] = []
    if cursor is not None:
        clauses.append("(last_ts, principal) < (?, ?)")
        params += list(cursor)
    if q:
        clauses.append("instr(fold, ?) > 0")
        params.append(fold(q))
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    try:
        rows = side.execute(
            "SELECT principal, sessions, messages, calls, errors, first_ts, last_ts "
            f"FROM rollup_principal {where} ORDER BY last_ts DESC, principal DESC LIMIT ?",
            [*params, limit + 1],
        ).fetchall()
    except sidedb.errors():
        return PrincipalList([], None, built=False)
    finally:
        side.close()
    more = len(rows) > limit
    rows = rows[:limit]
    totals = [
        PrincipalTotals(p, s, m, c, e, first, None if last == -1 else last)
        for p, s, m, c, e, first, last in rows
    ]
    next_cursor = (rows[-1][6], rows[-1][0]) if more else None
    return PrincipalList(totals, next_cursor, built=True)


@dataclass(frozen=True)
class SideCounts:
    """What the side database holds about a principal and its sessions."""

    #: Search-index entries: the sessions' rows and their messages' rows.
    index_entries: int = 0
    #: Rollup rows: the principal's days and totals, the sessions' own rows.
    rollup_rows: int = 0

    @property
    def total(self) -> int:
        return self.index_entries + self.rollup_rows


def _count_for_ids(side: sqlite3.Connection, session_ids: Sequence[str]) -> SideCounts:
    index = rollups = 0
    for chunk in chunks([sidedb.bind_id(sid) for sid in session_ids]):
        marks = placeholders(len(chunk))
        index += side.execute(
            "SELECT count(*) + coalesce(sum((SELECT count(*) FROM search_messages m "
            f"WHERE m.session = s.key)), 0) FROM search_sessions s WHERE s.id IN ({marks})",
            chunk,
        ).fetchone()[0]
        rollups += side.execute(
            f"SELECT count(*) FROM rollup_session WHERE session_id IN ({marks})", chunk
        ).fetchone()[0]
    return SideCounts(index, rollups)


def side_counts(principal: str, session_ids: Sequence[str]) -> SideCounts | None:
    """Index entries and rollup rows for ``principal`` and ``session_ids`` (None: no index).

    The principal's own rollup rows (its days and totals) are keyed by its text, which
    another principal may share (TEXT that is not UTF-8 and valid text that reads the
    same, a BLOB): while sessions outside ``session_ids`` are filed under that key, the
    rows are theirs too and are not counted as this principal's.
    """
    side = sidedb.connect_readonly()
    if side is None:
        return None
    try:
        ids = list(dict.fromkeys(session_ids))
        by_ids = _count_for_ids(side, ids)
        if _key_shared(side, principal, ids):
            return by_ids
        days = side.execute(
            "SELECT count(*) FROM rollup_principal_day WHERE principal = ?", [principal]
        ).fetchone()[0]
        totals = side.execute(
            "SELECT count(*) FROM rollup_principal WHERE principal = ?", [principal]
        ).fetchone()[0]
    except sidedb.errors():
        return None
    finally:
        side.close()
    return SideCounts(by_ids.index_entries, by_ids.rollup_rows + days + totals)


def _key_shared(side: sqlite3.Connection, principal: str, session_ids: Sequence[str]) -> bool:
    """Whether sessions other than ``session_ids`` are filed under ``principal``'s key."""
    filed = side.execute(
        "SELECT count(*) FROM rollup_session WHERE principal = ?", [principal]
    ).fetchone()[0]
    mine = 0
    for chunk in chunks([sidedb.bind_id(sid) for sid in session_ids]):
        # "+principal": seek each id in the unique index instead of walking every row
        # filed under the principal once per chunk.
        mine += side.execute(
            f"SELECT count(*) FROM rollup_session WHERE +principal = ? "
            f"AND session_id IN ({placeholders(len(chunk))})",
            [principal, *chunk],
        ).fetchone()[0]
    return filed > mine


def side_session_ids(principal: str) -> list[str]:
    """Session ids the side database still files under ``principal`` (index and rollups)."""
    side = sidedb.connect_readonly()
    if side is None:
        return []
    try:
        found = [
            sidedb.read_id(row[0])
            for row in side.execute(
                "SELECT id FROM search_sessions WHERE principal_id = ? "
                "UNION SELECT session_id FROM rollup_session WHERE principal = ?",
                [principal, principal],
            )
        ]
    except sidedb.errors():
        return []
    finally:
        side.close()
    return found
