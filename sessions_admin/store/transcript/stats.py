"""A session's statistics: its messages by role and its tools' calls, failures and durations."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.toolcalls import reports_error_sql
from sessions_admin.store.transcript.messages import short_sql
from sessions_admin.store.values import (
    as_id,
    as_text,
    number_sql,
    time_sql,
)


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
            f"SELECT {short_sql('role', 'tool_name')}, {number_sql('tool_duration_ms')}, "
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
