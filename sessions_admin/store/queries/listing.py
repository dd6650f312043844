"""Finding sessions fast among hundreds of thousands: a page of the list, its counts,
walks over every match.

The list is keyset-paginated (never OFFSET, never a full COUNT per page) and
every query runs under :func:`~sessions_admin.store.connection.time_limit`.

The default order, most recently active first across all targets, has no
index of its own: the store only has ``idx_session_target (target_key,
last_active)``. So the list walks the few distinct targets with index seeks
(a skip scan done by hand), takes the newest slice of each from that index
and merges them in Python. A filter on principal or title text has no index
at all; those run as one plain scan, bounded by the time limit.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from itertools import islice
from typing import Any

from sessions_admin import sqlhelpers
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.queries.filters import (
    DEFAULT_SORT,
    ID_INDEX,
    MAX_MERGED_TARGETS,
    PAGE_SIZE,
    SELECT_COLUMNS,
    SESSION_COLUMNS,
    SORTS,
    SessionFilter,
    SessionRow,
)
from sessions_admin.store.queries.keyset import (
    Cursor,
    SessionPage,
    cut_rows,
    keyset_where,
    order_by,
)
from sessions_admin.store.values import (
    sqlite_order_key,
)


def distinct_targets(limit: int = MAX_MERGED_TARGETS + 1) -> list[str]:
    """Distinct target keys by index seeks: one seek per target, not a scan.

    One statement (a recursive step from each target to the next), not one
    round trip per target: each seek is a few microseconds, a round trip
    through the driver about 25. Each step compares with the value as SQLite
    holds it, whatever its storage class.
    """
    rows = run_sql(
        "WITH RECURSIVE step(target, n) AS ("
        " SELECT (SELECT MIN(target_key) FROM sessions), 1"
        " UNION ALL"
        " SELECT (SELECT MIN(target_key) FROM sessions WHERE target_key > step.target), n + 1"
        " FROM step WHERE step.target IS NOT NULL AND n < ?"
        ") SELECT target FROM step WHERE target IS NOT NULL",
        [limit],
    )
    return [row[0] for row in rows]


def rows_matching(session_ids: list[str], session_filter: SessionFilter) -> dict[Any, tuple]:
    """The raw rows of these sessions that still exist and match ``session_filter``
    (primary-key lookups), by id."""
    clauses, params = session_filter.where()
    found: dict[Any, tuple] = {}
    for chunk in chunks(session_ids):
        where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses])
        for raw in run_sql(f"{SELECT_COLUMNS} WHERE {where}", [*chunk, *params]):
            found[raw[ID_INDEX]] = raw
    return found


def list_sessions(
    session_filter: SessionFilter,
    sort: str = DEFAULT_SORT,
    cursor: Cursor | None = None,
    *,
    limit: int = PAGE_SIZE,
    with_count: bool = False,
    force_count: bool = False,
    time_limit_ms: int | None = None,
    targets: list[str] | None = None,
) -> SessionPage:
    """One keyset page; ``targets`` (from :func:`distinct_targets`) saves the
    seeks when the caller already has them."""
    column, descending = SORTS[sort]
    key_clauses, key_params = keyset_where(column, descending, cursor)
    with time_limit(time_limit_ms):
        page = _fetch_page(
            session_filter, column, descending, key_clauses, key_params, limit, targets
        )
        if with_count and (force_count or session_filter.count_is_cheap()):
            page.count, page.count_capped = count_sessions(session_filter)
    if with_count and page.count is None and len(page.rows) <= limit:
        # The whole result is on this page: its length is the exact count.
        page.count = len(page.rows)
    page.rows, page.next_cursor = cut_rows(page.rows, sort, limit)
    return page


def count_among(
    session_ids: list[str], session_filter: SessionFilter, cap: int | None = None
) -> tuple[int, bool]:
    """How many of these sessions exist and match (at most ``cap``, and whether capped)."""
    cap = sqlhelpers.COUNT_CAP if cap is None else cap
    clauses, params = session_filter.where()
    count = 0
    with time_limit():
        for chunk in chunks(session_ids):
            where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses])
            count += run_sql(f"SELECT COUNT(*) FROM sessions WHERE {where}", [*chunk, *params])[0][
                0
            ]
            if count > cap:
                break
    return min(count, cap), count > cap


def list_sessions_among(
    session_ids: list[str],
    session_filter: SessionFilter,
    sort: str = DEFAULT_SORT,
    cursor: Cursor | None = None,
    *,
    limit: int = PAGE_SIZE,
) -> SessionPage:
    """One keyset page of only these sessions (a label's), with the other filters.

    Each chunk of ids is a primary-key lookup of its rows, sorted, the page's
    slice kept; the slices are merged in SQLite's order. Every labelled session
    is read (about 6 µs each on the bench store), which is why the list reads
    its label pages from our copies of the sort values when it can
    (``lists.labelled``): this is their exact fallback.
    """
    column, descending = SORTS[sort]
    key_clauses, key_params = keyset_where(column, descending, cursor)
    clauses, params = session_filter.where()
    order = order_by(column, descending)
    slices: list[list[tuple]] = []
    with time_limit():
        for chunk in chunks(session_ids):
            where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses, *key_clauses])
            slices.append(
                run_sql(
                    f"{SELECT_COLUMNS} WHERE {where} {order} LIMIT {limit + 1}",
                    [*chunk, *params, *key_params],
                )
            )
    raw = slices[0] if len(slices) == 1 else _merge(slices, limit + 1, descending, column)
    rows, next_cursor = cut_rows(raw, sort, limit)
    return SessionPage(rows=rows, next_cursor=next_cursor, strategy="among")


#: Rows a whole-list walk reads at first per target (then twice as many, up to WALK_MAX_STEP).
WALK_STEP = 256

WALK_MAX_STEP = 8192


def _mergeable(session_filter: SessionFilter, column: str) -> bool:
    """Is the list read per target and merged (the store's (target, last_active) index)?"""
    return (
        column == "last_active"
        and not session_filter.target
        and not session_filter.principal
        and not session_filter.q
    )


def walk_sessions(session_filter: SessionFilter, sort: str = DEFAULT_SORT) -> Iterator[SessionRow]:
    """Every session the list shows for this filter, in its order, read as it is taken
    (a review queue's source stops after 10,001).

    Where the list merges per target, each target's index is read a step at a
    time and the streams merged, so 10,000 sessions cost about 10,000 rows
    read; pages of the list would read a page's worth per target per page
    (eight times as many on the bench store)."""
    column, descending = SORTS[sort]
    targets = distinct_targets() if _mergeable(session_filter, column) else []
    if _mergeable(session_filter, column) and len(targets) <= MAX_MERGED_TARGETS:
        index = SESSION_COLUMNS.index(column)
        streams = [_target_stream(target, session_filter, sort) for target in targets]
        for raw in heapq.merge(
            *streams,
            key=lambda row: (sqlite_order_key(row[index]), sqlite_order_key(row[ID_INDEX])),
            reverse=descending,
        ):
            yield SessionRow.from_db(raw)
        return
    cursor, step = None, WALK_STEP
    while True:
        page = list_sessions(session_filter, sort, cursor, limit=step)
        yield from page.rows
        if page.next_cursor is None:
            return
        cursor, step = page.next_cursor, min(step * 2, WALK_MAX_STEP)


def _target_stream(target: str, session_filter: SessionFilter, sort: str) -> Iterator[tuple]:
    """One target's sessions in the sort's order, raw, a growing step at a time."""
    clauses, params = session_filter.where(include_target=False)
    return _equal_stream("target_key", target, clauses, params, sort)


def walk_principal_sessions(principal: str, sort: str = DEFAULT_SORT) -> Iterator[SessionRow]:
    """Every session whose row names ``principal`` exactly, the empty principal
    included (which the list's ``?principal=`` reads as no filter), in the sort's order."""
    for raw in _equal_stream("principal_id", principal, [], [], sort):
        yield SessionRow.from_db(raw)


def _equal_stream(
    name: str, value: str, clauses: list[str], params: list[Any], sort: str
) -> Iterator[tuple]:
    """The sessions whose column ``name`` is ``value`` (and ``clauses``), raw, in the
    sort's order, a growing step at a time."""
    column, descending = SORTS[sort]
    index = SESSION_COLUMNS.index(column)
    cursor, step = None, WALK_STEP
    while True:
        key_clauses, key_params = keyset_where(column, descending, cursor)
        where = " AND ".join([f"{name} = ?", *clauses, *key_clauses])
        rows = run_sql(
            f"{SELECT_COLUMNS} WHERE {where} {order_by(column, descending)} LIMIT {step}",
            [value, *params, *key_params],
        )
        yield from rows
        if len(rows) < step:
            return
        cursor = Cursor(sort, rows[-1][index], rows[-1][ID_INDEX])
        step = min(step * 2, WALK_MAX_STEP)


def _fetch_page(
    session_filter: SessionFilter,
    column: str,
    descending: bool,
    key_clauses: list[str],
    key_params: list[Any],
    limit: int,
    targets: list[str] | None,
) -> SessionPage:
    order = order_by(column, descending)
    if _mergeable(session_filter, column):
        targets = distinct_targets() if targets is None else targets
        if len(targets) <= MAX_MERGED_TARGETS:
            clauses, params = session_filter.where(include_target=False)
            where = " AND ".join(["target_key = ?", *clauses, *key_clauses])
            sql = f"{SELECT_COLUMNS} WHERE {where} {order} LIMIT {limit + 1}"
            # Merge the raw tuples and build rows only for the slice kept: most
            # of the fetched rows are dropped.
            slices = [run_sql(sql, [target, *params, *key_params]) for target in targets]
            rows = _merge(slices, limit + 1, descending)
            return SessionPage(rows=rows, next_cursor=None, strategy="merge", sql=[sql])
    clauses, params = session_filter.where()
    where = f"WHERE {' AND '.join(clauses + key_clauses)}" if clauses or key_clauses else ""
    sql = f"{SELECT_COLUMNS} {where} {order} LIMIT {limit + 1}"
    rows = run_sql(sql, params + key_params)
    return SessionPage(rows=rows, next_cursor=None, strategy="scan", sql=[sql])  # type: ignore[arg-type]


def _merge(
    slices: list[list[tuple]], count: int, descending: bool, column: str = "last_active"
) -> list[tuple]:
    """The first ``count`` raw rows of sorted slices (per target, per id chunk), in
    SQLite's order of the sort ``column``."""
    index = SESSION_COLUMNS.index(column)

    def value(row: tuple) -> Any:
        # The ORDER BY's expression: a NULL turn count sorts as 0 (SORT_EXPRESSIONS).
        raw = row[index]
        return 0 if raw is None and column == "turn_count" else raw

    try:
        merged = heapq.merge(
            *slices, key=lambda row: (value(row), row[ID_INDEX]), reverse=descending
        )
        return list(islice(merged, count))
    except TypeError:
        # A TEXT or BLOB last_active (or id) cannot be compared with an int in
        # Python; order those rows the way SQLite does. Only such stores pay for it.
        merged = heapq.merge(
            *slices,
            key=lambda row: (sqlite_order_key(value(row)), sqlite_order_key(row[ID_INDEX])),
            reverse=descending,
        )
        return list(islice(merged, count))


def count_sessions(session_filter: SessionFilter, cap: int | None = None) -> tuple[int, bool]:
    """How many sessions match, counting at most ``cap + 1`` rows (``COUNT_CAP`` by default)."""
    if cap is None:
        cap = sqlhelpers.COUNT_CAP
    clauses, params = session_filter.where()
    where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
    rows = run_sql(f"SELECT COUNT(*) FROM (SELECT 1 FROM sessions {where} LIMIT {cap + 1})", params)
    count = rows[0][0]
    return min(count, cap), count > cap


def count_sessions_limited(
    session_filter: SessionFilter, *, time_limit_ms: int | None = None
) -> tuple[int, bool]:
    with time_limit(time_limit_ms):
        return count_sessions(session_filter)


def get_session(session_id: str) -> SessionRow | None:
    rows = run_sql(f"{SELECT_COLUMNS} WHERE id = ?", [session_id])
    return SessionRow.from_db(rows[0]) if rows else None


def existing_session_ids(session_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for batch in chunks(session_ids):
        marks = placeholders(len(batch))
        found.update(
            row[0] for row in run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", batch)
        )
    return found
