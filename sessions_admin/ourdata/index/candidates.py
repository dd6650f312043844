"""Search's candidates from the trigram index: the blocks that match, newest first,
expanded into the messages that pass a query's filters (:func:`candidates`).

:mod:`.search` checks each candidate against the store; this module only reads the
side database.
"""

from __future__ import annotations

import heapq
import json
import sqlite3
from collections.abc import Callable, Container, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index import textindex
from sessions_admin.ourdata.index.text import fts_query
from sessions_admin.ourdata.rollups import calls
from sessions_admin.store import feed

if TYPE_CHECKING:
    from sessions_admin.ourdata.index.search import SearchQuery

#: Candidates checked in the store per round trip.
CANDIDATE_BATCH = 200
#: Index blocks read by the first query of a walk, doubled by each next one up to the
#: most: a busy session's blocks are expanded in the first small steps, after which its
#: group is full and its further blocks are counted, not expanded.
FIRST_BLOCKS = 16
MOST_BLOCKS = 512


def name_key(side: sqlite3.Connection, kind: str, name: str) -> int | None:
    row = side.execute(
        "SELECT key FROM search_names WHERE kind = ? AND name = ?", (kind, name)
    ).fetchone()
    return row[0] if row else None


@dataclass(frozen=True)
class Filters:
    """A query's filters as SQL: on each message (``m``), and on its session (``s``)."""

    messages: str
    message_params: list[object]
    sessions: list[str]
    session_params: list[object]

    @property
    def narrow_messages(self) -> bool:
        """Does a filter on role, tool or time (beyond the cursor's id) apply to messages?"""
        return len(self.message_params) > 1


def filters_of(side: sqlite3.Connection, query: SearchQuery, upper: int) -> Filters | None:
    """None when a filter names a role or tool the index has never seen."""
    message_clauses = ["m.id < ?"]
    message_params: list[object] = [upper]
    for kind, wanted in (("role", query.role), ("tool", query.tool)):
        if wanted is not None:
            key = name_key(side, kind, wanted)
            if key is None:
                return None
            message_clauses.append(f"m.{kind} = ?")
            message_params.append(key)
    if query.since_ms is not None:
        message_clauses.append("m.ts >= ?")
        message_params.append(query.since_ms)
    if query.until_ms is not None:
        message_clauses.append("m.ts < ?")
        message_params.append(query.until_ms)
    session_clauses: list[str] = []
    session_params: list[object] = []
    for column, wanted in (
        ("target_key", query.target),
        ("profile_key", query.profile),
        ("principal_id", query.principal),
    ):
        if wanted is not None:
            session_clauses.append(f"s.{column} = ?")
            session_params.append(wanted)
    if query.failed:
        session_clauses.append(calls.HAS_FAILED_CALL.format(id="s.id"))
    if query.sessions is not None:
        # A label's sessions: blocks of other sessions are passed over here, before
        # the store is asked for anything, so a page fills with the label's.
        # Ids held as text, and those held as their exact bytes (sidedb.bind_id), in hex.
        held = [sidedb.bind_id(sid) for sid in sorted(query.sessions)]
        session_clauses.append(
            "(s.id IN (SELECT value FROM json_each(?)) "
            "OR s.id IN (SELECT unhex(value) FROM json_each(?)))"
        )
        session_params.append(json.dumps([sid for sid in held if isinstance(sid, str)]))
        session_params.append(json.dumps([sid.hex() for sid in held if isinstance(sid, bytes)]))
    return Filters(" AND ".join(message_clauses), message_params, session_clauses, session_params)


def candidates(
    side: sqlite3.Connection,
    query: SearchQuery,
    before_id: int | None,
    settled: Container[int] = frozenset(),
) -> Iterator[list[tuple[int, int]]] | None:
    """Batches of (message id, session key) the index names, newest first.

    The index holds blocks of a session's messages (:mod:`.textindex`); those
    matching the query come newest block first, each expanded into its
    session's messages that pass the filters, and a message is let go only
    when no block still unread can hold a newer one (a block's rowid is its
    highest message id), so the candidates keep the order of message ids
    that the page's cursor needs. A block reaches at most ``SPAN`` ids below
    its rowid: the walk starts that far above the cursor.

    A block of a session in ``settled`` (read at each step: the caller adds
    sessions whose group is full) is not expanded: it stands for its messages
    as one candidate, its highest id.

    None when a filter names a role or tool the index has never seen.
    """
    upper = feed.INT_MAX if before_id is None else min(before_id, feed.INT_MAX)
    filters = filters_of(side, query, upper)
    if filters is None:
        return None
    joins = " CROSS JOIN search_sessions AS s ON s.key = h.session" if filters.sessions else ""
    # CROSS JOIN keeps the FTS table outermost: its rowid order drives the walk. With
    # a filter on role, tool or time, a block is named only if one of its messages
    # passes it (else a step could fill with blocks that expand to nothing); without
    # one, "b.low < cursor" says enough and the expansion reads each block once.
    exists = (
        " AND EXISTS (SELECT 1 FROM search_messages AS m WHERE m.session = h.session "
        f"AND m.id BETWEEN b.low AND t.rowid AND {filters.messages})"
        if filters.narrow_messages
        else ""
    )
    blocks_sql = (
        "SELECT t.rowid, b.low, h.session FROM search_text AS t "
        "CROSS JOIN search_blocks AS b ON b.high = t.rowid "
        "CROSS JOIN search_messages AS h ON h.id = t.rowid"
        f"{joins} WHERE search_text MATCH ? AND t.rowid < ? AND b.low < ?"
        + "".join(f" AND {clause}" for clause in filters.sessions)
        + f"{exists} ORDER BY t.rowid DESC LIMIT ?"
    )
    expand_sql = (
        "SELECT m.id, m.session FROM json_each(?) AS j CROSS JOIN search_messages AS m "
        "ON m.session = j.value ->> 2 AND m.id BETWEEN j.value ->> 1 AND j.value ->> 0 "
        f"WHERE {filters.messages}"
    )
    match = [fts_query(query.folded)]

    def blocks(cursor: int, step: int) -> list[tuple[int, int, int]]:
        narrowing = filters.message_params if filters.narrow_messages else []
        params = [*match, cursor, upper, *filters.session_params, *narrowing, step]
        return side.execute(blocks_sql, params).fetchall()

    def expand(found: list[tuple[int, int, int]]) -> list[tuple[int, int]]:
        rows = side.execute(
            expand_sql,
            [json.dumps([b for b in found if b[2] not in settled]), *filters.message_params],
        ).fetchall()
        return rows + [(high, key) for high, _, key in found if key in settled]

    return merged(blocks, expand, min(upper + textindex.SPAN, feed.INT_MAX))


def merged(
    blocks: Callable[[int, int], list[tuple[int, int, int]]],
    expand: Callable[[list[tuple[int, int, int]]], list[tuple[int, int]]],
    cursor: int,
) -> Iterator[list[tuple[int, int]]]:
    """The blocks below ``cursor`` (newest first, ``blocks(cursor, how_many)``), expanded
    into (message id, session key) and let out newest first, each id once."""
    waiting: list[tuple[int, int]] = []  # a heap of (-id, session key)
    held: set[int] = set()  # ids in it (blocks left by a redone batch may overlap)
    step = FIRST_BLOCKS
    while True:
        found = blocks(cursor, step)
        last = len(found) < step
        step = min(step * 2, MOST_BLOCKS)
        if found:
            for mid, key in expand(found):
                if mid not in held:
                    held.add(mid)
                    heapq.heappush(waiting, (-mid, key))
            cursor = found[-1][0]  # every block still unread holds ids below it
        ready: list[tuple[int, int]] = []
        while waiting and (last or -waiting[0][0] >= cursor):
            negative, key = heapq.heappop(waiting)
            held.discard(-negative)
            ready.append((-negative, key))
        for at in range(0, len(ready), CANDIDATE_BATCH):
            yield ready[at : at + CANDIDATE_BATCH]
        if last:
            return
