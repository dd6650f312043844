"""The session list's principal and title filters, served from the side index.

The store has no index on ``principal_id`` or ``title``: both filters are a
scan of every session there (about 55 and 120 ms on 500,000). The side
index keeps each session's columns (``search_sessions``, indexed by
principal and by last activity) and a trigram index of title, principal and
id, so it can pick the page's ids in a few milliseconds; the store then
reads just those rows by primary key and checks them again
(:func:`sessions_admin.store.queries.page_of_ids`).

Only a *fresh* index is used: the last pass finished less than
:data:`FRESH_FOR_S` ago and no message is newer than the last one it
indexed. Otherwise (and for filters it does not cover) the caller scans the
store as before.
"""

from __future__ import annotations

import sqlite3
import time
from typing import Any

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, contains, fold, fts_query
from sessions_admin.ourdata.sync import is_current, read_state
from sessions_admin.store import feed, queries
from sessions_admin.store.queries import Cursor, SessionFilter, SessionPage

#: How long after a complete pass the index still counts as fresh.
FRESH_FOR_S = 600
#: Above this many trigram candidates, walking by last activity is cheaper.
CANDIDATE_CAP = 1000
#: Reads of the index per page before the list scans the store instead.
MAX_ROUNDS = 8


def is_fresh(side: sqlite3.Connection) -> bool:
    if not is_current(side):
        return False
    state = read_state(side)
    if not isinstance(state.synced_at_ms, int):
        return False
    if time.time() * 1000 - state.synced_at_ms > FRESH_FOR_S * 1000:
        return False
    # Sessions whose id the index cannot hold (BLOB, or text that is not UTF-8)
    # would be missing from its answers: the list scans the store instead.
    unindexable = side.execute(
        "SELECT value FROM sync_state WHERE key = 'unindexable_sessions'"
    ).fetchone()
    if unindexable is not None and unindexable[0]:
        return False
    return feed.last_message_id() <= state.last_id


def _ids(
    side: sqlite3.Connection,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
) -> list[tuple[str, Any]]:
    """Up to ``limit`` (id, sort value) pairs after ``cursor``, in the index's order."""
    column, _ = queries.SORTS[sort]
    clauses, params = queries.filter_with(session_filter, q=None).where()
    key_clauses, key_params, order = queries.keyset_sql(sort, cursor)
    clauses, params = clauses + key_clauses, params + key_params
    if session_filter.q:
        folded = fold(session_filter.q)
        # ``fold`` holds the folded title and id: instr on it is the exact test.
        clauses.append("instr(fold, ?) > 0")
        params.append(folded)
        if len(folded) >= 3 and FIELD_SEPARATOR not in folded:
            keys = [
                row[0]
                for row in side.execute(
                    "SELECT rowid FROM search_session_text WHERE search_session_text MATCH ? "
                    "LIMIT ?",
                    (fts_query(folded), CANDIDATE_CAP + 1),
                )
            ]
            if len(keys) <= CANDIDATE_CAP:
                if not keys:
                    return []
                clauses.append(f"key IN ({', '.join('?' * len(keys))})")
                params.extend(keys)
    sql = f"SELECT id, {column} FROM search_sessions WHERE {' AND '.join(clauses)} {order} LIMIT ?"
    return [(row[0], row[1]) for row in side.execute(sql, [*params, limit])]


def _fill(
    side: sqlite3.Connection,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
) -> SessionPage | None:
    """Read the index until ``limit`` rows pass the store's check, or give up (None).

    Every id the index proposes is read back from the store and checked
    again; one the runtime deleted or changed is skipped and the next one read,
    so a page is short only where the index really ends. The next page starts
    after the last row the index gave (its position, not the store's newer
    values), so no row is shown twice or skipped.
    """
    folded = fold(session_filter.q) if session_filter.q else None

    def keep(row: Any) -> bool:
        return folded is None or contains(folded, (row.title, row.id))

    rows: list = []
    position = cursor
    for _ in range(MAX_ROUNDS):
        want = limit - len(rows)
        picked = _ids(side, session_filter, sort, position, want + 1)
        kept = queries.page_of_ids(
            [sid for sid, _ in picked[:want]], session_filter, sort, limit=want, keep=keep
        ).rows
        rows.extend(kept)
        if len(picked) <= want:
            return SessionPage(rows=rows, next_cursor=None, strategy="index")
        last_id, last_value = picked[want - 1]
        position = Cursor(sort, 0 if last_value is None else last_value, last_id)
        if len(rows) == limit:
            return SessionPage(rows=rows, next_cursor=position, strategy="index")
    return None  # the index keeps proposing rows the store no longer has: scan instead


def list_sessions(
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int = queries.PAGE_SIZE,
) -> SessionPage | None:
    """A list page from the index, or ``None`` when the index cannot serve it now."""
    if not (session_filter.principal or session_filter.q):
        return None
    side = sidedb.connect_readonly()
    if side is None:
        return None
    try:
        if not is_fresh(side):
            return None
        return _fill(side, session_filter, sort, cursor, limit)
    except sidedb.errors():
        return None  # a damaged or half-built side database: the scan still works
    finally:
        side.close()
