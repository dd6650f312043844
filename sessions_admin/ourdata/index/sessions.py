"""The session list's principal and title filters, served from the side index.

The store has no index on ``principal_id`` or ``title``: both filters are a
scan of every session there (about 55 and 120 ms on 500,000). The side
index keeps each session's columns (``search_sessions``, indexed by
principal and by last activity) and a trigram index of title, principal and
id, so it can pick the page's ids in a few milliseconds (:func:`page_ids`);
the list view then has the store read just those rows by primary key and
check them again (:func:`sessions_admin.store.queries.page_of_ids`, with
:func:`still_matches`).

The index is used while the last pass finished less than
:data:`FRESH_FOR_S` ago. The runtime keeps appending in the meantime, and a
new message moves its session (its ``last_active`` and ``turn_count``, and
maybe a row created with it): so the sessions of the messages newer than
the pass (at most :data:`RECENT_MESSAGES` of them) are left out of the
index's answer and read from the store's own rows instead, then merged in
the list's order (:func:`page_ids`). A page is then what a scan of the store
gives, but for session rows edited without a new message since the pass (the
next pass sees them; the rows shown are checked again either way), and for
a session created since with a BLOB id (left out of the sessions touched:
the next pass marks the index as unable to hold it, and the list scans).
With more new messages than that, an older pass, or sessions the index
cannot hold, the caller scans the store as before.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from sessions_admin import clock
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, fold, fts_query
from sessions_admin.ourdata.rollups import calls
from sessions_admin.ourdata.sync import is_current, read_state
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store import feed
from sessions_admin.store.feed import Cursor, SessionFilter

#: How long after a complete pass the index still counts as fresh.
FRESH_FOR_S = 600
#: Above this many trigram candidates, walking by last activity is cheaper.
CANDIDATE_CAP = 1000
#: Messages newer than the last pass whose sessions a page reads from the store
#: (about 3 ms per 10,000 on the bench store); beyond it the list scans.
RECENT_MESSAGES = 20_000


def recent_sessions(side: sqlite3.Connection) -> list[str] | None:
    """The sessions the index may hold out of place (those with messages newer than
    its last pass), or ``None`` when it cannot serve the list now."""
    if not is_current(side):
        return None
    state = read_state(side)
    if not isinstance(state.synced_at_ms, int):
        return None
    if clock.now_ms() - state.synced_at_ms > FRESH_FOR_S * 1000:
        return None
    # Sessions whose id the index cannot hold (BLOB, or text that is not UTF-8)
    # would be missing from its answers: the list scans the store instead.
    unindexable = side.execute(
        "SELECT value FROM sync_state WHERE key = 'unindexable_sessions'"
    ).fetchone()
    if unindexable is not None and unindexable[0]:
        return None
    recent = feed.sessions_touched_after(state.last_id, RECENT_MESSAGES)
    if recent is None or any(type(sid) is not str for sid in recent):
        return None  # a busy runtime far ahead of the last pass, or an id the index cannot hold
    return sorted(recent)


def _ids(
    side: sqlite3.Connection,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
    leave_out: list[str] | None = None,
    failed: bool = False,
) -> list[tuple[str, Any]]:
    """Up to ``limit`` (id, sort value) pairs after ``cursor``, in the index's order,
    none of ``leave_out``; with ``failed``, only sessions the rollups hold a failed call of."""
    column, clauses, params, order = feed.session_list_sql(session_filter, sort, cursor)
    if failed:
        clauses.append(calls.HAS_FAILED_CALL.format(id="search_sessions.id"))
    if leave_out:
        clauses.append("id NOT IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(leave_out))
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
                clauses.append(f"key IN ({placeholders(len(keys))})")
                params.extend(keys)
    sql = f"SELECT id, {column} FROM search_sessions WHERE {' AND '.join(clauses)} {order} LIMIT ?"
    return [(sidedb.read_id(row[0]), row[1]) for row in side.execute(sql, [*params, limit])]


def page_ids(
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int,
    failed: bool = False,
) -> list[tuple[str, Any]] | None:
    """Up to ``limit`` (id, sort value) pairs after ``cursor`` from the fresh index,
    in its order; ``None`` when the index cannot serve this filter now. ``failed``
    keeps the sessions with a failed call as of the last pass (the rollups').

    The caller reads the rows back from the store and checks them again, and
    asks for more after the last pair when some were deleted or changed
    (``lists.sessions.index_page``), so a page is short only where the index ends.
    The sessions with messages newer than the last pass come from the store's
    rows, merged in (see the module's docstring).
    """
    if not (session_filter.principal or session_filter.q or failed):
        return None
    side = sidedb.connect_readonly()
    if side is None:
        return None
    try:
        recent = recent_sessions(side)
        if recent is None:
            return None
        indexed = _ids(side, session_filter, sort, cursor, limit, leave_out=recent, failed=failed)
        if failed and recent:
            recent = sorted(
                sid for chunk in chunks(recent) for sid in calls.failed_by_session(side, chunk)
            )
    except sidedb.errors():
        return None  # a damaged or half-built side database: the scan still works
    finally:
        side.close()
    if not recent:
        return indexed
    moved = feed.session_sort_values(recent, session_filter, sort, cursor, limit)
    return feed.merge_pairs([indexed, moved], sort, limit)
