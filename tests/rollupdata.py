"""Test stores full of tool calls, their feed for the rollups, and the SQL the rollups summarise.

Also the rollups read back from the side database, and :func:`assert_rollups_match`,
which checks every table against that SQL.

The reference queries here read the store directly (tests may); they are the
"naive aggregate SQL" each rollup figure must equal.
"""

from __future__ import annotations

import math
import sqlite3
from random import Random

from sessions_admin.ourdata.rollups.schema import DAY_MS, HOUR_MS
from sessions_admin.store.feed import FeedMessage, FeedSession
from sessions_admin.store.toolcalls import IS_TOOL_CALL_SQL, reports_error_sql
from tests.storebuilder import BASE_MS, StoreBuilder

TOOLS = ("sql.query", "fs.read", "http.get")
TARGETS = (("ops.pager", "default"), ("ops.pager", "edit"), ("infra.deployer", "default"))
RESULTS = (
    '{"ok": true, "rows": 3}',
    '{"ok": false, "error": "timeout"}',
    '{"error": ""}',
    '{"success": false}',
    "not json",
    None,
)


def fill_store(store: StoreBuilder, rng: Random, sessions: int = 12, per: int = 15) -> None:
    """Sessions over three days with single-row calls, two-row calls and plain messages."""
    with store.connect() as conn:
        for n in range(sessions):
            sid = f"sess_r{rng.getrandbits(32):08x}_{n}"
            target, profile = rng.choice(TARGETS)
            start = BASE_MS + rng.randrange(3 * DAY_MS)
            conn.execute(
                "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, "
                "turn_count, created_at, last_active) VALUES (?, ?, ?, ?, 't', 0, ?, ?)",
                (sid, target, profile, rng.choice(("user:a", "user:b", None)), start, start),
            )
            ts = start
            for i in range(per):
                ts += rng.randrange(HOUR_MS // 2)
                _add_turn(conn, rng, sid, ts, f"{n}-{i}")


def _add_turn(conn: sqlite3.Connection, rng: Random, sid: str, ts: int, tag: str) -> None:
    insert = (
        "INSERT INTO session_messages (session_id, role, content, tool_name, tool_call_id, "
        "tool_args, tool_result, tool_duration_ms, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
    )
    kind = rng.random()
    tool = rng.choice(TOOLS)
    duration = rng.choice((None, rng.randrange(1, 5000), rng.randrange(1, 50)))
    if kind < 0.4:
        conn.execute(insert, (sid, "user", "hi", None, None, None, None, None, ts))
    elif kind < 0.7:
        call_id = rng.choice((None, "", f"call_{tag}"))
        conn.execute(
            insert,
            (sid, "tool", "", tool, call_id, '{"q": 1}', rng.choice(RESULTS), duration, ts),
        )
    else:
        # A call and its result as two rows sharing a call id.
        conn.execute(
            insert, (sid, "assistant", "", tool, f"call_{tag}", '{"q": 2}', None, None, ts)
        )
        conn.execute(
            insert,
            (sid, "tool", "", tool, f"call_{tag}", None, rng.choice(RESULTS), duration, ts + 7),
        )


def feed(store: StoreBuilder, after_id: int = 0) -> list[FeedMessage]:
    rows = store.execute(
        "SELECT m.id, m.session_id, m.role, m.content, m.tool_name, m.tool_call_id, "
        "m.tool_target, m.tool_op, m.tool_args, m.tool_result, m.tool_duration_ms, m.ts, "
        "s.target_key, s.profile_key, s.principal_id FROM session_messages m "
        "LEFT JOIN sessions s ON s.id = m.session_id WHERE m.id > ? ORDER BY m.id",
        (after_id,),
    )
    return [FeedMessage(*row) for row in rows]


def sessions(store: StoreBuilder, ids: list[str] | None = None) -> list[FeedSession]:
    rows = store.execute(
        "SELECT id, target_key, profile_key, principal_id, title, turn_count, created_at, "
        "last_active FROM sessions ORDER BY id"
    )
    return [FeedSession(*row) for row in rows if ids is None or row[0] in ids]


_CALLS = f"""
WITH r AS (
  SELECT m.id, m.session_id, m.tool_name, m.ts, m.tool_duration_ms AS d,
         {reports_error_sql("m.tool_result")} AS f,
         CASE WHEN m.tool_call_id IS NOT NULL AND m.tool_call_id != ''
              THEN 'c:' || m.tool_call_id ELSE 'm:' || m.id END AS k,
         coalesce(s.target_key, '') AS target, coalesce(s.profile_key, '') AS profile,
         coalesce(s.principal_id, '') AS principal
  FROM session_messages m LEFT JOIN sessions s ON s.id = m.session_id WHERE {IS_TOOL_CALL_SQL}
), c AS (SELECT session_id, k, min(id) AS first_id, max(f) AS failed, max(d) AS d
         FROM r GROUP BY session_id, k)
SELECT r.tool_name, r.ts, r.target, r.profile, r.principal, c.failed, c.d
FROM c JOIN r ON r.id = c.first_id
"""


def reference_calls(store: StoreBuilder) -> list[tuple]:
    """(tool, ts, target, profile, principal, failed, duration) per call, straight from SQL."""
    return store.execute(_CALLS)


def reference_tool_cells(store: StoreBuilder, grain_ms: int) -> dict[tuple, tuple]:
    rows = store.execute(
        f"SELECT ts / {grain_ms}, tool_name, target, profile, count(*), sum(failed), count(d), "
        f"coalesce(sum(d), 0), max(d) FROM ({_CALLS}) GROUP BY 1, 2, 3, 4"
    )
    return {row[:4]: row[4:] for row in rows}


def reference_activity(store: StoreBuilder, grain_ms: int) -> dict[tuple, tuple]:
    messages = store.execute(
        f"SELECT m.ts / {grain_ms}, s.target_key, s.profile_key, count(*) FROM session_messages m "
        "JOIN sessions s ON s.id = m.session_id GROUP BY 1, 2, 3"
    )
    started = store.execute(
        f"SELECT created_at / {grain_ms}, target_key, profile_key, count(*) FROM sessions "
        "GROUP BY 1, 2, 3"
    )
    cells: dict[tuple, list[int]] = {}
    for *key, n in messages:
        cells.setdefault(tuple(key), [0, 0])[0] = n
    for *key, n in started:
        cells.setdefault(tuple(key), [0, 0])[1] = n
    return {key: tuple(value) for key, value in cells.items()}


def reference_principals(store: StoreBuilder) -> dict[tuple, tuple]:
    rows = store.execute(
        f"SELECT m.ts / {DAY_MS}, coalesce(s.principal_id, ''), count(*) FROM session_messages m "
        "JOIN sessions s ON s.id = m.session_id GROUP BY 1, 2"
    )
    return {(day, p): n for day, p, n in rows}


def reference_principal_totals(store: StoreBuilder) -> dict[str, tuple]:
    """Per principal: sessions, messages, calls, errors, first and last activity."""
    created = "CASE WHEN typeof(created_at) = 'integer' THEN created_at END"
    rows = store.execute(
        "SELECT coalesce(s.principal_id, ''), count(*), sum(n), "
        "min(min(coalesce(lo, c), coalesce(c, lo))), max(max(coalesce(hi, c), coalesce(c, hi))) "
        f"FROM (SELECT id, principal_id, {created} AS c FROM sessions) s "
        # A session's first activity is its earliest message, whatever its id.
        "LEFT JOIN (SELECT session_id, count(*) AS n, max(ts) AS hi, min(ts) AS lo "
        "FROM session_messages GROUP BY session_id) m ON m.session_id = s.id "
        "GROUP BY 1"
    )
    calls: dict[str, list[int]] = {}
    for _, _, _, _, principal, failed, _ in reference_calls(store):
        cell = calls.setdefault(principal, [0, 0])
        cell[0] += 1
        cell[1] += failed
    return {
        p: (n, messages or 0, *calls.get(p, [0, 0]), first, last if last is not None else -1)
        for p, n, messages, first, last in rows
    }


def principal_totals(side) -> dict[str, tuple]:
    """The rollup_principal rows as read back (and their folded text checked)."""
    rows = side.execute(
        "SELECT principal, fold, sessions, messages, calls, errors, first_ts, last_ts "
        "FROM rollup_principal"
    ).fetchall()
    assert all(folded == principal.casefold() for principal, folded, *_ in rows)
    return {principal: tuple(rest) for principal, _, *rest in rows}


def reference_bands(store: StoreBuilder) -> dict[tuple, int]:
    """Timed calls per (grain, bucket, tool, duration band); ("all", None) for all time."""
    from sessions_admin.ourdata.rollups.schema import duration_band

    counts: dict[tuple, int] = {}
    for tool, ts, _, _, _, _, duration in reference_calls(store):
        if duration is None:
            continue
        band = duration_band(duration)
        for key in (("hour", ts // HOUR_MS), ("day", ts // DAY_MS), ("all", None)):
            counts[(*key, tool, band)] = counts.get((*key, tool, band), 0) + 1
    return counts


def reference_last_active(store: StoreBuilder, grain_ms: int) -> dict[tuple, int]:
    """Sessions by the bucket of their latest message."""
    rows = store.execute(
        f"SELECT last / {grain_ms}, target_key, profile_key, count(*) FROM (SELECT s.id, "
        "s.target_key, s.profile_key, max(m.ts) AS last FROM sessions s JOIN session_messages m "
        "ON m.session_id = s.id GROUP BY s.id) GROUP BY 1, 2, 3"
    )
    return {row[:3]: row[3] for row in rows}


def nearest_rank_percentile(values: list[int], q: float) -> int | None:
    """The textbook nearest-rank definition, written independently of the app's."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[math.ceil(q * len(ordered)) - 1]


# --- The rollups read back, and the check that they equal the reference SQL ---------


def tool_cells(side, grain: str) -> dict[tuple, tuple]:
    """The rollup_tool_<grain> cells as read back from the side database."""
    rows = side.execute(
        f"SELECT bucket, tool, target, profile, calls, errors, timed, total_ms, max_ms "
        f"FROM rollup_tool_{grain}"
    )
    return {row[:4]: row[4:] for row in rows}


def activity_cells(side, grain: str) -> dict[tuple, tuple]:
    """The rollup_activity_<grain> cells as read back from the side database."""
    rows = side.execute(
        f"SELECT bucket, target, profile, messages, sessions FROM rollup_activity_{grain}"
    )
    return {row[:3]: row[3:] for row in rows}


def principal_messages(side) -> dict[tuple, int]:
    """Messages per (day, principal) as read back from the side database."""
    rows = side.execute("SELECT bucket, principal, messages FROM rollup_principal_day")
    return {(b, p): n for b, p, n in rows}


def assert_rollups_match(side, store) -> None:
    """Every rollup table equals the reference SQL over the store."""
    for grain, ms in (("hour", HOUR_MS), ("day", DAY_MS)):
        assert tool_cells(side, grain) == reference_tool_cells(store, ms)
        assert activity_cells(side, grain) == reference_activity(store, ms)
    assert principal_messages(side) == reference_principals(store)
    assert principal_totals(side) == reference_principal_totals(store)
    assert band_counts(side) == reference_bands(store)
    for grain, ms in (("hour", HOUR_MS), ("day", DAY_MS)):
        rows = side.execute(f"SELECT bucket, target, profile, sessions FROM rollup_last_{grain}")
        assert {row[:3]: row[3] for row in rows} == reference_last_active(store, ms)


def band_counts(side) -> dict[tuple, int]:
    """Timed calls per (grain, bucket, tool, band) as read back from the side database."""
    rows = []
    for grain in ("hour", "day"):
        rows += side.execute(
            f"SELECT '{grain}', bucket, tool, band, n FROM rollup_duration_{grain}"
        ).fetchall()
    rows += side.execute("SELECT 'all', NULL, tool, band, n FROM rollup_duration_all").fetchall()
    return {tuple(row[:4]): row[4] for row in rows}
