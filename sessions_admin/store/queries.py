"""Finding sessions fast among hundreds of thousands.

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
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from itertools import islice
from typing import Any

from django.core import signing
from django.utils import timezone

from sessions_admin import params, sqlhelpers
from sessions_admin.folding import fold
from sessions_admin.params import BadParameter
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import StoreTimeout, run_sql, time_limit
from sessions_admin.store.health import REQUIRED_COLUMNS
from sessions_admin.store.textmatch import contains_folded_sql

__all__ = ["StoreTimeout"]
from sessions_admin.store.timeutil import from_epoch_ms, to_epoch_ms
from sessions_admin.store.values import (
    OddValue,
    Undecodable,
    as_id,
    as_int,
    as_text,
    as_time,
    sqlite_order_key,
)

PAGE_SIZE = 50
#: Above this many distinct targets the merge stops paying off.
MAX_MERGED_TARGETS = 200

#: The list's sort orders: ``?sort=`` value, column, descending, the menu's label.
SORT_ORDERS: tuple[tuple[str, str, bool, str], ...] = (
    ("-last_active", "last_active", True, "last active, newest first"),
    ("last_active", "last_active", False, "last active, oldest first"),
    ("-created_at", "created_at", True, "created, newest first"),
    ("created_at", "created_at", False, "created, oldest first"),
    ("-turn_count", "turn_count", True, "most turns first"),
    ("turn_count", "turn_count", False, "fewest turns first"),
)
SORTS: dict[str, tuple[str, bool]] = {key: (col, desc) for key, col, desc, _ in SORT_ORDERS}
SORT_LABELS: dict[str, str] = {key: label for key, _, _, label in SORT_ORDERS}
DEFAULT_SORT = "-last_active"
# turn_count may be NULL; sort and page on it as 0 so keyset comparisons hold.
_SORT_EXPR = {
    "last_active": "last_active",
    "created_at": "created_at",
    "turn_count": "COALESCE(turn_count, 0)",
}
ACTIVE_PRESETS: dict[str, tuple[str, timedelta]] = {
    "1h": ("last hour", timedelta(hours=1)),
    "24h": ("last day", timedelta(days=1)),
    "7d": ("last week", timedelta(days=7)),
    "30d": ("last 30 days", timedelta(days=30)),
    "90d": ("last 90 days", timedelta(days=90)),
}
SESSION_COLUMNS = REQUIRED_COLUMNS["sessions"]  # in SessionRow's field order
_ID = SESSION_COLUMNS.index("id")
_LAST_ACTIVE = SESSION_COLUMNS.index("last_active")
#: Session text columns read clipped in SQLite (store.cliptext), here and in the admin;
#: the id never is: it is what every link and delete is keyed on.
CLIPPED_SESSION_COLUMNS = ("title", "target_key", "profile_key", "principal_id")
_SELECT = (
    "SELECT "
    + ", ".join(
        clipped_sql(column) if column in CLIPPED_SESSION_COLUMNS else column
        for column in SESSION_COLUMNS
    )
    + " FROM sessions"
)


@dataclass(frozen=True)
class SessionRow:
    """A session as pages show it: declared types, or an :class:`OddValue` saying
    what the store holds instead (see :mod:`sessions_admin.store.values`)."""

    id: str
    target_key: str
    profile_key: str
    principal_id: str | None
    title: str | None
    turn_count: int | None
    created_at: int
    last_active: int

    @classmethod
    def from_db(cls, row: tuple) -> SessionRow:
        session_id, target, profile, principal, title, turns, created, last = row
        return cls(
            as_id(session_id),
            as_text(target),  # type: ignore[arg-type]
            as_text(profile),  # type: ignore[arg-type]
            as_text(principal),
            as_text(title),
            as_int(turns),  # type: ignore[arg-type]
            as_time(created),  # type: ignore[arg-type]
            as_time(last),  # type: ignore[arg-type]
        )

    @property
    def linkable(self) -> bool:
        """False for a NULL or BLOB id: no URL can name it."""
        return not isinstance(self.id, OddValue)

    @property
    def created(self) -> datetime | None:
        return from_epoch_ms(self.created_at)

    @property
    def last_active_at(self) -> datetime | None:
        return from_epoch_ms(self.last_active)


@dataclass(frozen=True)
class SessionFilter:
    target: str | None = None
    profile: str | None = None
    principal: str | None = None
    q: str | None = None
    active_after_ms: int | None = None
    active_before_ms: int | None = None

    def is_empty(self) -> bool:
        return all(value in (None, "") for value in self.__dict__.values())

    def where(self, *, include_target: bool = True) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if include_target and self.target:
            clauses.append("target_key = ?")
            params.append(self.target)
        if self.profile:
            clauses.append("profile_key = ?")
            params.append(self.profile)
        if self.principal:
            clauses.append("principal_id = ?")
            params.append(self.principal)
        if self.q:
            # The one folding (sessions_admin.folding), as the side index answers it.
            folded = fold(self.q)
            title, title_params = contains_folded_sql("title", folded)
            session_id, id_params = contains_folded_sql("id", folded)
            clauses.append(f"({title} OR {session_id})")
            params += [*title_params, *id_params]
        if self.active_after_ms is not None:
            clauses.append("last_active >= ?")
            params.append(self.active_after_ms)
        if self.active_before_ms is not None:
            clauses.append("last_active < ?")
            params.append(self.active_before_ms)
        return clauses, params

    def count_is_cheap(self) -> bool:
        """Can a capped count be served by an index (no filter, or a target)?"""
        unindexed = self.principal or self.q or self.active_after_ms or self.active_before_ms
        if unindexed:
            return False
        return bool(self.target) or not self.profile

    def describe(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v not in (None, "")}


@dataclass(frozen=True)
class Cursor:
    """Where the next slice starts: the last row's sort value and id."""

    sort: str
    #: The raw store values (any storage class: a keyset must compare like SQLite).
    value: Any
    id: Any

    def token(self) -> str:
        return signing.dumps(
            [self.sort, _tagged(self.value), _tagged(self.id)],
            salt="sessions.cursor",
            compress=True,
        )

    @classmethod
    def from_token(cls, token: str, sort: str) -> Cursor:
        try:
            data = signing.loads(token, salt="sessions.cursor")
            token_sort, value, row_id = data
            value, row_id = _untagged(value), _untagged(row_id)
        except (signing.BadSignature, ValueError, TypeError):
            raise BadParameter(
                "cursor: the link's page position is damaged or was edited.", name="cursor"
            ) from None
        if token_sort != sort:
            raise BadParameter(
                "cursor: the page position does not belong to this sort order.", name="cursor"
            )
        return cls(sort, value, row_id)


def _tagged(value: Any) -> Any:
    """JSON for a store value of any storage class (BLOBs as hex)."""
    if isinstance(value, bytes):
        return {"blob": value.hex()}
    if isinstance(value, Undecodable):  # TEXT that is not UTF-8: keep its bytes
        return {"text_bytes": value.raw.hex()}
    return value


def _untagged(value: Any) -> Any:
    if isinstance(value, dict):
        if "text_bytes" in value:
            return Undecodable(bytes.fromhex(value["text_bytes"]))
        return bytes.fromhex(value["blob"])
    if isinstance(value, int) and not -params.MAX_SQLITE_INT - 1 <= value <= params.MAX_SQLITE_INT:
        # No store value is this big, and sqlite3 would refuse to bind it.
        raise TypeError("out of SQLite's INTEGER range")
    if value is None or isinstance(value, int | float | str):
        return value
    raise TypeError("not a store value")


@dataclass
class SessionPage:
    rows: list[SessionRow]
    next_cursor: Cursor | None
    strategy: str
    count: int | None = None
    count_capped: bool = False
    sql: list[str] = field(default_factory=list)


def parse_datetime_param(name: str, raw: str) -> int:
    moment = params.iso_datetime({name: raw}, name, timezone.get_default_timezone())
    assert moment is not None  # raw is not empty: the caller checked
    return to_epoch_ms(moment)


def parse_filter(query: Any, *, now: datetime | None = None) -> SessionFilter:
    """Build a filter from query parameters; unknown parameters are ignored."""

    def text(name: str) -> str | None:
        return params.text(query, name)

    after = before = None
    active = params.choice(query, "active", ACTIVE_PRESETS)
    if active:
        now = now or timezone.now()
        after = to_epoch_ms(now - ACTIVE_PRESETS[active][1])
    if raw := text("active_after"):
        after = max(after or 0, parse_datetime_param("active_after", raw))
    if raw := text("active_before"):
        before = parse_datetime_param("active_before", raw)
    return SessionFilter(
        target=text("target"),
        profile=text("profile"),
        principal=text("principal"),
        q=text("q"),
        active_after_ms=after,
        active_before_ms=before,
    )


def parse_sort(raw: str | None) -> str:
    return params.choice({"sort": raw or ""}, "sort", SORTS, DEFAULT_SORT)  # type: ignore[return-value]


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


def _keyset(column: str, descending: bool, cursor: Cursor | None) -> tuple[list[str], list[Any]]:
    if cursor is None:
        return [], []
    expr = _SORT_EXPR[column]
    op, op_eq = ("<", "<=") if descending else (">", ">=")
    # The first clause lets SQLite use the index range; the second breaks ties by id.
    return (
        [f"{expr} {op_eq} ?", f"({expr} {op} ? OR id {op} ?)"],
        [cursor.value, cursor.value, cursor.id],
    )


def _order(column: str, descending: bool) -> str:
    direction = "DESC" if descending else "ASC"
    return f"ORDER BY {_SORT_EXPR[column]} {direction}, id {direction}"


def keyset_sql(sort: str, cursor: Cursor | None) -> tuple[list[str], list[Any], str]:
    """The keyset clauses, their parameters and the ORDER BY of a sort, for any table
    with the store's session columns (the side index's copy uses it too)."""
    column, descending = SORTS[sort]
    clauses, params = _keyset(column, descending, cursor)
    return clauses, params, _order(column, descending)


def _pair_key(sort: str) -> Callable[[tuple[Any, Any]], tuple]:
    """The list's SQL order for (id, sort value) pairs: SQLite's across storage
    classes, a NULL turn count as 0, ties broken by id."""
    column, _ = SORTS[sort]

    def key(pair: tuple[Any, Any]) -> tuple:
        session_id, value = pair
        if value is None and column == "turn_count":
            value = 0
        return (sqlite_order_key(value), sqlite_order_key(session_id))

    return key


def sorted_pairs(pairs: Iterable[tuple[Any, Any]], sort: str) -> list[tuple[Any, Any]]:
    """(id, sort value) pairs in the list's order for ``sort``."""
    _, descending = SORTS[sort]
    return sorted(pairs, key=_pair_key(sort), reverse=descending)


def merge_pairs(
    streams: list[list[tuple[Any, Any]]], sort: str, limit: int
) -> list[tuple[Any, Any]]:
    """The first ``limit`` (id, sort value) pairs of streams each already in the
    list's order for ``sort`` (the side index's and the store's), in that order."""
    _, descending = SORTS[sort]
    merged = heapq.merge(*streams, key=_pair_key(sort), reverse=descending)
    return list(islice(merged, limit))


def page_of_ids(
    ordered_ids: list[str],
    session_filter: SessionFilter,
    sort: str,
    *,
    limit: int = PAGE_SIZE,
    keep: Any = None,
) -> SessionPage:
    """A list page from session ids another index chose, in that order.

    The rows are read from the store by primary key and checked again
    (the whole ``session_filter``: its text too, folded as the index folds,
    then ``keep(row)``), so a session deleted or changed since the index saw
    it is left out.
    """
    column, _ = SORTS[sort]
    clauses, params = session_filter.where()
    found: dict[Any, tuple] = {}
    for chunk in chunks(ordered_ids):
        where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses])
        for raw in run_sql(f"{_SELECT} WHERE {where}", [*chunk, *params]):
            if keep is None or keep(SessionRow.from_db(raw)):
                found[raw[_ID]] = raw
    kept = [found[i] for i in ordered_ids if i in found]
    page = SessionPage(rows=[], next_cursor=None, strategy="index")
    if len(ordered_ids) > limit and kept:
        # As in list_sessions: the cursor keeps the raw values SQLite compares.
        last = kept[min(limit, len(kept)) - 1]
        value = last[SESSION_COLUMNS.index(column)]
        page.next_cursor = Cursor(sort, 0 if value is None else value, last[_ID])
    page.rows = [SessionRow.from_db(raw) for raw in kept[:limit]]
    return page


def sort_copy(value: Any, column: str) -> int | None:
    """A sort value as an integer that orders exactly as SQLite orders the stored one
    (what our label rows copy), or ``None`` when none does: text and BLOBs sort after
    every number, and a fraction is no integer. A NULL turn count sorts as 0."""
    if value is None:
        return 0 if column == "turn_count" else None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer() and -(2**63) <= value < 2**63:
        return int(value)
    return None


def rows_matching(session_ids: list[str], session_filter: SessionFilter) -> dict[Any, tuple]:
    """The raw rows of these sessions that still exist and match ``session_filter``
    (primary-key lookups), by id."""
    clauses, params = session_filter.where()
    found: dict[Any, tuple] = {}
    for chunk in chunks(session_ids):
        where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses])
        for raw in run_sql(f"{_SELECT} WHERE {where}", [*chunk, *params]):
            found[raw[_ID]] = raw
    return found


def row_sort_copy(raw: tuple, sort: str) -> int | None:
    """:func:`sort_copy` of a raw row's value for ``sort``."""
    column, _ = SORTS[sort]
    return sort_copy(raw[SESSION_COLUMNS.index(column)], column)


def cut_page(raw: list[tuple], sort: str, limit: int, strategy: str) -> SessionPage:
    """A page of the first ``limit`` of these raw rows (already in the sort's order),
    with a cursor after them when there are more."""
    rows, next_cursor = _cut(raw, sort, limit)
    return SessionPage(rows=rows, next_cursor=next_cursor, strategy=strategy)


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
    key_clauses, key_params = _keyset(column, descending, cursor)
    with time_limit(time_limit_ms):
        page = _fetch_page(
            session_filter, column, descending, key_clauses, key_params, limit, targets
        )
        if with_count and (force_count or session_filter.count_is_cheap()):
            page.count, page.count_capped = count_sessions(session_filter)
    if with_count and page.count is None and len(page.rows) <= limit:
        # The whole result is on this page: its length is the exact count.
        page.count = len(page.rows)
    page.rows, page.next_cursor = _cut(page.rows, sort, limit)
    return page


def _cut(raw: list[tuple], sort: str, limit: int) -> tuple[list[SessionRow], Cursor | None]:
    """The first ``limit`` of ``limit + 1`` raw rows, and the cursor after them (if more)."""
    column, _ = SORTS[sort]
    cursor = None
    if len(raw) > limit:
        # The cursor keeps the raw values: the next keyset compares them in SQLite.
        last = raw[limit - 1]
        value = last[SESSION_COLUMNS.index(column)]
        if column == "turn_count" and value is None:
            value = 0
        raw = raw[:limit]
        cursor = Cursor(sort, value, last[_ID])
    return [SessionRow.from_db(row) for row in raw], cursor


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
    (``views.labelled``): this is their exact fallback.
    """
    column, descending = SORTS[sort]
    key_clauses, key_params = _keyset(column, descending, cursor)
    clauses, params = session_filter.where()
    order = _order(column, descending)
    slices: list[list[tuple]] = []
    with time_limit():
        for chunk in chunks(session_ids):
            where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses, *key_clauses])
            slices.append(
                run_sql(
                    f"{_SELECT} WHERE {where} {order} LIMIT {limit + 1}",
                    [*chunk, *params, *key_params],
                )
            )
    raw = slices[0] if len(slices) == 1 else _merge(slices, limit + 1, descending, column)
    rows, next_cursor = _cut(raw, sort, limit)
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
            key=lambda row: (sqlite_order_key(row[index]), sqlite_order_key(row[_ID])),
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
        key_clauses, key_params = _keyset(column, descending, cursor)
        where = " AND ".join([f"{name} = ?", *clauses, *key_clauses])
        rows = run_sql(
            f"{_SELECT} WHERE {where} {_order(column, descending)} LIMIT {step}",
            [value, *params, *key_params],
        )
        yield from rows
        if len(rows) < step:
            return
        cursor = Cursor(sort, rows[-1][index], rows[-1][_ID])
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
    order = _order(column, descending)
    if _mergeable(session_filter, column):
        targets = distinct_targets() if targets is None else targets
        if len(targets) <= MAX_MERGED_TARGETS:
            clauses, params = session_filter.where(include_target=False)
            sql = (
                f"{_SELECT} WHERE {' AND '.join(['target_key = ?', *clauses, *key_clauses])} "
                f"{order} LIMIT {limit + 1}"
            )
            # Merge the raw tuples and build rows only for the slice kept: most
            # of the fetched rows are dropped.
            slices = [run_sql(sql, [target, *params, *key_params]) for target in targets]
            rows = _merge(slices, limit + 1, descending)
            return SessionPage(rows=rows, next_cursor=None, strategy="merge", sql=[sql])
    clauses, params = session_filter.where()
    where = f"WHERE {' AND '.join(clauses + key_clauses)}" if clauses or key_clauses else ""
    sql = f"{_SELECT} {where} {order} LIMIT {limit + 1}"
    rows = run_sql(sql, params + key_params)
    return SessionPage(rows=rows, next_cursor=None, strategy="scan", sql=[sql])  # type: ignore[arg-type]


def _merge(
    slices: list[list[tuple]], count: int, descending: bool, column: str = "last_active"
) -> list[tuple]:
    """The first ``count`` raw rows of sorted slices (per target, per id chunk), in
    SQLite's order of the sort ``column``."""
    index = SESSION_COLUMNS.index(column)

    def value(row: tuple) -> Any:
        # The ORDER BY's expression: a NULL turn count sorts as 0 (_SORT_EXPR).
        raw = row[index]
        return 0 if raw is None and column == "turn_count" else raw

    try:
        merged = heapq.merge(*slices, key=lambda row: (value(row), row[_ID]), reverse=descending)
        return list(islice(merged, count))
    except TypeError:
        # A TEXT or BLOB last_active (or id) cannot be compared with an int in
        # Python; order those rows the way SQLite does. Only such stores pay for it.
        merged = heapq.merge(
            *slices,
            key=lambda row: (sqlite_order_key(value(row)), sqlite_order_key(row[_ID])),
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
    rows = run_sql(f"{_SELECT} WHERE id = ?", [session_id])
    return SessionRow.from_db(rows[0]) if rows else None


def existing_session_ids(session_ids: list[str]) -> set[str]:
    found: set[str] = set()
    for batch in chunks(session_ids):
        marks = placeholders(len(batch))
        found.update(
            row[0] for row in run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", batch)
        )
    return found


@dataclass(frozen=True)
class TargetProfile:
    target_key: str
    profile_key: str
    sessions: int
    last_active: int
    #: ``sessions`` is the count the caller knew (the rollups' at their last pass).
    counted_before: bool = False

    @property
    def last_active_at(self) -> datetime | None:
        return from_epoch_ms(self.last_active)


@dataclass
class TargetSummary:
    target_key: str
    profiles: list[TargetProfile]

    @property
    def sessions(self) -> int:
        return sum(p.sessions for p in self.profiles)

    @property
    def last_active_at(self) -> datetime | None:
        return max((p.last_active_at for p in self.profiles if p.last_active_at), default=None)


#: Above this many (target, profile) pairs one grouped scan beats a count per pair.
MAX_COUNTED_PAIRS = 400
#: Counts given per page at most (three parameters each: SQLite allows 32,766).
MAX_KNOWN_PAIRS = 2 * MAX_COUNTED_PAIRS

# Every distinct (target, profile) by seeks on idx_session_target_profile (a
# skip scan written as a recursive CTE: the next profile of this target, else
# the first of the next target), then per pair its count (the caller's, in
# ``known``, else a COUNT(*) over its slice of the index) and a seek for its
# latest last_active. One statement, so the keys never leave SQLite and any
# storage class is compared as stored (a count given for text never matches a
# BLOB key, nor TEXT that is not UTF-8).
_PAIRS_SQL = f"""
WITH RECURSIVE known(t, p, n) AS ({{known}}),
pair(t, p) AS (
  SELECT t, (SELECT MIN(profile_key) FROM sessions WHERE target_key = t)
    FROM (SELECT (SELECT MIN(target_key) FROM sessions) AS t) WHERE t IS NOT NULL
  UNION ALL
  SELECT
    CASE WHEN (SELECT MIN(profile_key) FROM sessions
                WHERE target_key = pair.t AND profile_key > pair.p) IS NULL
         THEN (SELECT MIN(target_key) FROM sessions WHERE target_key > pair.t)
         ELSE pair.t END AS next_t,
    COALESCE(
      (SELECT MIN(profile_key) FROM sessions WHERE target_key = pair.t AND profile_key > pair.p),
      (SELECT MIN(profile_key) FROM sessions
        WHERE target_key = (SELECT MIN(target_key) FROM sessions WHERE target_key > pair.t)))
  FROM pair WHERE next_t IS NOT NULL
)
SELECT {clipped_sql("pc.t")}, {clipped_sql("pc.p")},
  COALESCE(pc.known,
    (SELECT COUNT(*) FROM sessions WHERE target_key = pc.t AND profile_key = pc.p)),
  (SELECT last_active FROM sessions WHERE target_key = pc.t AND profile_key = pc.p
    ORDER BY last_active DESC LIMIT 1),
  pc.known IS NOT NULL
FROM (
  SELECT t, p, (SELECT n FROM known WHERE known.t = pair.t AND known.p = pair.p) AS known
  FROM pair LIMIT {MAX_COUNTED_PAIRS + 1}
) AS pc
"""


def _target_rows(known: Mapping[tuple[str, str], int]) -> list[tuple]:
    """(target, profile, sessions, last active, count known) per pair, clipped for the page.

    Pair by pair (:data:`_PAIRS_SQL`): 25-50 ms for the 48 pairs of the
    500,000-session bench store where one ``GROUP BY`` over the whole index
    took 60-240 ms in the same minutes (it compares every entry's keys with
    the last one's and reads every ``last_active``); about 1 ms when every
    count is known. A store with more pairs than :data:`MAX_COUNTED_PAIRS`
    gets the grouped scan, every count exact.
    """
    given = list(known.items())[:MAX_KNOWN_PAIRS]
    values = ", ".join(f"({placeholders(3)})" for _ in given) if given else None
    sql = _PAIRS_SQL.replace("{known}", f"VALUES {values}" if values else "SELECT 1, 1, 1 WHERE 0")
    rows = run_sql(sql, [v for (t, p), n in given for v in (t, p, n)])
    if len(rows) <= MAX_COUNTED_PAIRS:
        # A pair the runtime emptied is no pair, whatever count was known for it.
        return [(t, p, n, last, bool(k)) for t, p, n, last, k in rows if last is not None]
    return run_sql(
        f"SELECT {clipped_sql('target_key')}, {clipped_sql('profile_key')}, COUNT(*), "
        "MAX(last_active), 0 FROM sessions "
        "GROUP BY target_key, profile_key ORDER BY target_key, profile_key",
        [],
    )


def targets_overview(
    known: Mapping[tuple[str, str], int] | None = None, *, time_limit_ms: int | None = None
) -> list[TargetSummary]:
    """Each target with its profiles, counts and last activity, live from the store;
    a pair's count is taken from ``known`` (sessions per (target, profile), e.g. the
    rollups' as of their last pass) where it has one, and marked as such."""
    with time_limit(time_limit_ms):
        rows = _target_rows(known or {})
    summaries: dict[str, TargetSummary] = {}
    for raw_target, raw_profile, count, last, counted_before in rows:
        target, profile = as_id(raw_target), as_id(raw_profile)
        summary = summaries.setdefault(target, TargetSummary(target, []))
        summary.profiles.append(
            TargetProfile(target, profile, count, as_time(last), bool(counted_before))  # type: ignore[arg-type]
        )
    return list(summaries.values())


def filter_with(session_filter: SessionFilter, **changes: Any) -> SessionFilter:
    return replace(session_filter, **changes)
