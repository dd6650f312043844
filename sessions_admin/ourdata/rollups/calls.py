"""A tool's calls across every session, newest first, in keyset pages.

The calls come from the per-call table; the short arguments and result each
row shows are read from the store for the rows of the page alone
(:func:`with_heads`): a copy of them for every call was a third of the
rollups' size. The table keeps only failed calls' result heads, which the
error groups read by the thousand.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from dataclasses import dataclass, replace

from sessions_admin import sqlhelpers
from sessions_admin.ourdata.rollups.errors import what_failed
from sessions_admin.ourdata.rollups.figures import Scope
from sessions_admin.ourdata.rollups.schema import (
    HEAD_READ_CHARS,
    TOOL_KEY,
    call_names,
)
from sessions_admin.ourdata.sidedb import read_id
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import feed

#: Calls per page (read at call time, so a test can make pages small).
PAGE_SIZE = 50


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
    #: The result's first characters as the rollups keep them: failed calls only
    #: (the error groups), None for the others until :func:`with_heads`.
    result_head: str | None
    #: The first ``HEAD_READ_CHARS`` characters of the arguments, read from the store
    #: by :func:`with_heads` (None until then, or with no value or store to read).
    args_head: str | None = None


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
    extra, params = f.scope.call_where()
    index = "rollup_call_tool_failed" if f.errors else "rollup_call_tool_ts"
    where = f"tool = {TOOL_KEY}" + extra + (" AND failed" if f.errors else "")
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
        f"{_CALL_SELECT} WHERE c.id IN (SELECT id FROM rollup_call INDEXED BY {index} "
        f"WHERE {where} ORDER BY ts DESC, id DESC LIMIT {int(limit) + 1}) "
        "ORDER BY c.ts DESC, c.id DESC",
        args,
    ).fetchall()
    page = [_call_row(row) for row in rows[:limit]]
    more = len(rows) > limit
    return CallPage(page, f"{page[-1].ts}_{page[-1].id}" if more and page else None)


#: A page's calls with their names: the ids come from an index walk (a subquery), then
#: one primary-key read of each call and its names.
_CALL_SELECT = (
    "SELECT c.id, s.session_id, p.target, p.profile, s.principal, c.ts, c.duration_ms, "
    "c.failed, c.link_id, c.first_id, c.second_id, c.result_head FROM rollup_call AS c "
    f"{call_names()}"
)


def _call_row(row: tuple) -> CallRow:
    return CallRow(*row[:7], bool(row[7]), *row[8:])


def failed_by_session(side: sqlite3.Connection, session_ids: list[str]) -> dict[str, int]:
    """Failed calls of each of these sessions (a page's ids), those with none left out.

    One query; the partial index ``rollup_call_session_failed`` holds failed
    calls only, so a session with thousands of good calls costs nothing.
    """
    if not session_ids:
        return {}
    ids = list(dict.fromkeys(session_ids))[: sqlhelpers.CHUNK]
    rows = side.execute(
        "SELECT s.session_id, count(*) FROM rollup_session AS s "
        "JOIN rollup_call AS c INDEXED BY rollup_call_session_failed ON c.session = s.key "
        f"WHERE c.failed AND s.session_id IN ({sqlhelpers.placeholders(len(ids))}) "
        "GROUP BY s.session_id",
        ids,
    ).fetchall()
    return {sid: count for sid, count in rows}


#: In SQL on a side table holding session ids (as ``sidedb.bind_id`` binds them) in
#: ``{id}``: the session has a failed call in the rollups. Two index seeks a row.
HAS_FAILED_CALL = (
    "EXISTS (SELECT 1 FROM rollup_session AS r JOIN rollup_call AS c "
    "INDEXED BY rollup_call_session_failed ON c.session = r.key "
    "WHERE r.session_id = {id} AND c.failed)"
)


def count_failed_sessions(side: sqlite3.Connection) -> int:
    """How many sessions have a failed call (one walk of the partial index)."""
    return side.execute(
        "SELECT count(DISTINCT session) FROM rollup_call "
        "INDEXED BY rollup_call_session_failed WHERE failed"
    ).fetchone()[0]


def failed_session_ids(side: sqlite3.Connection) -> list[str]:
    """Every session with at least one failed call, as of the last pass (the list's
    ``?failed=1``): one walk of the failed calls' partial index."""
    return [
        read_id(sid)
        for (sid,) in side.execute(
            "SELECT session_id FROM rollup_session WHERE key IN (SELECT session FROM "
            "rollup_call INDEXED BY rollup_call_session_failed WHERE failed)"
        )
    ]


#: A tool's failures are grouped over at most this many of its latest failed calls
#: (each is read and its error normalised: a bounded cost per page).
ERROR_SCAN = 2000


@dataclass
class ErrorGroup:
    #: What failed, normalised (:mod:`sessions_admin.ourdata.rollups.errors`).
    what: str
    count: int
    first_ts: int
    last_ts: int


@dataclass
class ErrorGroups:
    groups: list[ErrorGroup]
    #: Failed calls read; ``cut`` when the tool has more than ``ERROR_SCAN``.
    scanned: int
    cut: bool


def _latest_failures(side: sqlite3.Connection, call_filter: CallFilter, limit: int) -> list[tuple]:
    """(id, ts, result head) of the tool's latest failed calls, newest first: the
    calls' own rows alone (thousands of them), their names read for a page only."""
    _, where, args = _where(replace(call_filter, errors=True))
    return side.execute(
        "SELECT id, ts, result_head FROM rollup_call INDEXED BY rollup_call_tool_failed "
        f"WHERE {where} ORDER BY ts DESC, id DESC LIMIT {int(limit)}",
        args,
    ).fetchall()


def _rows_by_id(side: sqlite3.Connection, ids: list[int]) -> list[CallRow]:
    """These calls as a page shows them, newest first."""
    if not ids:
        return []
    rows = side.execute(
        f"{_CALL_SELECT} WHERE c.id IN ({sqlhelpers.placeholders(len(ids))}) "
        "ORDER BY c.ts DESC, c.id DESC",
        ids,
    ).fetchall()
    return [_call_row(row) for row in rows]


def error_groups(
    side: sqlite3.Connection, call_filter: CallFilter, scan: int | None = None
) -> ErrorGroups:
    """The tool's latest failed calls (at most ``scan``, ``ERROR_SCAN`` by default) grouped
    by what failed, the biggest group first."""
    if scan is None:
        scan = ERROR_SCAN
    rows = _latest_failures(side, call_filter, scan + 1)
    groups: dict[str, ErrorGroup] = {}
    seen: dict[str | None, str] = {}  # many failures repeat a head word for word
    for _, ts, head in rows[:scan]:
        what = seen.get(head)
        if what is None:
            what = seen[head] = what_failed(head)
        group = groups.get(what)
        if group is None:
            groups[what] = ErrorGroup(what, 1, ts, ts)
            continue
        group.count += 1
        group.first_ts = min(group.first_ts, ts)
        group.last_ts = max(group.last_ts, ts)
    ordered = sorted(groups.values(), key=lambda g: (-g.count, -g.last_ts, g.what))
    return ErrorGroups(ordered, scanned=min(len(rows), scan), cut=len(rows) > scan)


def calls_in_group(
    side: sqlite3.Connection,
    call_filter: CallFilter,
    what: str,
    limit: int | None = None,
    scan: int | None = None,
) -> list[CallRow]:
    """The latest failed calls (within the same ``scan`` as :func:`error_groups`) that
    failed with ``what``, newest first, at most ``limit`` (``PAGE_SIZE`` by default)."""
    if limit is None:
        limit = PAGE_SIZE
    if scan is None:
        scan = ERROR_SCAN
    found: list[int] = []
    seen: dict[str | None, str] = {}
    for call_id, _, head in _latest_failures(side, call_filter, scan):
        if head not in seen:
            seen[head] = what_failed(head)
        if seen[head] == what:
            found.append(call_id)
            if len(found) == limit:
                break
    return _rows_by_id(side, found)


def with_heads(page: CallPage) -> CallPage:
    """The page, each row's arguments and result filled in (in short) from the store.

    As the sync reads a call: its first row's arguments (else its other
    row's), and the result of the row that has one (``link_id``). When the
    store cannot be read the rows keep what the rollups hold (a failed
    call's result head; "–" for the rest).
    """
    ids = {mid for row in page.rows for mid in (row.first_id, row.second_id, row.link_id)}
    try:
        heads = feed.call_heads(sorted(mid for mid in ids if mid is not None), HEAD_READ_CHARS)
    except feed.READ_ERRORS:
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
        side.execute(
            f"SELECT 1 FROM rollup_call WHERE tool = {TOOL_KEY} LIMIT 1", [tool]
        ).fetchone()
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

    Reads the tool names that have a call (one index probe each, not one
    per call): only links to names too long for a URL come this way.
    """
    if not _KEY.fullmatch(key):
        return None
    for (name,) in side.execute(
        "SELECT name FROM rollup_tools AS t "
        "WHERE EXISTS (SELECT 1 FROM rollup_call WHERE tool = t.key)"
    ):
        if tool_key(name) == key:
            return name
    return None
