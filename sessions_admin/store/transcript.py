"""One session's messages, state and statistics, read in bounded slices.

Messages are paged by keyset on ``(ts, id)``: ``idx_msg_session (session_id,
ts)`` carries the rowid (the message id), so ``WHERE session_id = ? ORDER BY
ts, id`` walks the index in order and never sorts or skips with OFFSET. A
cursor is just a message id; its ``ts`` is looked up with the same index.

Big values stay in the store until asked for: a page fetches at most
:data:`PREVIEW_CHARS` of any column longer than :data:`LARGE_VALUE_CHARS`
(with its full size in bytes), and :func:`message_value` /
:func:`state_value` fetch one full value on demand. Export walks the session
in keyset chunks so memory stays flat on any session size.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from sessions_admin.folding import fold
from sessions_admin.params import BadParameter
from sessions_admin.params import text as text_param
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.health import REQUIRED_COLUMNS
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.textmatch import contains_folded_sql
from sessions_admin.store.toolcalls import IS_TOOL_CALL_SQL, reports_error_sql
from sessions_admin.store.values import (
    Fields,
    as_id,
    as_int,
    as_text,
    as_time,
    number_sql,
    time_sql,
)

PAGE_SIZE = 100
#: A column longer than this (in characters, ~64 KB) is sent truncated.
LARGE_VALUE_CHARS = 64 * 1024
#: How much of a truncated column a page shows.
PREVIEW_CHARS = 4 * 1024
#: Messages per query while exporting.
EXPORT_CHUNK = 2000
#: How far past a page's edges to look for the other half of a tool call.
PAIR_WINDOW = 50
#: The columns a message page may truncate.
VALUE_COLUMNS = ("content", "tool_args", "tool_result")

#: The message columns read, in :class:`MessageRow`'s order (the schema check's list).
MESSAGE_COLUMNS = REQUIRED_COLUMNS["session_messages"]


#: A position after every real message: a descending slice from it starts at the end.
_END = (2**63 - 1, 2**63 - 1)


class UnknownMessage(LookupError):
    """A cursor or permalink names a message this session does not hold."""


@dataclass(frozen=True)
class Value(Fields):
    """One text column of a message as the page holds it: whole, or its head."""

    text: str
    truncated: bool = False
    size: int = 0  # bytes in the store, known for truncated values


@dataclass(frozen=True)
class MessageRow(Fields):
    id: int
    role: str
    content: Value
    tool_name: str | None
    tool_call_id: str | None
    tool_target: str | None
    tool_op: str | None
    tool_args: Value | None
    tool_result: Value | None
    tool_duration_ms: int | None
    trace_id: str | None
    span_id: str | None
    model_id: str | None
    ts: int
    #: For a truncated result: whether the full JSON reports an error (SQLite checked it).
    result_error: bool | None = None
    #: The raw ``ts`` (any storage class): keysets compare it in SQLite as it is.
    position: Any = None


@dataclass(frozen=True)
class MessageFilter(Fields):
    role: str | None = None
    tool: str | None = None
    q: str | None = None
    #: Exact trace / span id (links from activity frames land here).
    trace: str | None = None
    span: str | None = None

    def where(self) -> tuple[list[str], list[Any]]:
        clauses: list[str] = []
        params: list[Any] = []
        if self.role:
            clauses.append("role = ?")
            params.append(self.role)
        if self.tool:
            clauses.append("tool_name = ?")
            params.append(self.tool)
        if self.q:
            # The one folding (sessions_admin.folding), as the search answers it.
            folded = fold(self.q)
            matches = []
            for column in ("content", "tool_args", "tool_result", "tool_name"):
                sql, column_params = contains_folded_sql(column, folded)
                matches.append(sql)
                params += column_params
            clauses.append(f"({' OR '.join(matches)})")
        if self.trace:
            clauses.append("trace_id = ?")
            params.append(self.trace)
        if self.span:
            clauses.append("span_id = ?")
            params.append(self.span)
        return clauses, params

    def is_empty(self) -> bool:
        return not (self.role or self.tool or self.q or self.trace or self.span)

    def as_query(self) -> dict[str, str]:
        pairs = (
            ("role", self.role),
            ("tool", self.tool),
            ("q", self.q),
            ("trace", self.trace),
            ("span", self.span),
        )
        return {k: v for k, v in pairs if v}


def parse_message_filter(query: Any) -> MessageFilter:
    """The filter from query parameters; each is free text, refused past 1,000 characters."""
    names = ("role", "tool", "q", "trace", "span")
    return MessageFilter(**{name: text_param(query, name) for name in names})


@dataclass
class MessagePage(Fields):
    messages: list[MessageRow]
    #: Older messages exist before the first one shown.
    has_before: bool
    #: Newer messages exist after the last one shown.
    has_after: bool
    #: tool_call_id -> [(message id, role, above)] just outside the page, for pairing;
    #: ``above`` is true for a message before the page.
    neighbours: dict[str, list[tuple[int, str, bool]]] = field(default_factory=dict)
    anchor: int | None = None

    @property
    def first_id(self) -> int | None:
        return self.messages[0].id if self.messages else None

    @property
    def last_id(self) -> int | None:
        return self.messages[-1].id if self.messages else None


def _value_sql(column: str) -> str:
    # Long values: only their head and their byte size leave SQLite.
    return (
        f"CASE WHEN length({column}) > {LARGE_VALUE_CHARS} "
        f"THEN substr({column}, 1, {PREVIEW_CHARS}) ELSE {column} END, "
        f"CASE WHEN length({column}) > {LARGE_VALUE_CHARS} "
        f"THEN length(CAST({column} AS BLOB)) END"
    )


# For a truncated result, SQLite applies the one failure rule
# (store.toolcalls) inside the query, so the flag survives truncation without
# shipping the value.
_RESULT_ERROR_SQL = (
    f"CASE WHEN length(tool_result) IS NULL OR length(tool_result) <= {LARGE_VALUE_CHARS} "
    f"THEN NULL ELSE {reports_error_sql('tool_result')} END"
)


def _short(*columns: str) -> str:
    return ", ".join(clipped_sql(column) for column in columns)


_PAGE_SELECT = (
    f"SELECT id, {_short('role')}, {_value_sql('content')}, "
    f"{_short('tool_name', 'tool_call_id', 'tool_target', 'tool_op')}, "
    f"{_value_sql('tool_args')}, {_value_sql('tool_result')}, tool_duration_ms, "
    f"{_short('trace_id', 'span_id', 'model_id')}, ts, {_RESULT_ERROR_SQL} "
    "FROM session_messages"
)


def _row(row: tuple) -> MessageRow:
    (
        mid,
        role,
        content,
        content_size,
        name,
        call_id,
        target,
        op,
        args,
        args_size,
        result,
        result_size,
        duration,
        trace,
        span,
        model,
        ts,
        result_error,
    ) = row

    return MessageRow(
        id=mid,
        role=as_id(role),
        content=_value(content, content_size) or Value(""),
        tool_name=as_text(name),
        tool_call_id=as_text(call_id),
        tool_target=as_text(target),
        tool_op=as_text(op),
        tool_args=_value(args, args_size),
        tool_result=_value(result, result_size),
        tool_duration_ms=as_int(duration),  # type: ignore[arg-type]
        trace_id=as_text(trace),
        span_id=as_text(span),
        model_id=as_text(model),
        ts=as_time(ts),  # type: ignore[arg-type]
        result_error=None if result_error is None else bool(result_error),
        position=ts,
    )


def _value(text: object, size: int | None) -> Value | None:
    """A value column as text; a BLOB (or any non-text) becomes its description."""
    if text is None:
        return None
    if type(text) is not str:
        text = as_text(text)
        size = None
    return Value(text, truncated=size is not None, size=size or 0)  # type: ignore[arg-type]


def _position(session_id: str, message_id: int) -> int:
    rows = run_sql(
        "SELECT ts FROM session_messages WHERE id = ? AND session_id = ?", [message_id, session_id]
    )
    if not rows:
        raise UnknownMessage(f"This session has no message {message_id}.")
    return rows[0][0]  # raw, any storage class: the keyset compares it in SQLite


def _slice(
    session_id: str,
    message_filter: MessageFilter,
    *,
    after: tuple[int, int] | None = None,
    before: tuple[int, int] | None = None,
    inclusive: bool = False,
    limit: int,
) -> list[MessageRow]:
    """Up to ``limit`` rows after (ascending) or before (descending) a position."""
    clauses, params = message_filter.where()
    where = ["session_id = ?", *clauses]
    params = [session_id, *params]
    descending = before is not None
    if after is not None or before is not None:
        ts, mid = after if after is not None else before  # type: ignore[misc]
        op = "<" if descending else ">"
        id_op = op + ("=" if inclusive else "")
        # The first clause bounds the index range; the second breaks ties on ts by id.
        where += [f"ts {op}= ?", f"(ts {op} ? OR id {id_op} ?)"]
        params += [ts, ts, mid]
    direction = "DESC" if descending else "ASC"
    sql = (
        f"{_PAGE_SELECT} WHERE {' AND '.join(where)} "
        f"ORDER BY ts {direction}, id {direction} LIMIT {int(limit)}"
    )
    return [_row(row) for row in run_sql(sql, params)]


def message_page(
    session_id: str,
    message_filter: MessageFilter | None = None,
    *,
    after: int | None = None,
    before: int | None = None,
    at: int | None = None,
    end: bool = False,
    limit: int = PAGE_SIZE,
    time_limit_ms: int | None = None,
) -> MessagePage:
    """One page of a session's messages, oldest first.

    ``after``/``before`` are message ids (exclusive cursors); ``at`` gives the
    page around a message (a permalink), ``end`` the last page. With none of
    them, the first page.
    """
    message_filter = message_filter or MessageFilter()
    with time_limit(time_limit_ms):
        if after is not None:
            position = (_position(session_id, after), after)
            rows = _slice(session_id, message_filter, after=position, limit=limit + 1)
            page = MessagePage(rows[:limit], has_before=True, has_after=len(rows) > limit)
        elif before is not None:
            position = (_position(session_id, before), before)
            rows = _slice(session_id, message_filter, before=position, limit=limit + 1)
            page = MessagePage(rows[:limit][::-1], has_before=len(rows) > limit, has_after=True)
        elif at is not None:
            position = (_position(session_id, at), at)
            # A few messages of context above the target, the rest below it.
            back = min(10, limit // 4)
            earlier = _slice(session_id, message_filter, before=position, limit=back + 1)
            later = _slice(
                session_id,
                message_filter,
                after=position,
                inclusive=True,
                limit=limit - min(back, len(earlier)) + 1,
            )
            take_later = limit - min(back, len(earlier))
            page = MessagePage(
                earlier[:back][::-1] + later[:take_later],
                has_before=len(earlier) > back,
                has_after=len(later) > take_later,
                anchor=at,
            )
        elif end:
            rows = _slice(session_id, message_filter, before=_END, limit=limit + 1)
            page = MessagePage(rows[:limit][::-1], has_before=len(rows) > limit, has_after=False)
        else:
            rows = _slice(session_id, message_filter, limit=limit + 1)
            page = MessagePage(rows[:limit], has_before=False, has_after=len(rows) > limit)
        page.neighbours = _neighbours(session_id, page)
    return page


def _neighbours(session_id: str, page: MessagePage) -> dict[str, list[tuple[int, str, bool]]]:
    """Messages just outside the page that share a call id with one inside it.

    A call and its result are usually adjacent, so a small look past each edge
    (unfiltered, by the same index) finds the partner without a scan of the
    whole session.
    """
    if not page.messages:
        return {}
    call_ids = {m.tool_call_id for m in page.messages if m.tool_call_id}
    if not call_ids:
        return {}
    found: dict[str, list[tuple[int, str, bool]]] = {}
    first, last = page.messages[0], page.messages[-1]
    edges = (
        ("<", "DESC", (first.position, first.id)),
        (">", "ASC", (last.position, last.id)),
    )
    page_ids = {m.id for m in page.messages}
    for op, direction, (ts, mid) in edges:
        rows = run_sql(
            f"SELECT id, role, tool_call_id FROM session_messages WHERE session_id = ? "
            f"AND ts {op}= ? AND (ts {op} ? OR id {op} ?) "
            f"ORDER BY ts {direction}, id {direction} LIMIT {PAIR_WINDOW}",
            [session_id, ts, ts, mid],
        )
        for other_id, raw_role, raw_call_id in rows:
            call_id = as_text(raw_call_id)
            if call_id in call_ids and other_id not in page_ids:
                found.setdefault(call_id, []).append((other_id, as_id(raw_role), op == "<"))
    return found


def message_count(session_id: str) -> int:
    """Messages in the session (index only: no row is read)."""
    with time_limit():
        return run_sql("SELECT COUNT(*) FROM session_messages WHERE session_id = ?", [session_id])[
            0
        ][0]


def message_in_session(session_id: str, message_id: int) -> bool:
    """Whether ``message_id`` is a message of this session (a note may name only those)."""
    rows = run_sql(
        "SELECT 1 FROM session_messages WHERE id = ? AND session_id = ?", [message_id, session_id]
    )
    return bool(rows)


def state_keys(session_id: str) -> list[str]:
    """The keys as pages show them (a BLOB key is described)."""
    return [
        as_id(row[0])
        for row in run_sql(
            f"SELECT {clipped_sql('key')} FROM session_state WHERE session_id = ? ORDER BY key",
            [session_id],
        )
    ]


@dataclass(frozen=True)
class StateRow:
    key: str
    value: Value
    updated_at: int


def state_rows(session_id: str) -> list[StateRow]:
    """Every state key with its value (truncated like message columns)."""
    with time_limit():
        rows = run_sql(
            f"SELECT {clipped_sql('key')}, {_value_sql('value')}, updated_at FROM session_state "
            "WHERE session_id = ? ORDER BY key",
            [session_id],
        )
    return [
        StateRow(as_id(key), _value(text, size) or Value(""), as_time(updated))  # type: ignore[arg-type]
        for key, text, size, updated in rows
    ]


def message_value(session_id: str, message_id: int, column: str) -> str | None:
    """The full text of one message column; ``None`` if there is no such message."""
    if column not in VALUE_COLUMNS:
        raise BadParameter(f"field: {column[:40]!r} is not a message value column.", name="field")
    rows = run_sql(
        f"SELECT {column} FROM session_messages WHERE id = ? AND session_id = ?",
        [message_id, session_id],
    )
    if not rows:
        raise UnknownMessage(f"This session has no message {message_id}.")
    return as_text(rows[0][0])


def state_value(session_id: str, key: str) -> StateRow:
    rows = run_sql(
        "SELECT value, updated_at FROM session_state WHERE session_id = ? AND key = ?",
        [session_id, key],
    )
    if not rows:
        raise UnknownMessage(f"This session has no state key {key!r}.")
    text = as_text(rows[0][0]) or ""
    value = Value(text, size=len(text.encode("utf-8", "replace")))
    return StateRow(key, value, as_time(rows[0][1]))  # type: ignore[arg-type]


# -- the outline of tool calls --------------------------------------------------

#: The outline draws at most this many calls ...
OUTLINE_CALLS = 300
#: ... found among at most this many of the session's first messages.
OUTLINE_MESSAGES = 5000


@dataclass(frozen=True)
class OutlineCall:
    """One tool call as the outline draws it (a call and its result row count once)."""

    message_id: int
    name: str
    #: When the row was written (epoch ms; the runtime logs a call when it returns), or None.
    ts: int | None
    #: A finite, non-negative duration in ms, else None.
    duration_ms: int | None
    failed: bool


@dataclass
class OutlineRows:
    calls: list[OutlineCall]
    #: The outline stopped before the session's end (at a limit above).
    cut: bool
    #: The session holds more than ``OUTLINE_MESSAGES`` messages (the scan stopped there).
    long_session: bool


def _outline_duration(value: object) -> int | None:
    # number_sql has already dropped what is not a finite number.
    if value is None or value < 0:  # type: ignore[operator]
        return None
    return int(value)  # type: ignore[call-overload]


def tool_outline(
    session_id: str,
    *,
    max_calls: int = OUTLINE_CALLS,
    max_messages: int = OUTLINE_MESSAGES,
) -> OutlineRows:
    """The session's first tool calls in order, bounded twice: at most
    ``max_calls`` calls among at most ``max_messages`` messages.

    The message bound is one walk of ``idx_msg_session`` (no row read); only
    the rows before it are read, and the failure rule runs on tool rows only.
    """
    with time_limit():
        bound = run_sql(
            "SELECT ts, id FROM session_messages WHERE session_id = ? "
            f"ORDER BY ts, id LIMIT 1 OFFSET {int(max_messages)}",
            [session_id],
        )
        where = f"session_id = ? AND {IS_TOOL_CALL_SQL}"
        params: list[Any] = [session_id]
        if bound:
            ts, mid = bound[0]
            where += " AND ts <= ? AND (ts < ? OR id < ?)"
            params += [ts, ts, mid]
        rows = run_sql(
            f"SELECT id, {_short('tool_name', 'tool_call_id')}, {time_sql('ts')}, "
            f"{number_sql('tool_duration_ms')}, {reports_error_sql('tool_result')} "
            f"FROM session_messages WHERE {where} ORDER BY ts, id LIMIT {int(max_calls) + 1}",
            params,
        )
    calls: list[OutlineCall] = []
    by_call: dict[str, int] = {}
    cut = False
    for mid, name, call_id, ts, duration, failed in rows:
        call_id = as_text(call_id)
        seen = by_call.get(call_id) if call_id else None
        if seen is not None:  # the second row of a call: what it adds, in the first's place
            first = calls[seen]
            calls[seen] = OutlineCall(
                first.message_id,
                first.name,
                first.ts if first.ts is not None else ts,
                first.duration_ms if first.duration_ms is not None else _outline_duration(duration),
                first.failed or bool(failed),
            )
            continue
        if len(calls) == max_calls:
            cut = True
            break
        if call_id:
            by_call[call_id] = len(calls)
        calls.append(OutlineCall(mid, as_id(name), ts, _outline_duration(duration), bool(failed)))
    # A call written as two rows fills two of the rows read: fewer calls, still cut.
    if len(rows) > max_calls:
        cut = True
    return OutlineRows(calls, cut=cut or bool(bound), long_session=bool(bound))


# -- statistics ---------------------------------------------------------------


@dataclass(frozen=True)
class ToolStats:
    name: str
    count: int
    timed: int
    total_ms: int
    p50_ms: float | None
    max_ms: int | None
    #: Results that report a failure (:mod:`sessions_admin.store.toolcalls`'s one rule).
    errors: int = 0
    #: Calls that took at least the ``slow_ms`` the statistics were asked with.
    slow: int = 0


@dataclass
class SessionStats:
    by_role: list[tuple[str, int]]
    tools: list[ToolStats]
    first_ts: int | None
    last_ts: int | None
    messages: int

    @property
    def duration_ms(self) -> int | None:
        if self.first_ts is None or self.last_ts is None:
            return None
        return self.last_ts - self.first_ts


@dataclass
class _ToolTally:
    count: int = 0
    errors: int = 0
    durations: list[int] = field(default_factory=list)


def _tool_stats(name: object, tally: _ToolTally, slow_ms: int | None) -> ToolStats:
    timed = tally.durations
    return ToolStats(
        name=as_text(name),  # type: ignore[arg-type]
        count=tally.count,
        timed=len(timed),
        total_ms=sum(timed),
        p50_ms=statistics.median(timed) if timed else None,
        max_ms=max(timed) if timed else None,
        errors=tally.errors,
        slow=0 if slow_ms is None else sum(1 for d in timed if d >= slow_ms),
    )


def session_stats(
    session_id: str, time_limit_ms: int | None = None, *, slow_ms: int | None = None
) -> SessionStats:
    """Messages by role, tool calls by tool (with errors, and slow calls when
    ``slow_ms`` is given), first and last message time (one pass)."""
    roles: dict[str, int] = {}
    tallies: dict[object, _ToolTally] = {}
    first = last = None
    with time_limit(time_limit_ms):
        # Only real numbers count in the figures: SQLite drops the others (a
        # per-row check in Python would cost a third of this fragment on 50,000
        # messages). A BLOB role or name is described once per distinct value, below.
        # The failure rule runs only on tool messages' results.
        rows = run_sql(
            f"SELECT {_short('role', 'tool_name')}, {number_sql('tool_duration_ms')}, "
            f"{time_sql('ts')}, CASE WHEN tool_name IS NOT NULL "
            f"THEN {reports_error_sql('tool_result')} ELSE 0 END "
            "FROM session_messages WHERE session_id = ?",
            [session_id],
        )
    for role, name, duration, ts, error in rows:
        roles[role] = roles.get(role, 0) + 1
        if ts is not None and (first is None or ts < first):
            first = ts
        if ts is not None and (last is None or ts > last):
            last = ts
        if name is not None:
            tally = tallies.get(name)
            if tally is None:
                tally = tallies[name] = _ToolTally()
            tally.count += 1
            tally.errors += error
            if duration is not None:
                tally.durations.append(duration)
    tools = [_tool_stats(name, tally, slow_ms) for name, tally in tallies.items()]
    tools.sort(key=lambda t: (-t.count, t.name))
    order = {role: i for i, role in enumerate(KNOWN_ROLES)}
    described = [(as_id(role), count) for role, count in roles.items()]
    by_role = sorted(described, key=lambda item: (order.get(item[0], 99), item[0]))
    return SessionStats(
        by_role=by_role, tools=tools, first_ts=first, last_ts=last, messages=sum(roles.values())
    )


# -- export ---------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: Strict RFC 8259 parsing: NaN/Infinity (which Python accepts) count as broken.
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def strict_json_valid(text: str) -> bool:
    try:
        _STRICT_JSON.decode(text)
    except (ValueError, RecursionError):
        return False
    return True


def iter_messages(session_id: str, chunk: int = EXPORT_CHUNK) -> Iterator[tuple]:
    """Every message of a session as a full row (``MESSAGE_COLUMNS``), oldest first.

    Each chunk is its own keyset query, so no statement stays open between
    chunks (the runtime can write meanwhile) and memory holds one chunk.
    """
    select = f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM session_messages WHERE session_id = ?"
    ts_index = MESSAGE_COLUMNS.index("ts")
    position: tuple[int, int] | None = None
    while True:
        with time_limit():
            if position is None:
                rows = run_sql(f"{select} ORDER BY ts, id LIMIT {chunk}", [session_id])
            else:
                rows = run_sql(
                    f"{select} AND ts >= ? AND (ts > ? OR id > ?) ORDER BY ts, id LIMIT {chunk}",
                    [session_id, position[0], position[0], position[1]],
                )
        yield from rows
        if len(rows) < chunk:
            return
        position = (rows[-1][ts_index], rows[-1][0])


def iter_state(session_id: str) -> Iterator[tuple[str, str, int]]:
    """(key, value, updated_at) for each state key, one row at a time."""
    # The raw keys (a BLOB key included), each looked up as it is stored.
    keys = [
        row[0]
        for row in run_sql(
            "SELECT key FROM session_state WHERE session_id = ? ORDER BY key", [session_id]
        )
    ]
    for key in keys:
        rows = run_sql(
            "SELECT key, value, updated_at FROM session_state WHERE session_id = ? AND key = ?",
            [session_id, key],
        )
        if rows:
            yield rows[0]
