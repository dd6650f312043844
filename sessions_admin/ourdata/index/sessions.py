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

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, fold, fts_query
from sessions_admin.ourdata.sync import is_current, read_state
from sessions_admin.store import feed, queries
from sessions_admin.store.queries import Cursor, SessionFilter, SessionPage

#: How long after a complete pass the index still counts as fresh.
FRESH_FOR_S = 600
#: Above this many trigram candidates, walking by last activity is cheaper.
CANDIDATE_CAP = 1000


def is_fresh(side: sqlite3.Connection) -> bool:
    if not is_current(side):
        return False
    state = read_state(side)
    if not isinstance(state.synced_at_ms, int):
        return False
    if time.time() * 1000 - state.synced_at_ms > FRESH_FOR_S * 1000:
        return False
    return feed.last_message_id() <= state.last_id


def _ids(
    side: sqlite3.Connection,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
) -> list[str]:
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
    sql = f"SELECT id FROM search_sessions WHERE {' AND '.join(clauses)} {order} LIMIT ?"
    return [row[0] for row in side.execute(sql, [*params, limit + 1])]


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
        ids = _ids(side, session_filter, sort, cursor, limit)
    except sidedb.errors():
        return None  # a damaged or half-built side database: the scan still works
    finally:
        side.close()
    # page_of_ids checks the text filter again in the store, with the same folding.
    return queries.page_of_ids(ids, session_filter, sort, limit=limit)
