"""/tools/ and /tools/<name>/: figures per tool, and a tool's calls linking to their messages."""

from __future__ import annotations

import re
from urllib.parse import parse_qs, urlsplit

import pytest

from sessions_admin import clock, sqlhelpers
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.rollups import calls
from sessions_admin.ourdata.rollups.schema import HEAD_CHARS
from tests import rollupdata as R
from tests.conftest import STORE_DB


def main(html: str) -> str:
    """The page's content without its clock-dependent times."""
    body = html[html.index("<main") : html.index("</main>")]
    return re.sub(r"<time.*?</time>", "", body)


def hrefs(html: str) -> list[str]:
    return [h.replace("&amp;", "&") for h in re.findall(r'href="([^"]*)"', html)]


def call_links(html: str) -> list[str]:
    """The message each call row of a tool's page links to, top to bottom."""
    return re.findall(r'<td class="time"><a href="([^"]+)"', html)


@STORE_DB
def test_the_tools_page_lists_every_tool_with_its_figures(synced, staff_client):
    html = staff_client.get("/tools/?window=all").content.decode()
    for tool in R.TOOLS:
        assert f'href="/tools/{tool}/"' in html
    assert html.count('class="sparkline"') == len(R.TOOLS)
    assert "p95" in html and "As of" in html


@STORE_DB
def test_the_window_and_filters_stay_in_shareable_urls(synced, staff_client):
    html = staff_client.get("/tools/?window=7d&target=ops.pager").content.decode()
    # The sort links keep the window too; these are the window links.
    windows = [h for h in hrefs(html) if "window=" in h and h.startswith("?") and "sort=" not in h]
    assert sorted(parse_qs(urlsplit(h).query)["window"][0] for h in windows) == [
        "24h",
        "30d",
        "all",
    ]
    assert all(parse_qs(urlsplit(h).query)["target"] == ["ops.pager"] for h in windows)
    tool_links = [h for h in hrefs(html) if h.startswith("/tools/") and h != "/tools/"]
    assert tool_links and all("target=ops.pager" in h for h in tool_links)
    # The same URL gives the same page: nothing depends on a session or cookie.
    again = staff_client.get("/tools/?window=7d&target=ops.pager").content.decode()
    assert main(again) == main(html)


@STORE_DB
def test_a_filter_change_by_htmx_gets_only_the_table(synced, staff_client):
    response = staff_client.get(
        "/tools/?window=all", headers={"HX-Request": "true", "HX-Target": "tool-table"}
    )
    html = response.content.decode()
    assert html.lstrip().startswith('<div id="tool-table">') and "<html" not in html


@STORE_DB
def test_a_tools_failing_calls_link_to_their_message_permalinks(synced, staff_client):
    tool = "sql.query"
    html = staff_client.get(f"/tools/{tool}/?errors=1").content.decode()
    links = {h for h in hrefs(html) if "?at=" in h}
    failing = {
        (sid, mid)
        for sid, mid in synced.execute(
            "SELECT session_id, id FROM session_messages WHERE tool_name = ? AND "
            "json_valid(tool_result) AND (json_extract(tool_result, '$.ok') = 0 "
            "OR json_extract(tool_result, '$.success') = 0 "
            "OR coalesce(json_extract(tool_result, '$.error'), '') != '')",
            (tool,),
        )
    }
    assert failing and len(links) == len(failing)
    for link in links:
        parts = urlsplit(link)
        mid = int(parse_qs(parts.query)["at"][0])
        assert parts.fragment == f"message-{mid}"
        sid = parts.path.removeprefix("/sessions/").removesuffix("/")
        assert (sid, mid) in failing
        page = staff_client.get(link)
        assert page.status_code == 200 and f'id="message-{mid}"' in page.content.decode()


@STORE_DB
def test_a_tools_calls_come_in_keyset_pages(synced, staff_client, monkeypatch):
    monkeypatch.setattr(calls, "PAGE_SIZE", 3)
    first = staff_client.get("/tools/fs.read/").content.decode()
    more = [h for h in hrefs(first) if "cursor=" in h]
    assert len(more) == 1
    second = staff_client.get("/tools/fs.read/" + more[0], headers={"HX-Request": "true"})
    assert second.status_code == 200 and "<html" not in second.content.decode()
    # Three calls a page; the next page goes on with three others.
    first_calls, second_calls = call_links(first), call_links(second.content.decode())
    assert len(first_calls) == 3 and len(second_calls) == 3
    assert not set(first_calls) & set(second_calls)


@STORE_DB
@pytest.mark.parametrize(
    "query",
    ["?since=yesterday", "?until=2026-13-45", "?cursor=abc", "?cursor=1_x", "?target=" + "x" * 600],
)
def test_a_tools_page_answers_bad_input_with_a_sentence(synced, staff_client, query):
    response = staff_client.get("/tools/fs.read/" + query)
    assert response.status_code == 400


@STORE_DB
def test_an_unknown_tool_says_so(synced, staff_client):
    response = staff_client.get("/tools/no.such%2Ftool/")
    assert response.status_code == 200
    assert "No call of a tool named" in response.content.decode()


@STORE_DB
def test_the_tool_pages_reject_post_and_outsiders(synced, staff_client, nonstaff_client):
    assert staff_client.post("/tools/").status_code == 405
    assert staff_client.post("/tools/fs.read/").status_code == 405
    assert nonstaff_client.get("/tools/").status_code == 403
    assert nonstaff_client.get("/tools/fs.read/").status_code == 403


def tool_links(html: str) -> list[str]:
    return [h for h in hrefs(html) if h.startswith("/tools/") and urlsplit(h).path != "/tools/"]


@STORE_DB
@pytest.mark.parametrize("window", ["24h", "7d", "30d", "all"])
@pytest.mark.parametrize("page", ["/", "/tools/"])
def test_tool_and_error_links_keep_the_window_as_its_start(synced, staff_client, page, window):
    from sessions_admin.ourdata.rollups.figures import parse_window
    from sessions_admin.views import figures

    start = parse_window(window, clock.now_ms()).start_ms
    links = tool_links(staff_client.get(page, {"window": window}).content.decode())
    assert links and any("errors=1" in link for link in links)
    for link in links:
        since = parse_qs(urlsplit(link).query).get("since")
        assert since == (None if start is None else [figures.iso_utc(start)])


@STORE_DB
def test_a_tools_page_says_which_calls_it_shows_and_how_many(synced, staff_client):
    tool = "sql.query"
    (failed,) = synced.execute(
        "SELECT count(*) FROM session_messages WHERE tool_name = ? AND json_valid(tool_result) "
        "AND (json_extract(tool_result, '$.ok') = 0 OR json_extract(tool_result, '$.success') = 0 "
        "OR coalesce(json_extract(tool_result, '$.error'), '') != '')",
        (tool,),
    )[0]
    html = main(staff_client.get(f"/tools/{tool}/?errors=1").content.decode())
    assert f"<strong>{failed}</strong> failed call{'s' if failed != 1 else ''}" in html
    assert "of all time" in html
    since = main(staff_client.get(f"/tools/{tool}/?since=2020-01-01T00:00").content.decode())
    assert "since" in since and "of all time" not in since


@STORE_DB
def test_a_tools_count_stops_at_its_cap(synced, staff_client, monkeypatch):
    monkeypatch.setattr(sqlhelpers, "COUNT_CAP", 2)
    html = staff_client.get("/tools/fs.read/").content.decode()
    assert "<strong>2 or more</strong> calls" in html


@STORE_DB
def test_a_tools_calls_show_relative_times_and_the_lists_principal_dash(synced, staff_client):
    html = staff_client.get("/tools/fs.read/").content.decode()
    cells = re.findall(r'<td class="time"><a [^>]*><time [^>]*title="[^"]+">([^<]+)</time>', html)
    assert cells and all(c.endswith("ago") or c == "just now" for c in cells)
    assert "<td>–</td>" not in html and '<td class="principal"><span class="muted">—</span>' in html


@STORE_DB
def test_a_tools_page_filtered_by_target_does_not_count(synced, staff_client):
    html = main(staff_client.get("/tools/fs.read/?target=ops.pager").content.decode())
    assert "Calls\n  of all time, target ops.pager." in html and " or more</strong>" not in html


@STORE_DB
def test_a_tool_whose_name_holds_a_newline_links_to_its_own_page(
    store, settings, tmp_path, staff_client
):
    settings.VAR_DIR = tmp_path / "var"
    store.add_message(store.add_session("sess_nl"), "tool", "x", tool_name="a\nb")
    sync.sync_once()
    for page in ("/?window=all", "/tools/?window=all"):
        response = staff_client.get(page)
        assert response.status_code == 200
        assert "/tools/a%0Ab/" in response.content.decode()
    assert staff_client.get("/tools/a%0Ab/").status_code == 200


@STORE_DB
def test_a_tools_calls_show_their_args_and_result_in_short(store, settings, tmp_path, staff_client):
    settings.VAR_DIR = tmp_path / "var"
    sid = store.add_session("sess_heads")
    long_args = '{"path": "/srv/' + "a" * 300 + '"}'
    store.add_message(
        sid, "assistant", "", tool_name="fs.read", tool_call_id="c1", tool_args=long_args
    )
    store.add_message(
        sid, "tool", "", tool_name="fs.read", tool_call_id="c1", tool_result='{"ok": false}'
    )
    # A call whose arguments come only with its result row.
    store.add_message(sid, "assistant", "", tool_name="fs.read", tool_call_id="c2")
    store.add_message(
        sid,
        "tool",
        "",
        tool_name="fs.read",
        tool_call_id="c2",
        tool_args='{"path": "/etc/b"}',
        tool_result='{"ok": true, "lines": 3}',
    )
    sync.sync_once()
    html = staff_client.get("/tools/fs.read/").content.decode()
    heads = re.findall(r'<td class="heads"><code>(.*?)</code> → <code>(.*?)</code>', html)
    assert sorted(heads) == sorted(
        [
            # Cut to HEAD_CHARS with "…" (after masking, which read more of it).
            ((long_args[: HEAD_CHARS - 1] + "…").replace('"', "&quot;"), "{&quot;ok&quot;: false}"),
            (
                "{&quot;path&quot;: &quot;/etc/b&quot;}",
                "{&quot;ok&quot;: true, &quot;lines&quot;: 3}",
            ),
        ]
    )


@STORE_DB
def test_a_tools_calls_are_listed_without_their_heads_when_the_store_is_gone(synced, staff_client):
    from django.db import connections

    connections["agents"].close()
    synced.path.rename(synced.path.with_suffix(".away"))
    try:
        response = staff_client.get("/tools/fs.read/")
    finally:
        connections["agents"].close()
        synced.path.with_suffix(".away").rename(synced.path)
    html = response.content.decode()
    assert response.status_code == 200 and call_links(html)
    assert '<td class="heads"><code>–</code> → <code>–</code></td>' in html
