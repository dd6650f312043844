"""The session list: filters, sorts and keyset pages return exactly what SQL returns."""

import random
import re
import sqlite3
import time
from urllib.parse import parse_qs, urlparse

import pytest

from sessions_admin.ids import session_url
from sessions_admin.store import queries
from sessions_admin.store.queries import SORTS, Cursor, SessionFilter
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

TARGETS = ["infra.deployer", "ops.pager", "system.registry"]
PROFILES = ["default", "edit", "explain"]


def fill(store, count: int = 180, seed: int = 3) -> None:
    """Sessions with many ties on last_active and turn_count, some nulls."""
    rng = random.Random(seed)
    for number in range(count):
        created = BASE_MS + rng.randrange(0, 50) * 60_000
        store.add_session(
            f"sess_{number:04d}",
            target=rng.choice(TARGETS),
            profile=rng.choice(PROFILES),
            principal=rng.choice(["user:alice", "user:bob", None]),
            title=rng.choice(["deploy rollback plan", "pager storm", None, "Billing 50% off"]),
            turn_count=rng.choice([None, 0, 1, 2, 3]),
            created_at=created,
            last_active=created + rng.randrange(0, 5) * 60_000,  # ties on purpose
        )


def reference(store, where: str = "", params: tuple = (), sort: str = "-last_active") -> list[str]:
    column, descending = SORTS[sort]
    expr = "COALESCE(turn_count, 0)" if column == "turn_count" else column
    direction = "DESC" if descending else "ASC"
    sql = f"SELECT id FROM sessions {where} ORDER BY {expr} {direction}, id {direction}"
    return [row[0] for row in store.execute(sql, params)]


def walk(session_filter: SessionFilter, sort: str, limit: int) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = queries.list_sessions(session_filter, sort, cursor, limit=limit)
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


@pytest.mark.parametrize("sort", list(SORTS))
@STORE_DB
def test_every_sort_order_pages_through_every_session_once_in_sql_order(store, sort):
    fill(store)
    assert walk(SessionFilter(), sort, limit=7) == reference(store, sort=sort)


@pytest.mark.parametrize(
    "session_filter, where, params",
    [
        (SessionFilter(target="ops.pager"), "WHERE target_key = ?", ("ops.pager",)),
        (SessionFilter(profile="edit"), "WHERE profile_key = ?", ("edit",)),
        (
            SessionFilter(target="ops.pager", profile="edit"),
            "WHERE target_key = ? AND profile_key = ?",
            ("ops.pager", "edit"),
        ),
        (SessionFilter(principal="user:bob"), "WHERE principal_id = ?", ("user:bob",)),
        (SessionFilter(q="ROLLBACK"), "WHERE title LIKE '%rollback%' OR id LIKE '%rollback%'", ()),
        (SessionFilter(q="50%"), "WHERE instr(title, '50%') > 0", ()),
        (SessionFilter(q="sess_001"), "WHERE id LIKE 'sess\\_001%' ESCAPE '\\'", ()),
        (
            SessionFilter(active_after_ms=BASE_MS + 20 * 60_000),
            "WHERE last_active >= ?",
            (BASE_MS + 20 * 60_000,),
        ),
        (
            SessionFilter(
                target="system.registry",
                principal="user:alice",
                active_before_ms=BASE_MS + 30 * 60_000,
            ),
            "WHERE target_key = ? AND principal_id = ? AND last_active < ?",
            ("system.registry", "user:alice", BASE_MS + 30 * 60_000),
        ),
    ],
)
@pytest.mark.parametrize("sort", ["-last_active", "last_active", "-turn_count"])
@STORE_DB
def test_filters_return_exactly_the_rows_sql_returns(store, session_filter, where, params, sort):
    fill(store)
    expected = reference(store, where, params, sort)
    assert expected, "the fixture should match something"
    assert walk(session_filter, sort, limit=9) == expected


@STORE_DB
def test_the_default_order_lists_the_newest_sessions_across_every_target(store, staff_client):
    fill(store)
    page = queries.list_sessions(SessionFilter(), "-last_active", limit=10)
    assert [row.id for row in page.rows] == reference(store)[:10]
    html = staff_client.get("/sessions/").content.decode()
    shown = list(dict.fromkeys(re.findall(r'href="/sessions/(sess_\d{4})/"', html)))
    assert shown == reference(store)[: queries.PAGE_SIZE]
    targets = {row[0] for row in store.execute("SELECT DISTINCT target_key FROM sessions")}
    shown_targets = {
        store.execute("SELECT target_key FROM sessions WHERE id = ?", (sid,))[0][0] for sid in shown
    }
    assert shown_targets == targets == set(TARGETS)


@STORE_DB
def test_the_list_page_shows_every_column_and_placeholders_for_nulls(store, staff_client):
    store.add_session("s1", title=None, principal=None, turn_count=None)
    html = staff_client.get("/sessions/").content.decode()
    assert "(untitled)" in html
    assert html.count('<span class="muted">—</span>') >= 2
    assert 'href="/sessions/s1/"' in html
    assert "<time datetime=" in html and "UTC" in html


@STORE_DB
def test_load_more_keeps_the_filters_and_returns_only_rows_to_htmx(store, staff_client):
    fill(store)
    first = staff_client.get("/sessions/?target=ops.pager&sort=created_at")
    more = re.search(r'href="(\?[^"]*cursor=[^"]*)"', first.content.decode()).group(1)
    query = parse_qs(urlparse(more.replace("&amp;", "&")).query)
    assert query["target"] == ["ops.pager"] and query["sort"] == ["created_at"]
    fragment = staff_client.get(
        "/sessions/" + more.replace("&amp;", "&"), headers={"HX-Request": "true"}
    )
    assert fragment.status_code == 200
    assert b"<html" not in fragment.content and b"<tr" in fragment.content
    full = staff_client.get("/sessions/" + more.replace("&amp;", "&"))
    assert b"<html" in full.content
    assert full["Vary"] and "HX-Request" in full["Vary"]


@STORE_DB
def test_filtering_with_htmx_swaps_only_the_results(store, staff_client):
    fill(store)
    response = staff_client.get(
        "/sessions/?target=ops.pager", headers={"HX-Request": "true", "HX-Target": "results"}
    )
    assert b"<html" not in response.content
    assert b"<table" in response.content and b'id="filters"' not in response.content


@STORE_DB
def test_an_exact_id_in_the_search_box_goes_straight_to_the_session(store, staff_client):
    store.add_session("a/b?c#d")
    response = staff_client.get("/sessions/", {"q": "a/b?c#d"})
    assert response.status_code == 302
    assert response["Location"] == "/sessions/a%2Fb%3Fc%23d/"


@pytest.mark.parametrize(
    "query, phrase",
    [
        ("active_after=yesterday", "active_after must be an ISO date"),
        ("active_before=2026-13-45", "active_before must be an ISO date"),
        ("sort=title", "sort must be one of"),
        ("active=2y", "active must be one of"),
        ("cursor=forged", "cursor"),
    ],
)
@STORE_DB
def test_a_malformed_parameter_gets_a_400_page_that_says_why(store, staff_client, query, phrase):
    response = staff_client.get(f"/sessions/?{query}")
    assert response.status_code == 400
    assert phrase in response.content.decode()


@STORE_DB
def test_a_cursor_from_another_sort_order_is_refused(store, staff_client):
    token = Cursor("-created_at", 1, "x").token()
    assert staff_client.get(f"/sessions/?sort=-last_active&cursor={token}").status_code == 400


@STORE_DB
def test_unknown_parameters_are_ignored(store, staff_client):
    store.add_session()
    assert staff_client.get("/sessions/?utm_source=ticket&page=9").status_code == 200


@STORE_DB
def test_markup_in_any_column_is_escaped(store, staff_client):
    evil = '<img src=x onerror="alert(1)">'
    store.add_session(evil, target=evil, profile=evil, principal=evil, title=evil)
    html = staff_client.get("/sessions/").content.decode()
    assert evil not in html
    assert "&lt;img src=x onerror=&quot;alert(1)&quot;&gt;" in html


ODD_IDS = [
    "with space",
    "a/b",
    "x?y#z",
    "100%",
    "..",
    ".",
    "../etc",
    "ünïcødé-会话",
    "a//b/",
    "sess/frames",
    "~",
    "",
]


@pytest.mark.parametrize("odd_id", ODD_IDS)
@STORE_DB
def test_every_id_the_store_can_hold_links_to_a_working_session_page(store, staff_client, odd_id):
    store.add_session(odd_id, title="odd one")
    html = staff_client.get("/sessions/").content.decode()
    url = session_url(odd_id)
    assert url.replace("&", "&amp;") in html
    response = staff_client.get(url)
    assert response.status_code == 200, url
    assert response.context["session"].id == odd_id


@STORE_DB
def test_an_id_that_looks_like_a_subpage_still_opens_its_own_page(store, staff_client):
    store.add_session("sess")
    store.add_session("sess/frames")
    assert staff_client.get(session_url("sess/frames")).context["session"].id == "sess/frames"


@STORE_DB
def test_the_empty_list_says_why_and_what_to_do(store, staff_client):
    assert b"The store holds no sessions yet" in staff_client.get("/sessions/").content
    store.add_session()
    html = staff_client.get("/sessions/?target=nowhere").content
    assert b"No sessions match these filters" in html


@STORE_DB
def test_the_count_is_capped_instead_of_counting_everything(store, monkeypatch):
    fill(store, count=30)
    assert queries.count_sessions(SessionFilter(), cap=10) == (10, True)
    assert queries.count_sessions(SessionFilter(), cap=100) == (30, False)


@STORE_DB
def test_a_query_that_runs_too_long_is_stopped_with_a_friendly_message(
    store, staff_client, settings
):
    with sqlite3.connect(store.path) as conn:
        conn.executemany(
            "INSERT INTO sessions (id, target_key, created_at, last_active, title) "
            "VALUES (?, 't', 1, ?, 'x')",
            ((f"s{n:06d}", n) for n in range(200_000)),
        )
    settings.STORE_QUERY_TIME_LIMIT_MS = 1
    response = staff_client.get("/sessions/?q=nothing-matches-this&sort=created_at")
    assert response.status_code == 422
    assert b"Narrow your filter" in response.content


@STORE_DB
def test_the_targets_overview_counts_sessions_per_target_and_profile(store, staff_client):
    fill(store)
    response = staff_client.get("/targets/")
    expected = store.execute("SELECT target_key, profile_key, COUNT(*) FROM sessions GROUP BY 1, 2")
    overview = {
        (p.target_key, p.profile_key): p.sessions
        for t in response.context["targets"]
        for p in t.profiles
    }
    assert overview == {(t, p): n for t, p, n in expected}
    assert b"?target=ops.pager&amp;profile=edit" in response.content


@STORE_DB
def test_a_count_no_index_serves_is_fetched_after_the_rows(store, staff_client):
    fill(store, count=400)
    page = staff_client.get("/sessions/?principal=user:bob")
    assert page.context["page"].count is None
    assert b'hx-trigger="load"' in page.content
    expected = store.execute("SELECT COUNT(*) FROM sessions WHERE principal_id = 'user:bob'")[0][0]
    fragment = staff_client.get(
        "/sessions/?principal=user:bob&count=1", headers={"HX-Request": "true"}
    )
    assert b"<html" not in fragment.content
    assert f"{expected} sessions match these filters".encode() in fragment.content
    without_js = staff_client.get("/sessions/?principal=user:bob&count=1")
    assert f"{expected} sessions match these filters".encode() in without_js.content


@STORE_DB
def test_a_result_that_fits_one_page_is_counted_exactly_without_another_query(store, staff_client):
    fill(store, count=40)
    page = staff_client.get("/sessions/?q=pager")
    expected = len(reference(store, "WHERE title LIKE '%pager%' OR id LIKE '%pager%'"))
    assert page.context["page"].count == expected


@STORE_DB
def test_the_undecoded_path_from_the_server_settles_an_id_that_looks_like_a_subpage(
    store, staff_client
):
    store.add_session("sess")
    store.add_session("sess/frames")
    frames_of_sess = staff_client.get("/sessions/sess/frames/", RAW_URI="/sessions/sess/frames/")
    assert frames_of_sess.status_code == 200
    assert frames_of_sess.context["session_id"] == "sess"
    page = staff_client.get("/sessions/sess/frames/", RAW_URI="/sessions/sess%2Fframes/")
    assert page.context["session"].id == "sess/frames"


@STORE_DB
def test_a_target_row_shows_its_latest_activity_as_relative_time_like_its_profiles(
    store, staff_client
):
    now = int(time.time() * 1000)
    store.add_session("sess_a", target="ops.pager", profile="edit", last_active=now - 5 * 60_000)
    store.add_session("sess_b", target="ops.pager", profile="default", last_active=now - 3_600_000)
    body = staff_client.get("/targets/").content.decode()
    target_row = body.split('class="target-row"')[1].split("</tr>")[0]
    assert "5 min ago" in target_row
    assert 'title="' in target_row  # the exact time and zone on hover


@STORE_DB
def test_list_cells_carry_the_classes_the_narrow_layout_relies_on(store, staff_client):
    store.add_session("sess_cells", title="t", principal="user:alice")
    body = staff_client.get("/sessions/").content.decode()
    row = body.split('data-session-id="sess_cells"')[1].split("</tr>")[0]
    for cls in ('class="title"', 'class="principal"', 'class="when created"', 'class="when"'):
        assert cls in row
    assert '<th scope="col" class="when created">created</th>' in body
