"""The outline above a transcript: the session's first tool calls as bars, failures and
overlaps marked, from one bounded read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.toolcalls import IS_TOOL_CALL_SQL, reports_error_sql
from sessions_admin.store.transcript.messages import short_sql
from sessions_admin.store.values import (
    as_id,
    as_text,
    number_sql,
    time_sql,
)

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
            f"SELECT id, {short_sql('tool_name', 'tool_call_id')}, {time_sql('ts')}, "
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
