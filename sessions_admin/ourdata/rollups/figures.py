"""What the overview and the tool pages read: rollup sums and index seeks, never the store.

**Windows** are whole buckets so that every figure is an exact sum of
rollup cells: ``24h`` is the current UTC hour and the 23 before it; ``7d``
and ``30d`` are the current UTC day and the 6 or 29 before it; ``all`` is
everything (calls without a time included). Principals are kept per day, so
their window starts at the start of the UTC day its window starts in.

**Percentiles** are nearest-rank over the window's calls that have a
duration: with n durations sorted ascending, p50 is the ``ceil(0.50 n)``-th
and p95 the ``ceil(0.95 n)``-th. n comes from the rollups; unfiltered, the
band counts (``rollup_duration_*``) say which ~5 %-wide duration band holds
that rank, and one short ``OFFSET`` walk inside the band along an
index of the per-call table gives the exact value.
"""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.rollups.schema import DAY_MS, GRAINS, TOOL_KEY, band_floor
from sessions_admin.ourdata.sync import SyncState, has_tables, read_state
from sessions_admin.params import BadParameter, quoted

#: What the pages hold while they read the rollups.
SideConnection = sqlite3.Connection


class NotComputed(Exception):
    """The rollups have not been built yet (no side database, or no rollup tables)."""


def last_sync(side: sqlite3.Connection) -> SyncState:
    """Where the sync stands; ``synced_at_ms`` is None until a pass has finished.

    An empty figure means nothing when no pass ever finished (a first build
    that failed or is still running): the pages say so instead of blaming
    the filters.
    """
    if not has_tables(side):
        return SyncState()
    state = read_state(side)
    synced = state.synced_at_ms if isinstance(state.synced_at_ms, int) else None
    started = state.started_at_ms if isinstance(state.started_at_ms, int) else None
    return SyncState(state.last_id, synced, started)


@contextmanager
def reading() -> Iterator[SideConnection]:
    """A read-only connection to the rollups for one request."""
    try:
        conn = sidedb.connect_readonly()
    except sidedb.SideDatabaseUnavailable as exc:
        raise NotComputed() from exc
    if conn is None:
        raise NotComputed()
    try:
        yield conn
    except (sqlite3.OperationalError, sidedb.driver().OperationalError) as exc:
        if "no such table" in str(exc):
            raise NotComputed() from exc
        raise
    finally:
        conn.close()


WINDOWS: dict[str, tuple[str, str, int | None]] = {
    "24h": ("last 24 hours", "hour", 24),
    "7d": ("last 7 days", "day", 7),
    "30d": ("last 30 days", "day", 30),
    "all": ("all time", "day", None),
}
DEFAULT_WINDOW = "24h"


@dataclass(frozen=True)
class Window:
    key: str
    label: str
    grain: str
    buckets: int | None
    now_ms: int

    @property
    def grain_ms(self) -> int:
        return GRAINS[self.grain]

    @property
    def start_bucket(self) -> int | None:
        if self.buckets is None:
            return None
        return self.now_ms // self.grain_ms - self.buckets + 1

    @property
    def start_ms(self) -> int | None:
        start = self.start_bucket
        return None if start is None else start * self.grain_ms

    @property
    def start_day(self) -> int | None:
        start = self.start_ms
        return None if start is None else start // DAY_MS

    def bucket_starts(self, first_bucket: int | None = None) -> list[int]:
        """Bucket numbers from the window's start (or ``first_bucket``) to now."""
        first = self.start_bucket if self.start_bucket is not None else first_bucket
        if first is None:
            return []
        return list(range(first, self.now_ms // self.grain_ms + 1))


def parse_window(raw: object, now_ms: int) -> Window:
    key = raw if isinstance(raw, str) and raw else DEFAULT_WINDOW
    if key not in WINDOWS:
        raise BadParameter(
            f"window: Unknown window {quoted(key)}; choose one of {', '.join(WINDOWS)}.",
            name="window",
        )
    label, grain, buckets = WINDOWS[key]
    return Window(key, label, grain, buckets, now_ms)


@dataclass(frozen=True)
class Scope:
    """The target and profile filters shared by the tool pages."""

    target: str | None = None
    profile: str | None = None

    def where(self) -> tuple[str, list[str]]:
        clauses, params = [], []
        for column, value in (("target", self.target), ("profile", self.profile)):
            if value is not None:
                clauses.append(f" AND {column} = ?")
                params.append(value)
        return "".join(clauses), params

    def call_where(self) -> tuple[str, list[str]]:
        """The same filter on ``rollup_call``, whose target and profile are a place key."""
        inner, params = self.where()
        if not params:
            return "", []
        return f" AND place IN (SELECT key FROM rollup_places WHERE 1{inner})", params


# -- tools ----------------------------------------------------------------------


@dataclass
class ToolRow:
    tool: str
    calls: int = 0
    errors: int = 0
    timed: int = 0
    total_ms: int = 0
    max_ms: int | None = None
    p50_ms: int | None = None
    p95_ms: int | None = None
    #: (bucket number, calls, errors), one per bucket of the window.
    series: list[tuple[int, int, int]] = field(default_factory=list)

    @property
    def error_share(self) -> float:
        return self.errors / self.calls if self.calls else 0.0


def tool_rows(
    side: sqlite3.Connection, window: Window, scope: Scope = Scope(), *, series: bool = True
) -> list[ToolRow]:
    """Every tool with a call in the window, most calls first."""
    extra, params = scope.where()
    since = window.start_bucket
    rows = side.execute(
        "SELECT tool, bucket, sum(calls), sum(errors), sum(timed), sum(total_ms), max(max_ms) "
        f"FROM rollup_tool_{window.grain} WHERE bucket >= ?{extra} GROUP BY tool, bucket",
        [since if since is not None else -(2**62), *params],
    ).fetchall()
    tools: dict[str, ToolRow] = {}
    per_bucket: dict[str, dict[int, tuple[int, int]]] = {}
    for tool, bucket, calls, errors, timed, total, top in rows:
        row = tools.setdefault(tool, ToolRow(tool))
        row.calls += calls
        row.errors += errors
        row.timed += timed
        row.total_ms += total
        if top is not None and (row.max_ms is None or top > row.max_ms):
            row.max_ms = top
        per_bucket.setdefault(tool, {})[bucket] = (calls, errors)
    first = min((b for b in _real(rows)), default=None)
    buckets = window.bucket_starts(first)
    for row in tools.values():
        row.p50_ms, row.p95_ms = percentiles(side, row.tool, window, scope, row.timed, (0.5, 0.95))
        if series:
            counts = per_bucket[row.tool]
            row.series = [(b, *counts.get(b, (0, 0))) for b in buckets]
    return sorted(tools.values(), key=lambda r: (-r.calls, r.tool))


def _real(rows: list[tuple]) -> list[int]:
    return [row[1] for row in rows if row[1] >= 0]


def nearest_rank(n: int, q: float) -> int:
    """The 1-based rank of the q-quantile among n sorted values (nearest-rank)."""
    return max(1, math.ceil(q * n - 1e-9))


def percentiles(
    side: sqlite3.Connection,
    tool: str,
    window: Window,
    scope: Scope,
    n: int,
    qs: tuple[float, ...],
) -> tuple[int | None, ...]:
    """The exact nearest-rank quantiles of the tool's n timed calls in the window.

    Unfiltered windows find the duration band holding each rank from the band
    counts, then walk that band alone; a target or profile filter sorts the
    window's own calls of that tool (an index range, then a sort).
    """
    if n <= 0:
        return tuple(None for _ in qs)
    ranks = [nearest_rank(n, q) for q in qs]
    if scope != Scope():
        return tuple(_sorted_pick(side, tool, window, scope, k) for k in ranks)
    bands = _band_counts(side, tool, window)
    return tuple(_band_pick(side, tool, window, bands, k) for k in ranks)


def _sorted_pick(side, tool: str, window: Window, scope: Scope, k: int) -> int | None:
    extra, params = scope.call_where()
    if window.start_ms is None:
        sql = (
            "SELECT duration_ms FROM rollup_call INDEXED BY rollup_call_tool_duration "
            f"WHERE tool = {TOOL_KEY} AND duration_ms IS NOT NULL{extra} "
            "ORDER BY duration_ms LIMIT 1 OFFSET ?"
        )
        args = [tool, *params, k - 1]
    else:
        sql = (
            "SELECT duration_ms FROM rollup_call INDEXED BY rollup_call_tool_ts "
            f"WHERE tool = {TOOL_KEY} AND ts >= ? AND duration_ms IS NOT NULL{extra} "
            "ORDER BY duration_ms LIMIT 1 OFFSET ?"
        )
        args = [tool, window.start_ms, *params, k - 1]
    row = side.execute(sql, args).fetchone()
    return None if row is None else row[0]


def _band_counts(side, tool: str, window: Window) -> list[tuple[int, int]]:
    if window.start_bucket is None:
        sql, args = "SELECT band, n FROM rollup_duration_all WHERE tool = ? ORDER BY band", [tool]
    else:
        sql = (
            f"SELECT band, sum(n) FROM rollup_duration_{window.grain} WHERE tool = ? "
            "AND bucket >= ? GROUP BY band ORDER BY band"
        )
        args = [tool, window.start_bucket]
    return side.execute(sql, args).fetchall()


def _band_pick(side, tool: str, window: Window, bands: list[tuple[int, int]], k: int) -> int | None:
    before, band = 0, None
    for candidate, count in bands:
        if before + count >= k:
            band = candidate
            break
        before += count
    if band is None:
        return None
    offset = k - before - 1
    if window.start_ms is None:
        floor = band_floor(band)
        sql = (
            "SELECT duration_ms FROM rollup_call INDEXED BY rollup_call_tool_duration "
            f"WHERE tool = {TOOL_KEY} AND duration_ms IS NOT NULL AND duration_ms >= ? "
            "ORDER BY duration_ms LIMIT 1 OFFSET ?"
        )
        args = [tool, floor if floor is not None else -(2**63), offset]
    else:
        sql = (
            "SELECT duration_ms FROM rollup_call INDEXED BY rollup_call_tool_band "
            f"WHERE tool = {TOOL_KEY} AND band = ? AND ts >= ? AND duration_ms IS NOT NULL "
            "ORDER BY duration_ms LIMIT 1 OFFSET ?"
        )
        args = [tool, band, window.start_ms, offset]
    row = side.execute(sql, args).fetchone()
    return None if row is None else row[0]


# -- activity, targets, principals --------------------------------------------------


def activity(side: sqlite3.Connection, grain: str, buckets: int, now_ms: int) -> list[tuple]:
    """(bucket number, messages, sessions created) for the last ``buckets`` buckets."""
    last = now_ms // GRAINS[grain]
    first = last - buckets + 1
    found = {
        bucket: (messages, sessions)
        for bucket, messages, sessions in side.execute(
            f"SELECT bucket, sum(messages), sum(sessions) FROM rollup_activity_{grain} "
            "WHERE bucket >= ? AND bucket <= ? GROUP BY bucket",
            [first, last],
        )
    }
    return [(b, *found.get(b, (0, 0))) for b in range(first, last + 1)]


@dataclass
class TargetFigures:
    target: str
    sessions: int = 0
    messages: int = 0
    #: profile -> (sessions, messages)
    profiles: dict[str, tuple[int, int]] = field(default_factory=dict)


def by_target(side: sqlite3.Connection, window: Window) -> list[TargetFigures]:
    """Sessions active and messages written in the window, per target and profile."""
    cells: dict[tuple[str, str], list[int]] = {}
    since = window.start_bucket
    messages = side.execute(
        f"SELECT target, profile, sum(messages), sum(sessions) FROM rollup_activity_{window.grain} "
        "WHERE bucket >= ? GROUP BY target, profile",
        [since if since is not None else -(2**62)],
    ).fetchall()
    for target, profile, n, started in messages:
        # Over all time every session was created once: the created count is the session count.
        cells[(target, profile)] = [started if since is None else 0, n]
    if since is not None:
        for target, profile, n in side.execute(
            f"SELECT target, profile, sum(sessions) FROM rollup_last_{window.grain} "
            "WHERE bucket >= ? GROUP BY target, profile",
            [since],
        ):
            cells.setdefault((target, profile), [0, 0])[0] = n
    targets: dict[str, TargetFigures] = {}
    for (target, profile), (sessions, n) in sorted(cells.items()):
        figures = targets.setdefault(target, TargetFigures(target))
        figures.sessions += sessions
        figures.messages += n
        figures.profiles[profile] = (sessions, n)
    return sorted(targets.values(), key=lambda t: (-t.messages, t.target))


@dataclass(frozen=True)
class PrincipalFigures:
    principal: str
    messages: int
    sessions: int
    calls: int
    errors: int


def busiest_principals(
    side: sqlite3.Connection, window: Window, limit: int = 10
) -> list[PrincipalFigures]:
    """Principals with the most messages since the day the window starts in."""
    since = window.start_day
    rows = side.execute(
        "SELECT principal, sum(messages) AS n, sum(sessions), sum(calls), sum(errors) "
        "FROM rollup_principal_day WHERE bucket >= ? GROUP BY principal "
        "ORDER BY n DESC, principal LIMIT ?",
        [since if since is not None else -(2**62), limit],
    )
    return [PrincipalFigures(*row) for row in rows]


def totals(side: sqlite3.Connection) -> tuple[int, int]:
    """(sessions, messages) the sync has seen, summed from the daily cells."""
    row = side.execute(
        "SELECT coalesce(sum(sessions), 0), coalesce(sum(messages), 0) FROM rollup_activity_day"
    ).fetchone()
    return row[0], row[1]


def scope_choices(side: sqlite3.Connection) -> dict[str, list[str]]:
    """Every target and every profile the rollups hold, sorted: the scope menus."""
    rows = side.execute("SELECT DISTINCT target, profile FROM rollup_activity_day").fetchall()
    return {
        "targets": sorted({t for t, _ in rows}),
        "profiles": sorted({p for _, p in rows}),
    }


def computed_at(side: sqlite3.Connection) -> int | None:
    row = side.execute("SELECT value FROM rollup_meta WHERE key = 'computed_at'").fetchone()
    return None if row is None else row[0]


def bucket_ms(bucket: int, grain: str) -> int:
    return bucket * GRAINS[grain]
