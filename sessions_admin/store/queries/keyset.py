"""Keyset paging: the cursor a page hands the next, and ordering and merging rows in the
store's own order."""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.core import signing

from sessions_admin import params
from sessions_admin.params import BadParameter
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store.connection import run_sql
from sessions_admin.store.queries.filters import (
    ID_INDEX,
    PAGE_SIZE,
    SELECT_COLUMNS,
    SESSION_COLUMNS,
    SORTS,
    SessionFilter,
    SessionRow,
)
from sessions_admin.store.values import (
    Undecodable,
    sqlite_order_key,
)

# turn_count may be NULL; sort and page on it as 0 so keyset comparisons hold.
SORT_EXPRESSIONS = {
    "last_active": "last_active",
    "created_at": "created_at",
    "turn_count": "COALESCE(turn_count, 0)",
}


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


def keyset_where(
    column: str, descending: bool, cursor: Cursor | None
) -> tuple[list[str], list[Any]]:
    if cursor is None:
        return [], []
    expr = SORT_EXPRESSIONS[column]
    op, op_eq = ("<", "<=") if descending else (">", ">=")
    # The first clause lets SQLite use the index range; the second breaks ties by id.
    return (
        [f"{expr} {op_eq} ?", f"({expr} {op} ? OR id {op} ?)"],
        [cursor.value, cursor.value, cursor.id],
    )


def order_by(column: str, descending: bool) -> str:
    direction = "DESC" if descending else "ASC"
    return f"ORDER BY {SORT_EXPRESSIONS[column]} {direction}, id {direction}"


def keyset_sql(sort: str, cursor: Cursor | None) -> tuple[list[str], list[Any], str]:
    """The keyset clauses, their parameters and the ORDER BY of a sort, for any table
    with the store's session columns (the side index's copy uses it too)."""
    column, descending = SORTS[sort]
    clauses, params = keyset_where(column, descending, cursor)
    return clauses, params, order_by(column, descending)


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
        for raw in run_sql(f"{SELECT_COLUMNS} WHERE {where}", [*chunk, *params]):
            if keep is None or keep(SessionRow.from_db(raw)):
                found[raw[ID_INDEX]] = raw
    kept = [found[i] for i in ordered_ids if i in found]
    page = SessionPage(rows=[], next_cursor=None, strategy="index")
    if len(ordered_ids) > limit and kept:
        # As in list_sessions: the cursor keeps the raw values SQLite compares.
        last = kept[min(limit, len(kept)) - 1]
        value = last[SESSION_COLUMNS.index(column)]
        page.next_cursor = Cursor(sort, 0 if value is None else value, last[ID_INDEX])
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


def row_sort_copy(raw: tuple, sort: str) -> int | None:
    """:func:`sort_copy` of a raw row's value for ``sort``."""
    column, _ = SORTS[sort]
    return sort_copy(raw[SESSION_COLUMNS.index(column)], column)


def cut_page(raw: list[tuple], sort: str, limit: int, strategy: str) -> SessionPage:
    """A page of the first ``limit`` of these raw rows (already in the sort's order),
    with a cursor after them when there are more."""
    rows, next_cursor = cut_rows(raw, sort, limit)
    return SessionPage(rows=rows, next_cursor=next_cursor, strategy=strategy)


def cut_rows(raw: list[tuple], sort: str, limit: int) -> tuple[list[SessionRow], Cursor | None]:
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
        cursor = Cursor(sort, value, last[ID_INDEX])
    return [SessionRow.from_db(row) for row in raw], cursor
