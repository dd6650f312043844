"""``/failures/``: every tool's failures grouped by tool and what failed, equal to a
brute-force reading of the store; a tool page's failures chart."""

from __future__ import annotations

import sqlite3
from collections import defaultdict

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sessions_admin import clock
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.rollups import failures, figures
from sessions_admin.ourdata.rollups.errors import what_failed
from sessions_admin.ourdata.rollups.figures import parse_window
from sessions_admin.store.toolcalls import reports_error
from tests.conftest import STORE_DB

HOUR = 3_600_000


def _fill(store, calls):
    """``calls``: (session, tool, result, ts) each a call and its result in one row."""
    with store.connect() as conn:
        known = {row[0] for row in conn.execute("SELECT id FROM sessions")}
    for n, (sid, tool, result, ts) in enumerate(calls):
        if sid not in known:
            known.add(sid)
            store.add_session(sid)
        store.add_message(
            sid, "tool", "", ts=ts, tool_name=tool, tool_call_id=f"c{n}", tool_result=result
        )
    sync.sync_once()


def brute_force(store_path) -> dict[tuple[str, str], tuple[int, int, int, int]]:
    """(tool, what) -> (calls, sessions, first ts, last ts) straight from the store."""
    conn = sqlite3.connect(store_path)
    found: dict[tuple[str, str], list] = defaultdict(list)
    for sid, tool, result, ts in conn.execute(
        "SELECT session_id, tool_name, tool_result, ts FROM session_messages"
    ):
        if reports_error(result):
            found[(tool, what_failed(result[:160]))].append((sid, ts))
    conn.close()
    return {
        key: (len(v), len({s for s, _ in v}), min(t for _, t in v), max(t for _, t in v))
        for key, v in found.items()
    }


def _groups(window="all", scope=failures.ANY_PLACE):
    with figures.reading() as side:
        return failures.failure_groups(side, parse_window(window, clock.now_ms()), scope)


@STORE_DB
def test_failures_group_across_tools_with_counts_sessions_and_times(store, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    now = clock.now_ms()
    _fill(
        store,
        [
            ("s1", "fetch", '{"error": "timeout after 5 s"}', now - 3 * HOUR),
            ("s2", "fetch", '{"error": "timeout after 9 s"}', now - HOUR),
            ("s2", "fetch", '{"ok": true}', now - HOUR),
            ("s3", "write", '{"error": "timeout after 5 s"}', now - 2 * HOUR),
            ("s3", "write", '{"error": {"code": "EACCES", "message": "denied"}}', now - 40 * HOUR),
        ],
    )
    found = _groups("24h")
    assert [(g.tool, g.what, g.count, g.sessions) for g in found.groups] == [
        ("fetch", "timeout after <n> s", 2, 2),
        ("write", "timeout after <n> s", 1, 1),
    ]  # the same text in two tools is two groups; EACCES is outside the window
    fetch = found.groups[0]
    assert (fetch.first_ts, fetch.last_ts) == (now - 3 * HOUR, now - HOUR)
    assert len(found.buckets) == 24 and sum(fetch.by_bucket.values()) == 2
    assert not found.cut and found.scanned == 3
    assert [g.what for g in _groups("all").groups][-1] == "EACCES: denied"
    cut = failures.failure_groups
    with figures.reading() as side:
        small = cut(side, parse_window("all", now), scan=2)
    assert small.cut and small.scanned == 2 and small.groups[0].last_ts == now - HOUR


@STORE_DB
@hsettings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    calls=st.lists(
        st.tuples(
            st.sampled_from(["a", "b", "c"]),
            st.sampled_from(["t1", "t2", "t 3/x"]),
            st.sampled_from(
                [
                    '{"ok": true}',
                    '{"error": "E1 after 5 ms"}',
                    '{"error": "E1 after 77 ms"}',
                    '{"error": {"code": "X", "message": "m"}}',
                    '{"ok": false, "error": "boom"}',
                    "plain text result",
                ]
            ),
            st.integers(min_value=0, max_value=10**12),
        ),
        max_size=25,
    )
)
def test_the_groups_equal_a_brute_force_reading_of_the_store(store, settings, tmp_path, calls):
    settings.VAR_DIR = tmp_path / "var"
    store.clear()  # the runtime's cascade, between two syncs
    _fill(store, calls)
    found = _groups("all")
    got = {(g.tool, g.what): (g.count, g.sessions, g.first_ts, g.last_ts) for g in found.groups}
    assert got == brute_force(store.path)
    assert found.scanned == sum(v[0] for v in got.values())


@STORE_DB
def test_the_failures_page_links_each_group_to_its_calls(store, settings, tmp_path, staff_client):
    settings.VAR_DIR = tmp_path / "var"
    now = clock.now_ms()
    _fill(store, [("s1", "fetch", '{"error": "timeout after 5 s"}', now - HOUR)])
    page = staff_client.get("/failures/").content.decode()
    assert "timeout after &lt;n&gt; s" in page
    assert "/tools/fetch/?errors=1&amp;what=timeout+after+%3Cn%3E+s" in page
    assert 'aria-current="page">Failures' in page
    calls_page = staff_client.get("/tools/fetch/?errors=1&what=timeout+after+%3Cn%3E+s")
    assert calls_page.status_code == 200 and b"s1" in calls_page.content
    assert staff_client.get("/failures/?window=7d&target=nope").status_code == 200
    assert staff_client.get("/failures/?window=year").status_code == 400


@STORE_DB
def test_the_failures_page_before_any_sync_says_so(store, staff_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    response = staff_client.get("/failures/")
    assert response.status_code == 200 and b"sync_index" in response.content


@STORE_DB
def test_the_session_list_filters_sessions_with_failed_calls(
    store, settings, tmp_path, staff_client
):
    settings.VAR_DIR = tmp_path / "var"
    now = clock.now_ms()
    _fill(
        store,
        [
            ("bad-1", "fetch", '{"error": "x"}', now - HOUR),
            ("fine", "fetch", '{"ok": true}', now - HOUR),
            ("bad-2", "write", '{"ok": false, "error": "y"}', now - 2 * HOUR),
        ],
    )
    store.add_session("quiet")
    page = staff_client.get("/sessions/?failed=1").content.decode()
    assert "bad-1" in page and "bad-2" in page and "fine" not in page and "quiet" not in page
    assert "with failed tool calls" in page and "count=1" in page  # counted after the rows
    whole = staff_client.get("/sessions/?failed=1&count=1", HTTP_HX_REQUEST="true")
    assert b"2 sessions" in whole.content
    narrowed = staff_client.get("/sessions/?failed=1&q=2").content.decode()
    assert "bad-2" in narrowed and "bad-1" not in narrowed
    counted = staff_client.get("/sessions/?failed=1&q=bad&count=1", HTTP_HX_REQUEST="true")
    assert b"2 sessions" in counted.content
    assert staff_client.get("/sessions/?failed=yes").status_code == 400
    with store.connect() as conn:  # deleted as the runtime does: gone from the list at once
        conn.execute("DELETE FROM session_messages WHERE session_id = 'bad-1'")
        conn.execute("DELETE FROM sessions WHERE id = 'bad-1'")
    assert "bad-1" not in staff_client.get("/sessions/?failed=1").content.decode()


@STORE_DB
def test_the_failed_filter_before_any_sync_is_a_clear_400(store, staff_client, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    response = staff_client.get("/sessions/?failed=1")
    assert response.status_code == 400 and b"side index" in response.content


@STORE_DB
def test_search_keeps_to_sessions_with_failed_calls(store, settings, tmp_path, staff_client):
    settings.VAR_DIR = tmp_path / "var"
    now = clock.now_ms()
    for sid, result in (("bad-1", '{"error": "x"}'), ("fine-1", '{"ok": true}')):
        store.add_session(sid)
        store.add_message(sid, "user", "the word kumquat", ts=now - HOUR)
        store.add_message(
            sid, "tool", "", ts=now - HOUR, tool_name="t", tool_call_id="c", tool_result=result
        )
    sync.sync_once()
    every = staff_client.get("/search/?q=kumquat").content.decode()
    assert "bad-1" in every and "fine-1" in every
    failed = staff_client.get("/search/?q=kumquat&failed=1").content.decode()
    assert "bad-1" in failed and "fine-1" not in failed
    assert staff_client.get("/search/?q=kumquat&failed=2").status_code == 400
    # Written after the pass (read from the store, beyond the index): tested the same way.
    store.add_message("fine-1", "user", "later a kumquat again", ts=now)
    store.add_message("bad-1", "user", "later a kumquat again", ts=now)
    tail = staff_client.get("/search/?q=later+a+kumquat&failed=1").content.decode()
    assert "bad-1" in tail and "fine-1" not in tail


@STORE_DB
def test_review_these_is_offered_on_every_list_that_feeds_a_queue(
    store, settings, tmp_path, admin_client
):
    settings.VAR_DIR = tmp_path / "var"
    now = clock.now_ms()
    _fill(
        store,
        [
            ("bad-1", "fetch", '{"error": "x"}', now - HOUR),
            ("fine", "fetch", '{"ok": true}', now - HOUR),
            ("bad-2", "write", '{"ok": false, "error": "y"}', now - 2 * HOUR),
        ],
    )
    for url in (
        "/sessions/?failed=1",
        "/search/?q=bad",
        "/failures/",
        "/tools/fetch/?errors=1",
        "/principals/user%3Aalice/",
    ):
        assert b"Review these" in admin_client.get(url).content, url
    for source, expected in (
        ("/failures/?window=24h", ["bad-1", "bad-2"]),
        ("/sessions/?failed=1", ["bad-1", "bad-2"]),
    ):
        response = admin_client.post(
            "/reviews/", {"name": f"q {source}", "source": source}, follow=True
        )
        assert response.status_code == 200, response.content[:300]
        page = response.content.decode()
        assert all(sid in page for sid in expected) and "fine" not in page, source


@STORE_DB
@hsettings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    before=st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=20),
    after=st.lists(st.tuples(st.integers(0, 7), st.booleans()), max_size=8),
    sort=st.sampled_from(["-last_active", "last_active", "-created_at", "-turn_count"]),
    limit=st.integers(1, 4),
)
def test_the_failed_list_from_the_index_equals_the_exact_reading(
    store, settings, tmp_path, before, after, sort, limit
):
    """Calls before a sync and after it (the runtime appending meanwhile): every page the
    side index walks equals the exact page read among the rollups' failed sessions."""
    from sessions_admin.lists.sessions import failed_session_ids, index_page, page_among
    from sessions_admin.store.queries import SessionFilter

    settings.VAR_DIR = tmp_path / "var"
    store.clear()
    now = clock.now_ms()

    def add(calls, n0):
        with store.connect() as conn:
            known = {row[0] for row in conn.execute("SELECT id FROM sessions")}
        for n, (which, failed) in enumerate(calls):
            sid = f"s{which}"
            if sid not in known:
                known.add(sid)
                store.add_session(sid, created_at=now - which * HOUR, last_active=now - HOUR)
            result = '{"error": "x"}' if failed else '{"ok": true}'
            store.add_message(
                sid, "tool", "", ts=now + n0 + n, tool_name="t", tool_call_id=f"c{n0 + n}",
                tool_result=result,
            )  # fmt: skip

    add(before, 0)
    sync.sync_once()
    add(after, 1000)  # newer than the pass: read from the store, kept if the rollups say so
    filter_ = SessionFilter()
    cursor = None
    for _ in range(10):
        walked = index_page(filter_, sort, cursor, limit=limit, failed=True)
        assert walked is not None
        exact = page_among(
            failed_session_ids(), filter_, sort, cursor, strategy="failed", limit=limit
        )
        assert [r.id for r in walked.rows] == [r.id for r in exact.rows]
        if exact.next_cursor is None:
            break
        cursor = exact.next_cursor


@STORE_DB
def test_the_list_and_failures_refresh_themselves_on_a_toggle(
    store, settings, tmp_path, staff_client
):
    settings.VAR_DIR = tmp_path / "var"
    _fill(store, [("bad-1", "fetch", '{"error": "x"}', clock.now_ms())])
    assert 'hx-trigger="every 10s"' not in staff_client.get("/sessions/").content.decode()
    listed = staff_client.get("/sessions/?refresh=1").content.decode()
    assert 'hx-trigger="every 10s" hx-target="#results"' in listed
    again = staff_client.get(
        "/sessions/?refresh=1", HTTP_HX_REQUEST="true", HTTP_HX_TARGET="results"
    )
    assert 'hx-trigger="every 10s"' in again.content.decode()  # the refreshed part asks again
    assert "<html" not in again.content.decode()
    failures_page = staff_client.get("/failures/?refresh=1").content.decode()
    assert 'hx-trigger="every 30s"' in failures_page and "refresh=1&amp;window=7d" in failures_page
    assert staff_client.get("/failures/?refresh=2").status_code == 400
