"""The rollups equal the SQL they summarise, through new messages, deletes and batch edges."""

from __future__ import annotations

from random import Random

import pytest

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.rollups import ROLLUPS
from sessions_admin.ourdata.rollups.calls import CallFilter, tool_calls
from sessions_admin.ourdata.rollups.figures import Scope, Window, by_target, tool_rows
from sessions_admin.ourdata.rollups.listener import call_digest
from sessions_admin.ourdata.rollups.schema import DAY_MS
from sessions_admin.ourdata.sync import LISTENERS
from tests import rollupdata as R
from tests.rollupdata import assert_rollups_match, band_counts, tool_cells


@pytest.fixture
def side(settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    conn = sidedb.connect()
    ROLLUPS.create(conn)
    yield conn
    conn.close()


def sync(side, store, after_id: int = 0, batch: int = 17) -> int:
    """Feed new messages in small batches, so calls and results straddle batch edges."""
    messages = R.feed(store, after_id)
    for start in range(0, len(messages), batch):
        chunk = messages[start : start + batch]
        with side:
            ROLLUPS.add_messages(side, chunk)
            # As the runner does: the touched sessions' rows, after their messages.
            ROLLUPS.update_sessions(side, R.sessions(store, [m.session_id for m in chunk]))
    with side:
        ROLLUPS.update_sessions(side, R.sessions(store))  # the walk finds every session
    return messages[-1].id if messages else after_id


def test_an_older_side_database_gains_new_tables_filled_from_its_calls(store, side):
    R.fill_store(store, Random(8), sessions=6)
    sync(side, store)
    expected = band_counts(side)
    for table in (
        "rollup_duration_hour",
        "rollup_duration_all",
        "rollup_last_day",
        "rollup_principal",
    ):
        side.execute(f"DROP TABLE {table}")
    ROLLUPS.create(side)
    assert band_counts(side) == expected
    assert_rollups_match(side, store)


def test_a_sync_pass_feeds_the_search_index_and_the_rollups_in_that_order():
    # Registered by the app's ready(): the search index first, then the rollups, then
    # the fleet's notes of what changed (which read neither).
    assert [type(listener).__name__ for listener in LISTENERS] == [
        "SearchIndex",
        "RollupListener",
        "FleetDirty",
    ]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_cell_equals_the_sql_it_summarises(store, side, seed):
    R.fill_store(store, Random(seed))
    sync(side, store, batch=[5, 17, 1000][seed - 1])
    assert_rollups_match(side, store)


def test_rollups_follow_new_messages_after_a_sync(store, side):
    rng = Random(7)
    R.fill_store(store, rng, sessions=5)
    last = sync(side, store)
    sid = store.execute("SELECT id FROM sessions LIMIT 1")[0][0]
    # A result arriving in a later sync for a call seen earlier still counts once.
    call = store.add_message(
        sid, "assistant", "", tool_name="fs.read", tool_call_id="late", ts=R.BASE_MS
    )
    store.add_message(
        sid, "tool", "", tool_name="fs.read", tool_call_id="late",
        tool_result={"ok": False}, tool_duration_ms=999_999, ts=R.BASE_MS + 5,
    )  # fmt: skip
    sync(side, store, after_id=last, batch=1)
    assert_rollups_match(side, store)
    (row,) = side.execute(
        "SELECT failed, duration_ms, first_id FROM rollup_call WHERE call_id = ?",
        [call_digest(sid, "c:late")],
    ).fetchall()
    assert row == (1, 999_999, call)


def test_forgetting_sessions_subtracts_exactly_what_they_brought(store, side):
    R.fill_store(store, Random(11), sessions=10)
    sync(side, store)
    gone = [row[0] for row in store.execute("SELECT id FROM sessions ORDER BY id LIMIT 4")]
    with store.connect() as conn:
        for sid in gone:
            conn.execute("DELETE FROM session_messages WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    with side:
        ROLLUPS.forget_sessions(side, gone)
    assert_rollups_match(side, store)
    assert side.execute(
        "SELECT count(*) FROM rollup_session WHERE session_id IN (?, ?, ?, ?)", gone
    ).fetchone() == (0,)
    # No call is left behind under a session key whose row went.
    assert side.execute(
        "SELECT count(*) FROM rollup_call WHERE session NOT IN (SELECT key FROM rollup_session)"
    ).fetchone() == (0,)


def test_forgetting_every_session_leaves_empty_tables(store, side):
    R.fill_store(store, Random(5), sessions=4)
    sync(side, store)
    every = [row[0] for row in store.execute("SELECT id FROM sessions")]
    with side:
        ROLLUPS.forget_sessions(side, every)
    for table in (
        "rollup_tool_hour",
        "rollup_tool_day",
        "rollup_activity_day",
        "rollup_principal_day",
        "rollup_call",
        # A tool's name goes with the last call that had it.
        "rollup_tools",
    ):
        assert side.execute(f"SELECT count(*) FROM {table}").fetchone() == (0,)


def test_forgetting_a_message_drops_its_call(store, side):
    sid = store.add_session()
    mid = store.add_message(
        sid, "tool", "", tool_name="t", tool_result={"ok": False}, tool_duration_ms=5
    )
    sync(side, store)
    assert tool_cells(side, "hour") != {}  # the call was counted
    with side:
        ROLLUPS.forget_messages(side, [mid])
    assert tool_cells(side, "hour") == {}
    assert side.execute("SELECT count(*) FROM rollup_tools").fetchone() == (0,)


def test_reset_forgets_everything(store, side):
    R.fill_store(store, Random(3), sessions=3)
    sync(side, store)
    with side:
        ROLLUPS.reset(side)
    assert side.execute("SELECT count(*) FROM rollup_call").fetchone() == (0,)
    assert side.execute("SELECT value FROM rollup_meta").fetchone()[0] > 0


def _window(key: str, buckets: int | None, grain: str, now_ms: int) -> Window:
    return Window(key, key, grain, buckets, now_ms)


@pytest.mark.parametrize(
    ("grain", "buckets"), [("day", None), ("day", 1), ("day", 2), ("hour", 24)]
)
def test_calls_errors_and_percentiles_equal_the_sql(store, side, grain, buckets):
    R.fill_store(store, Random(21), sessions=14, per=20)
    sync(side, store)
    now = R.BASE_MS + 3 * DAY_MS
    window = _window("w", buckets, grain, now)
    start = window.start_ms
    calls = [c for c in R.reference_calls(store) if start is None or c[1] >= start]
    for scope in (Scope(), Scope(target="ops.pager"), Scope(target="ops.pager", profile="edit")):
        rows = {row.tool: row for row in tool_rows(side, window, scope)}
        for tool in R.TOOLS:
            mine = [
                c for c in calls
                if c[0] == tool and scope.target in (None, c[2]) and scope.profile in (None, c[3])
            ]  # fmt: skip
            if not mine:
                assert tool not in rows
                continue
            durations = [c[6] for c in mine if c[6] is not None]
            row = rows[tool]
            assert (row.calls, row.errors, row.timed) == (
                len(mine),
                sum(c[5] for c in mine),
                len(durations),
            )
            assert row.p50_ms == R.nearest_rank_percentile(durations, 0.50)
            assert row.p95_ms == R.nearest_rank_percentile(durations, 0.95)
            assert row.max_ms == (max(durations) if durations else None)


def test_sessions_and_messages_by_target_equal_the_sql(store, side):
    R.fill_store(store, Random(4), sessions=15)
    sync(side, store)
    now = R.BASE_MS + 3 * DAY_MS
    for window in (_window("all", None, "day", now), _window("2d", 2, "day", now)):
        since = window.start_ms if window.start_ms is not None else -1
        expected = {
            (t, p): (s, n)
            for t, p, s, n in store.execute(
                "SELECT s.target_key, s.profile_key, count(DISTINCT s.id), count(*) "
                "FROM session_messages m JOIN sessions s ON s.id = m.session_id "
                "WHERE m.ts >= ? GROUP BY 1, 2",
                (since,),
            )
        }
        got = {(t.target, p): v for t in by_target(side, window) for p, v in t.profiles.items()}
        assert got == expected


def test_a_tools_calls_page_newest_first_across_sessions_in_keyset_pages(store, side):
    R.fill_store(store, Random(9), sessions=10, per=20)
    sync(side, store)
    expected = sorted(
        ((c[1], c[5]) for c in R.reference_calls(store) if c[0] == "sql.query"), reverse=True
    )
    seen, cursor = [], None
    while True:
        page = tool_calls(side, CallFilter("sql.query"), cursor, limit=7)
        seen += [(row.ts, int(row.failed)) for row in page.rows]
        if page.next_cursor is None:
            break
        cursor = tuple(int(x) for x in page.next_cursor.split("_"))
    assert [ts for ts, _ in seen] == [ts for ts, _ in expected]
    failing = tool_calls(side, CallFilter("sql.query", errors=True), limit=1000).rows
    assert len(failing) == sum(f for _, f in expected) and all(r.failed for r in failing)
    slow = tool_calls(side, CallFilter("sql.query", slow_ms=2000), limit=1000).rows
    assert all(r.duration_ms >= 2000 for r in slow)
