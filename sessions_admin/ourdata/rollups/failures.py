"""Every tool's failures in one list: the latest failed calls across all tools,
grouped by tool and by what failed (:func:`~.errors.what_failed`).

The groups are read from the per-call table's failed calls newest first
(``rollup_call_failures``, a partial index holding failed calls only), at most
:data:`FAILURE_SCAN` of them, so a page costs the same on any store; when
there are more, the page says the groups cover the latest ones only. A tool's
own page groups its failures the same way (:func:`.calls.error_groups`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field

from sessions_admin.ourdata.rollups.errors import what_failed
from sessions_admin.ourdata.rollups.figures import Scope, Window
from sessions_admin.ourdata.rollups.schema import NO_TIME
from sessions_admin.ourdata.sidedb import read_id
from sessions_admin.sqlhelpers import placeholders

#: No target or profile filter.
ANY_PLACE = Scope()
#: Failed calls read for one page of groups: each is read into Python and grouped,
#: about 4 µs a call, so this bounds the page's cost on any store.
FAILURE_SCAN = 3000
#: A group's chart shows at most this many buckets (the latest).
CHART_BUCKETS = 60


@dataclass
class FailureGroup:
    tool: str
    #: What failed, normalised (:mod:`.errors`).
    what: str
    count: int
    first_ts: int
    last_ts: int
    session_keys: set[int] = field(default_factory=set, repr=False)
    #: Failures per bucket (a bucket number of the window's grain).
    by_bucket: dict[int, int] = field(default_factory=dict, repr=False)

    @property
    def sessions(self) -> int:
        return len(self.session_keys)


@dataclass
class Failures:
    groups: list[FailureGroup]
    #: Failed calls read; ``cut`` when the window holds more than were read.
    scanned: int
    cut: bool
    #: The bucket numbers each group's chart spans, oldest first.
    buckets: list[int]


def failure_groups(
    side: sqlite3.Connection, window: Window, scope: Scope = ANY_PLACE, scan: int | None = None
) -> Failures:
    """The window's latest failed calls (at most ``scan``) grouped by tool and what
    failed, the biggest group first (then the latest, then by name)."""
    if scan is None:
        scan = FAILURE_SCAN
    extra, params = scope.call_where()
    since = window.start_ms
    where = "failed" + ("" if since is None else " AND ts >= ?") + extra
    args: list[object] = ([] if since is None else [since]) + list(params)
    rows = side.execute(
        "SELECT tool, session, ts, result_head FROM rollup_call "
        f"INDEXED BY rollup_call_failures WHERE {where} "
        f"ORDER BY ts DESC, id DESC LIMIT {int(scan) + 1}",
        args,
    ).fetchall()
    names = _tool_names(side, {row[0] for row in rows[:scan]})
    grain = window.grain_ms
    groups: dict[tuple[int, str], FailureGroup] = {}
    seen: dict[str | None, str] = {}  # many failures repeat a head word for word
    # Newest first: a group's first row read is its last seen, each later one its first
    # seen so far (a call without a time, NO_TIME, sorts after every other).
    for tool, session, ts, head in rows[:scan]:
        what = seen.get(head)
        if what is None:
            what = seen[head] = what_failed(head)
        group = groups.get((tool, what))
        if group is None:
            group = groups[(tool, what)] = FailureGroup(names.get(tool, "?"), what, 0, ts, ts)
        group.count += 1
        group.first_ts = ts
        group.session_keys.add(session)
        if ts != NO_TIME:
            by_bucket = group.by_bucket
            bucket = ts // grain
            by_bucket[bucket] = by_bucket.get(bucket, 0) + 1
    ordered = sorted(groups.values(), key=lambda g: (-g.count, -g.last_ts, g.tool, g.what))
    timed = [row[2] for row in rows[:scan] if row[2] != NO_TIME]
    first = min(timed) // grain if timed else None
    buckets = window.bucket_starts(first)[-CHART_BUCKETS:]
    return Failures(ordered, scanned=min(len(rows), scan), cut=len(rows) > scan, buckets=buckets)


def _tool_names(side: sqlite3.Connection, keys: set[int]) -> dict[int, str]:
    if not keys:
        return {}
    ordered = sorted(keys)
    return dict(
        side.execute(
            f"SELECT key, name FROM rollup_tools WHERE key IN ({placeholders(len(ordered))})",
            ordered,
        ).fetchall()
    )


def failures_per_bucket(
    side: sqlite3.Connection, tool: str, window: Window, scope: Scope = ANY_PLACE
) -> list[tuple[int, int, int]]:
    """(bucket, calls, errors) of one tool over the window's buckets, from the tool
    cells (every call, not a scan): the chart on a tool's page."""
    table = "rollup_tool_hour" if window.grain == "hour" else "rollup_tool_day"
    inner, params = scope.where()
    since = window.start_bucket
    rows = side.execute(
        f"SELECT bucket, sum(calls), sum(errors) FROM {table} WHERE tool = ? AND bucket >= ?"
        f"{inner} GROUP BY bucket",
        [tool, NO_TIME + 1 if since is None else since, *params],
    ).fetchall()
    found = {bucket: (calls, errors) for bucket, calls, errors in rows}
    first = min(found, default=None)
    return [
        (bucket, *found.get(bucket, (0, 0)))
        for bucket in window.bucket_starts(first)[-CHART_BUCKETS * 2 :]
    ]


def failed_call_sessions(
    side: sqlite3.Connection, window: Window, scope: Scope = ANY_PLACE
) -> Iterator[str]:
    """The sessions of the window's failed calls, newest call first (repeats left in:
    a review queue's source keeps the first of each)."""
    extra, params = scope.call_where()
    since = window.start_ms
    where = (
        "c.failed"
        + ("" if since is None else " AND c.ts >= ?")
        + extra.replace("place IN", "c.place IN")
    )
    args: list[object] = ([] if since is None else [since]) + list(params)
    for (sid,) in side.execute(
        "SELECT s.session_id FROM rollup_call AS c INDEXED BY rollup_call_failures "
        f"JOIN rollup_session AS s ON s.key = c.session WHERE {where} "
        "ORDER BY c.ts DESC, c.id DESC",
        args,
    ):
        yield read_id(sid)
