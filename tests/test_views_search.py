"""The search page: every transcript, filters in the URL, grouped results, safe snippets."""

from __future__ import annotations

import re
from urllib.parse import urlencode

import pytest

from sessions_admin.ids import session_url
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index import search as index_search
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def url(**params) -> str:
    return "/search/?" + urlencode(params)


@pytest.fixture
def indexed(store, var_dir):
    for number in range(5):
        sid = store.add_session(f"sess_{number}", title=f"plan {number}", principal="user:alice")
        store.add_message(sid, "user", f"please look at the wombat timeout {number}")
        store.add_message(
            sid, "tool", "ok", tool_name="sql.query", tool_args={"q": "select wombat"}
        )
    sync.sync_once()
    return store


@STORE_DB
def test_it_lists_hits_grouped_by_session_newest_first_with_permalinks(indexed, staff_client):
    response = staff_client.get(url(q="WOMBAT timeout"))
    assert response.status_code == 200
    body = response.content.decode()
    order = [body.index(f'href="{session_url(f"sess_{n}")}"') for n in (4, 3, 2, 1, 0)]
    assert order == sorted(order)
    mid = indexed.execute("SELECT id FROM session_messages WHERE content LIKE '%timeout 3'")[0][0]
    assert f'href="{session_url("sess_3", at=mid)}#message-{mid}"' in body
    assert "<mark>wombat timeout</mark>" in body
    assert "Indexed up to" in body and "nothing newer to index" in body


@STORE_DB
def test_filters_in_the_url_narrow_the_hits(indexed, staff_client):
    body = staff_client.get(url(q="wombat", role="tool", tool="sql.query")).content.decode()
    assert "select <mark>wombat</mark>" in body and "<mark>wombat</mark> timeout" not in body
    body = staff_client.get(url(q="wombat", principal="user:bob")).content.decode()
    assert "No message contains" in body
    since = "2099-01-01"
    assert "No message contains" in staff_client.get(url(q="wombat", since=since)).content.decode()


@STORE_DB
def test_more_pages_continue_with_older_sessions(indexed, staff_client, monkeypatch):
    monkeypatch.setattr(index_search, "PAGE_SESSIONS", 2)
    first = staff_client.get(url(q="wombat timeout")).content.decode()
    assert "More sessions" in first and "sess_4" in first and "sess_2" not in first
    before = first.split("before=")[1].split('"')[0]
    more = staff_client.get(
        url(q="wombat timeout", before=before), headers={"HX-Request": "true"}
    ).content.decode()
    assert "<html" not in more and "sess_2" in more and "sess_4" not in more


@STORE_DB
def test_the_htmx_form_gets_only_the_results_region(indexed, staff_client):
    response = staff_client.get(
        url(q="wombat"), headers={"HX-Request": "true", "HX-Target": "results"}
    )
    body = response.content.decode()
    assert response.status_code == 200 and "<form" not in body and "search-group" in body


@STORE_DB
def test_markup_in_messages_and_titles_is_escaped_in_snippets(store, var_dir, staff_client):
    evil = '<script>alert("x")</script><img src=x onerror=alert(1)>'
    sid = store.add_session("sess_evil", title=evil, principal=evil)
    store.add_message(sid, "user", f"before {evil} after")
    sync.sync_once()
    body = staff_client.get(url(q="script>")).content.decode()
    assert "<script>alert" not in body and "<img src=x" not in body
    assert "&lt;<mark>script&gt;</mark>alert" in body


@STORE_DB
def test_without_an_index_it_scans_the_newest_messages_and_warns(store, var_dir, staff_client):
    sid = store.add_session("sess_a")
    store.add_message(sid, "user", "a wombat")
    body = staff_client.get(url(q="wombat")).content.decode()
    assert "No search index yet" in body and "<mark>wombat</mark>" in body


@STORE_DB
def test_a_short_query_says_it_scanned_only_the_newest_messages(indexed, staff_client):
    body = staff_client.get(url(q="wo")).content.decode()
    assert "one or two characters" in body and "scanned only the newest 10 messages" in body
    assert "<mark>wo</mark>" in body


@STORE_DB
def test_the_freshness_line_counts_messages_not_yet_indexed(indexed, staff_client):
    for _ in range(3):
        indexed.add_message("sess_0", "user", "fresh wombat", ts=BASE_MS)
    body = staff_client.get(url(q="fresh wombat")).content.decode()
    assert "3 newer messages not yet indexed" in body
    assert body.count("<mark>fresh wombat</mark>") == 3


@STORE_DB
def test_an_exact_session_id_opens_the_session(indexed, staff_client):
    response = staff_client.get(url(q=" sess_3 "))
    assert response.status_code == 302 and response["Location"] == session_url("sess_3")


@STORE_DB
def test_session_level_hits_come_from_titles_and_principals(indexed, staff_client):
    body = staff_client.get(url(q="alice")).content.decode()
    assert "Sessions whose title, principal or id match" in body


@STORE_DB
def test_the_empty_form_explains_what_is_searched(store, var_dir, staff_client):
    body = staff_client.get("/search/").content.decode()
    assert "every message" in body


@pytest.mark.parametrize(
    "params",
    [
        {"q": "x\x00y"},
        {"q": "wombat", "since": "yesterday"},
        {"q": "wombat", "until": "2026-13-45"},
        {"q": "wombat", "before": "abc"},
        {"q": "w" * 1001},
    ],
)
@STORE_DB
def test_bad_input_gets_a_clear_400(store, var_dir, staff_client, params):
    response = staff_client.get(url(**params))
    assert response.status_code == 400
    assert b"Traceback" not in response.content
    bad = list(params)[-1]  # the parameter each case spoils
    assert re.search(rf'class="error-message">[^<]*\b{bad}\b', response.content.decode())


@STORE_DB
def test_it_rejects_post(store, var_dir, staff_client):
    assert staff_client.post("/search/", {"q": "x"}).status_code == 405


@STORE_DB
def test_it_requires_staff(store, var_dir, client, nonstaff_client):
    assert client.get(url(q="x")).status_code == 302
    assert nonstaff_client.get(url(q="x")).status_code == 403


@STORE_DB
def test_the_header_box_submits_to_the_search(store, var_dir, staff_client):
    body = staff_client.get("/sessions/").content.decode()
    assert 'action="/search/"' in body


@STORE_DB
def test_a_damaged_side_database_falls_back_to_the_scan(store, var_dir, staff_client):
    sid = store.add_session("sess_a")
    store.add_message(sid, "user", "a wombat")
    (var_dir / "side.sqlite3").write_bytes(b"this is not a database" * 100)
    body = staff_client.get(url(q="wombat")).content.decode()
    assert "<mark>wombat</mark>" in body
    assert staff_client.get("/sessions/?principal=user:alice").status_code == 200
