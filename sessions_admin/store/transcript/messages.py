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

from dataclasses import dataclass, field
from typing import Any

from sessions_admin.folding import fold
from sessions_admin.params import BadParameter
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.health import REQUIRED_COLUMNS
from sessions_admin.store.textmatch import contains_folded_sql
from sessions_admin.store.toolcalls import reports_error_sql
from sessions_admin.store.values import (
    Fields,
    as_id,
    as_int,
    as_text,
    as_time,
)

PAGE_SIZE = 100

#: A column longer than this (in characters, ~64 KB) is sent truncated.
LARGE_VALUE_CHARS = 64 * 1024

#: How much of a truncated column a page shows.
PREVIEW_CHARS = 4 * 1024

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


def value_sql(column: str) -> str:
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


def short_sql(*columns: str) -> str:
    return ", ".join(clipped_sql(column) for column in columns)


_PAGE_SELECT = (
    f"SELECT id, {short_sql('role')}, {value_sql('content')}, "
    f"{short_sql('tool_name', 'tool_call_id', 'tool_target', 'tool_op')}, "
    f"{value_sql('tool_args')}, {value_sql('tool_result')}, tool_duration_ms, "
    f"{short_sql('trace_id', 'span_id', 'model_id')}, ts, {_RESULT_ERROR_SQL} "
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
        content=value_of(content, content_size) or Value(""),
        tool_name=as_text(name),
        tool_call_id=as_text(call_id),
        tool_target=as_text(target),
        tool_op=as_text(op),
        tool_args=value_of(args, args_size),
        tool_result=value_of(result, result_size),
        tool_duration_ms=as_int(duration),  # type: ignore[arg-type]
        trace_id=as_text(trace),
        span_id=as_text(span),
        model_id=as_text(model),
        ts=as_time(ts),  # type: ignore[arg-type]
        result_error=None if result_error is None else bool(result_error),
        position=ts,
    )


def value_of(text: object, size: int | None) -> Value | None:
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


def has_message_after(session_id: str, message_id: int) -> bool:
    """Whether the session holds a message with an id above ``message_id`` (a live
    page's poll: one index probe when nothing is new)."""
    rows = run_sql(
        "SELECT 1 FROM session_messages WHERE session_id = ? AND id > ? LIMIT 1",
        [session_id, message_id],
    )
    return bool(rows)


def message_in_session(session_id: str, message_id: int) -> bool:
    """Whether ``message_id`` is a message of this session (a note may name only those)."""
    rows = run_sql(
        "SELECT 1 FROM session_messages WHERE id = ? AND session_id = ?", [message_id, session_id]
    )
    return bool(rows)


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
