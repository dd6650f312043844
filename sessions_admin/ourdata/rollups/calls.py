"""A tool's calls across every session, newest first, in keyset pages.

The calls come from the per-call table; the short arguments and result each
row shows are read from the store for the rows of the page alone
(:func:`~sessions_admin.store.feed.call_heads`): keeping a copy of them for
every call made a third of the rollups' size.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass

from django.db import DatabaseError

from sessions_admin import sqlhelpers
from sessions_admin.ourdata.rollups.figures import Scope
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import feed
from sessions_admin.store.connection import StoreError

#: Calls per page (read at call time, so a test can make pages small).
PAGE_SIZE = 50
#: Characters of a call's arguments and of its result shown in its row.
HEAD_CHARS = 160


@dataclass(frozen=True)
class CallFilter:
    tool: str
    scope: Scope = Scope()
    errors: bool = False
    #: Only calls at least this slow (ms), when set.
    slow_ms: int | None = None
    since_ms: int | None = None
    until_ms: int | None = None


@dataclass(slots=True)
class CallRow:
    id: int
    session_id: str
    target: str
    profile: str
    principal: str | None
    ts: int
    duration_ms: int | None
    failed: bool
    link_id: int
    first_id: int
    second_id: int | None
    #: The first HEAD_CHARS characters, read from the store by :func:`with_heads`
    #: (None until then, or when there is no value or no store to read).
    args_head: str | None = None
    result_head: str | None = None


@dataclass
class CallPage:
    rows: list[CallRow]
    #: ``"<ts>_<id>"`` of the last row when more follow.
    next_cursor: str | None


#: ``<ts>_<id>``: ASCII digits only (``int()`` takes "²" and "1_000"), at most 19 each.
_CURSOR = re.compile(r"(-?[0-9]{1,19})_(-?[0-9]{1,19})")


def parse_cursor(raw: object) -> tuple[int, int] | None:
    """The position a "More" link carries; a damaged one, or one past SQLite's
    64-bit INTEGER (which sqlite3 refuses to bind), is a 400 naming ``cursor``."""
    if not isinstance(raw, str) or raw == "":
        return None
    match = _CURSOR.fullmatch(raw)
    numbers = [int(part) for part in match.groups()] if match else []
    if not numbers or any(not -MAX_SQLITE_INT - 1 <= n <= MAX_SQLITE_INT for n in numbers):
        raise BadParameter(
            "cursor: that “More” link is damaged or out of range; open the list again.",
            name="cursor",
        )
    ts, rowid = numbers
    return ts, rowid


def _where(f: CallFilter) -> tuple[str, str, list[object]]:
    """(index, WHERE clause, its parameters) for a filter."""
    extra, params = f.scope.where()
    index = "rollup_call_tool_failed" if f.errors else "rollup_call_tool_ts"
    where = "tool = ?" + extra + (" AND failed" if f.errors else "")
    args: list[object] = [f.tool, *params]
    if f.slow_ms is not None:
        where += " AND duration_ms >= ?"
        args.append(f.slow_ms)
    if f.since_ms is not None:
        where += " AND ts >= ?"
        args.append(f.since_ms)
    if f.until_ms is not None:
        where += " AND ts < ?"
        args.append(f.until_ms)
    return index, where, args


def count_calls(
    side: sqlite3.Connection, call_filter: CallFilter, cap: int | None = None
) -> int | None:
    """How many calls match, stopping at ``cap`` (``COUNT_CAP`` by default); None when
    counting would not be cheap.

    Without a target or profile filter every condition is in an index, so the
    count is one bounded index walk (SQLite picks the index: the duration one
    for ``slow``). A target or profile is only in the table: a rare one would
    read a busy tool's every row, so it is not counted (see bench/bench_overview.py).
    """
    if call_filter.scope.target is not None or call_filter.scope.profile is not None:
        return None
    if cap is None:
        cap = sqlhelpers.COUNT_CAP
    _, where, args = _where(call_filter)
    row = side.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM rollup_call WHERE {where} LIMIT {int(cap)})",
        args,
    ).fetchone()
    return row[0]


def tool_calls(
    side: sqlite3.Connection,
    call_filter: CallFilter,
    cursor: tuple[int, int] | None = None,
    limit: int | None = None,
) -> CallPage:
    """Walks ``(tool, ts)`` backwards (the failed-calls partial index for ``errors``),
    ``limit`` rows a page (``PAGE_SIZE`` by default)."""
    if limit is None:
        limit = PAGE_SIZE
    index, where, args = _where(call_filter)
    if cursor is not None:
        where += " AND ts <= ? AND (ts < ? OR id < ?)"
        args += [cursor[0], cursor[0], cursor[1]]
    rows = side.execute(
        "SELECT id, session_id, target, profile, principal, ts, duration_ms, failed, link_id, "
        f"first_id, second_id FROM rollup_call INDEXED BY {index} WHERE {where} "
        f"ORDER BY ts DESC, id DESC LIMIT {int(limit) + 1}",
        args,
    ).fetchall()
    page = [CallRow(*row[:7], bool(row[7]), *row[8:]) for row in rows[:limit]]
    more = len(rows) > limit
    return CallPage(page, f"{page[-1].ts}_{page[-1].id}" if more and page else None)


def with_heads(page: CallPage) -> CallPage:
    """The page, each row's arguments and result filled in (in short) from the store.

    As the sync reads a call: its first row's arguments (else its other
    row's), and the result of the row that has one (``link_id``). When the
    store cannot be read the rows keep ``None`` (the page shows "–").
    """
    ids = {mid for row in page.rows for mid in (row.first_id, row.second_id, row.link_id)}
    try:
        heads = feed.call_heads(sorted(mid for mid in ids if mid is not None), HEAD_CHARS)
    except (DatabaseError, StoreError):
        return page
    none = (None, None)
    for row in page.rows:
        args = heads.get(row.first_id, none)[0]
        if args is None and row.second_id is not None:
            args = heads.get(row.second_id, none)[0]
        # Filled in place: dataclasses.replace on 50 rows cost more than the store read.
        row.args_head = args
        row.result_head = heads.get(row.link_id, none)[1]
    return page


def known_tool(side: sqlite3.Connection, tool: str) -> bool:
    return (
        side.execute("SELECT 1 FROM rollup_call WHERE tool = ? LIMIT 1", [tool]).fetchone()
        is not None
    )


#: A tool's page by key instead of by name: ``/tools/~/<key>/``.
KEYED_PREFIX = "~/"
_KEY = re.compile(r"[0-9a-f]{32}")


def tool_key(tool: str) -> str:
    """A short, stable stand-in for a tool name too long for a URL (128 bits of SHA-256)."""
    return hashlib.sha256(tool.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def tool_by_key(side: sqlite3.Connection, key: str) -> str | None:
    """The tool whose :func:`tool_key` is ``key``, or None.

    Walks the distinct tool names by index seeks (one per tool, not one per
    call): only links to names too long for a URL come this way.
    """
    if not _KEY.fullmatch(key):
        return None
    seek = "SELECT tool FROM rollup_call INDEXED BY rollup_call_tool_ts"
    row = side.execute(f"{seek} ORDER BY tool LIMIT 1").fetchone()
    while row is not None:
        if tool_key(row[0]) == key:
            return row[0]
        row = side.execute(f"{seek} WHERE tool > ? ORDER BY tool LIMIT 1", [row[0]]).fetchone()
    return None
