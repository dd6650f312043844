"""What one batch adds to or takes from the rollups' cells, and writing it to them.

:class:`Deltas` gathers, over a batch, the additions to each cell of each
table in Python dictionaries (a session counted per hour, a call in its
tool's hour and day cells, its duration band, its principal's day); then
:func:`apply` writes them with one ``executemany`` upsert per table, drops
the cells a subtraction emptied and looks up again a maximum that may have
gone. :class:`Session` and :class:`Call` are a session's and a call's share as
:mod:`.listener` reads and keeps them.
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from sessions_admin.ourdata.rollups import principals
from sessions_admin.ourdata.rollups.schema import (
    DAY_MS,
    GRAINS,
    HOUR_MS,
    NO_TIME,
    bucket_of,
    duration_band,
)
from sessions_admin.ourdata.sidedb import bind_id


@dataclass
class Session:
    target: str
    profile: str
    principal: str | None
    first_ts: int | None
    last_ts: int | None
    messages: int
    created_at: int | None = None
    #: last_ts as the side database holds it, before this batch.
    stored_last: int | None = None
    #: Its row's key in ``rollup_session`` (what its calls name it by); None until written.
    key: int | None = None


@dataclass
class Call:
    rowid: int | None
    tool: str
    target: str
    profile: str
    principal: str | None
    ts: int | None
    duration_ms: int | None
    failed: bool
    first_id: int
    second_id: int | None
    link_id: int
    #: The head of the link row's result, kept for failed calls only (the error groups).
    result_head: str | None
    dirty: bool = True


class Deltas:
    """Additions to each cell of each rollup table, gathered over one batch."""

    def __init__(self) -> None:
        # (grain, bucket, tool, target, profile) -> [calls, errors, timed, total_ms, max_ms]
        self.tool: dict[tuple, list] = defaultdict(lambda: [0, 0, 0, 0, None])
        # (grain, bucket, target, profile) -> [messages, sessions]
        self.activity: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
        # (day, principal) -> [messages, sessions, calls, errors]
        self.principal: dict[tuple, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
        # (session_id, hour) -> messages
        self.session_hour: dict[tuple[str, int], int] = defaultdict(int)
        # ("hour" | "day" | "all", bucket or None, tool, band) -> calls
        self.bands: dict[tuple, int] = defaultdict(int)
        # (grain, bucket of the session's last message, target, profile) -> sessions
        self.last: dict[tuple, int] = defaultdict(int)
        # Tool cells that lost a call -> the longest duration they lost (-1: none
        # timed); a cell whose max may have gone is looked up again afterwards.
        self.shrunk: dict[tuple, int] = {}
        # principal -> [first, last] activity seen; and the activity its forgotten
        # sessions held (its span may shrink).
        self.spans: principals.Spans = {}
        self.recheck: principals.Spans = {}

    def spans_of(self, sessions: Iterable[Session]) -> None:
        for s in sessions:
            principals.note_span(self.spans, s.principal, s.first_ts, s.last_ts, s.created_at)

    def messages_from_hours(self, sessions: dict[str, Session]) -> None:
        """Activity and principal message counts from the batch's per-session-hour counts.

        A day bucket is the hour bucket floored by 24 (both floor the same
        ``ts``), and NO_TIME stays NO_TIME in both grains, so this equals
        counting each message in every cell.
        """
        per_day = DAY_MS // HOUR_MS
        for (sid, hour), n in self.session_hour.items():
            s = sessions[sid]
            day = NO_TIME if hour == NO_TIME else hour // per_day
            self.activity[("hour", hour, s.target, s.profile)][0] += n
            self.activity[("day", day, s.target, s.profile)][0] += n
            self.principal[(day, s.principal or "")][0] += n

    def last_active(self, s: Session, last_ts: int | None, sign: int) -> None:
        """A session counts once, in the bucket of its latest message (windows' "active")."""
        if last_ts is None:
            return
        for grain, ms in GRAINS.items():
            self.last[(grain, bucket_of(last_ts, ms), s.target, s.profile)] += sign

    def session_created(self, s: Session, sign: int = 1) -> None:
        created = None if s.created_at == NO_TIME else s.created_at
        for grain, ms in GRAINS.items():
            self.activity[(grain, bucket_of(created, ms), s.target, s.profile)][1] += sign
        self.principal[(bucket_of(created, DAY_MS), s.principal or "")][1] += sign

    def call(self, c: Call, sign: int, *, count: bool = True) -> None:
        """Add (sign 1) or take away (sign -1) one call's contribution."""
        timed = c.duration_ms is not None
        for grain, ms in GRAINS.items():
            key = (grain, bucket_of(c.ts, ms), c.tool, c.target, c.profile)
            cell = self.tool[key]
            if sign < 0 and count:
                lost = c.duration_ms if timed else -1
                self.shrunk[key] = max(self.shrunk.get(key, -1), lost)
            cell[0] += sign * count
            cell[1] += sign * c.failed
            cell[2] += sign * timed
            cell[3] += sign * (c.duration_ms or 0)
            if sign > 0 and timed and (cell[4] is None or c.duration_ms > cell[4]):
                cell[4] = c.duration_ms
        if timed:
            band = duration_band(c.duration_ms)
            for grain, ms in GRAINS.items():
                self.bands[(grain, bucket_of(c.ts, ms), c.tool, band)] += sign
            self.bands[("all", None, c.tool, band)] += sign
        person = self.principal[(bucket_of(c.ts, DAY_MS), c.principal or "")]
        person[2] += sign * count
        person[3] += sign * c.failed


def apply(side: sqlite3.Connection, d: Deltas) -> None:
    """Add the deltas to the tables, drop emptied cells, look up shrunk maxima again."""
    for grain in GRAINS:
        side.executemany(
            f"INSERT INTO rollup_tool_{grain} (bucket, tool, target, profile, calls, errors, "
            "timed, total_ms, max_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT DO UPDATE SET calls = calls + excluded.calls, "
            "errors = errors + excluded.errors, timed = timed + excluded.timed, "
            "total_ms = total_ms + excluded.total_ms, "
            "max_ms = max(coalesce(max_ms, excluded.max_ms), coalesce(excluded.max_ms, max_ms))",
            [(*key[1:], *cell) for key, cell in d.tool.items() if key[0] == grain],
        )
        side.executemany(
            f"INSERT INTO rollup_activity_{grain} (bucket, target, profile, messages, sessions) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
            "messages = messages + excluded.messages, sessions = sessions + excluded.sessions",
            [(*key[1:], *cell) for key, cell in d.activity.items() if key[0] == grain],
        )
    side.executemany(
        "INSERT INTO rollup_principal_day (bucket, principal, messages, sessions, calls, errors) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
        "messages = messages + excluded.messages, sessions = sessions + excluded.sessions, "
        "calls = calls + excluded.calls, errors = errors + excluded.errors",
        [(*key, *cell) for key, cell in d.principal.items()],
    )
    side.executemany(
        "INSERT INTO rollup_session_hour (session_id, bucket, messages) VALUES (?, ?, ?) "
        "ON CONFLICT DO UPDATE SET messages = messages + excluded.messages",
        [(bind_id(sid), hour, n) for (sid, hour), n in d.session_hour.items() if n > 0],
    )
    _apply_bands(side, d.bands)
    _apply_last(side, d.last)
    for key, lost in d.shrunk.items():
        _refresh_max(side, key, lost)
    # Only a subtraction can empty a cell: look at those cells alone, not the tables.
    for grain in GRAINS:
        side.executemany(
            f"DELETE FROM rollup_tool_{grain} WHERE bucket = ? AND tool = ? AND target = ? "
            "AND profile = ? AND calls <= 0",
            [key[1:] for key, cell in d.tool.items() if key[0] == grain and cell[0] < 0],
        )
        side.executemany(
            f"DELETE FROM rollup_activity_{grain} WHERE bucket = ? AND target = ? "
            "AND profile = ? AND messages <= 0 AND sessions <= 0",
            [key[1:] for key, cell in d.activity.items() if key[0] == grain and min(cell) < 0],
        )
    side.executemany(
        "DELETE FROM rollup_principal_day WHERE bucket = ? AND principal = ? "
        "AND messages <= 0 AND sessions <= 0 AND calls <= 0",
        [key for key, cell in d.principal.items() if min(cell) < 0],
    )
    principals.apply(side, d.principal, d.spans, d.recheck)


def _apply_bands(side: sqlite3.Connection, bands: dict[tuple, int]) -> None:
    changed = [(key, n) for key, n in bands.items() if n]
    for grain in GRAINS:
        rows = [(k[2], k[1], k[3], n) for k, n in changed if k[0] == grain]
        side.executemany(
            f"INSERT INTO rollup_duration_{grain} (tool, bucket, band, n) VALUES (?, ?, ?, ?) "
            "ON CONFLICT DO UPDATE SET n = n + excluded.n",
            rows,
        )
        side.executemany(
            f"DELETE FROM rollup_duration_{grain} WHERE tool = ? AND bucket = ? AND band = ? "
            "AND n <= 0",
            [row[:3] for row in rows if row[3] < 0],
        )
    rows = [(k[2], k[3], n) for k, n in changed if k[0] == "all"]
    side.executemany(
        "INSERT INTO rollup_duration_all (tool, band, n) VALUES (?, ?, ?) "
        "ON CONFLICT DO UPDATE SET n = n + excluded.n",
        rows,
    )
    side.executemany(
        "DELETE FROM rollup_duration_all WHERE tool = ? AND band = ? AND n <= 0",
        [row[:2] for row in rows if row[2] < 0],
    )


def _apply_last(side: sqlite3.Connection, last: dict[tuple, int]) -> None:
    for grain in GRAINS:
        rows = [(*k[1:], n) for k, n in last.items() if k[0] == grain and n]
        side.executemany(
            f"INSERT INTO rollup_last_{grain} (bucket, target, profile, sessions) "
            "VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions",
            rows,
        )
        side.executemany(
            f"DELETE FROM rollup_last_{grain} WHERE bucket = ? AND target = ? AND profile = ? "
            "AND sessions <= 0",
            [row[:3] for row in rows if row[3] < 0],
        )


def _refresh_max(side: sqlite3.Connection, key: tuple, lost: int) -> None:
    """Look a cell's max duration up again, when the calls it lost may have held it.

    Calls that all ran shorter than the cell's max (or had no duration) leave
    the max where it was: the call that set it is still there. Only otherwise
    is the max read again from the calls, a walk of the tool's calls in the
    bucket (on the bench store a pass that moved 100 sessions spent 2 s here
    when every shrunk cell was walked).
    """
    grain, bucket, tool, target, profile = key
    cell = [bucket, tool, target, profile]
    row = side.execute(
        f"SELECT max_ms FROM rollup_tool_{grain} WHERE bucket = ? AND tool = ? AND target = ? "
        "AND profile = ?",
        cell,
    ).fetchone()
    if row is None or lost < 0 or (row[0] is not None and lost < row[0]):
        return  # the cell is gone, lost no timed call, or its longest call is still in it
    # A call without a time is stored at NO_TIME (-1), which falls in bucket -1.
    ms = GRAINS[grain]
    span, params = "ts >= ? AND ts < ?", [bucket * ms, (bucket + 1) * ms]
    side.execute(
        f"UPDATE rollup_tool_{grain} SET max_ms = (SELECT max(duration_ms) FROM rollup_call "
        f"WHERE tool = (SELECT key FROM rollup_tools WHERE name = ?) AND {span} "
        "AND place = (SELECT key FROM rollup_places WHERE target = ? AND profile = ?)) "
        "WHERE bucket = ? AND tool = ? AND target = ? AND profile = ?",
        [tool, *params, target, profile, *cell],
    )
