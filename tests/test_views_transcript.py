"""The session page: header, transcript, tool cards, paging, state, stats, values, export."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

XSS = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
HX = {"HTTP_HX_REQUEST": "true"}


def html_of(response) -> str:
    assert response.status_code == 200, response.content[:2000]
    return response.content.decode()


def assert_no_markup_from_store(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "onerror=alert(2)>" not in html.replace("onerror=alert(2)&gt;", "")


def message_ids(html: str) -> list[int]:
    return [int(m) for m in re.findall(r'<li id="message-(\d+)"', html)]


@pytest.fixture
def conversation(store):
    """A small session with a call and its result, state, and every role."""
    sid = store.add_session(
        "sess_demo",
        target="infra.deployer",
        profile="edit",
        principal="user:alice",
        title="deploy rollback plan",
        turn_count=3,
    )
    ids = {
        "user": store.add_message(sid, "user", "Roll back\n    billing  please", trace_id="tr-1"),
        "call": store.add_message(
            sid,
            "assistant",
            "I'll check.",
            tool_call_id="call_7a",
            model_id="claude-x",
            trace_id="tr-1",
            span_id="sp-2",
        ),
        "tool": store.add_message(
            sid,
            "tool",
            "",
            tool_name="registry.lookup",
            tool_call_id="call_7a",
            tool_target="system.registry",
            tool_op="lookup",
            tool_args={"path": "/srv", "limit": 20},
            tool_result={"ok": True, "rows": 3},
            tool_duration_ms=120,
            trace_id="tr-1",
            span_id="sp-3",
        ),
        "slow": store.add_message(
            sid,
            "tool",
            "",
            tool_name="sql.query",
            tool_call_id="call_9b",
            tool_op="select",
            tool_args={"q": 1},
            tool_result={"ok": False, "error": "timeout"},
            tool_duration_ms=4200,
        ),
        "system": store.add_message(sid, "system", "be brief"),
        "other": store.add_message(sid, "critic", "looks fine"),
    }
    store.add_state(sid, "snapshot", {"root": {"children": [1, 2]}})
    store.add_state(sid, "repl_state", "{broken")
    return sid, ids


# -- the page ---------------------------------------------------------------------


@STORE_DB
def test_the_header_shows_every_session_field_the_counts_and_the_actions(
    conversation, store, viewer_client
):
    sid, _ = conversation
    turns = store.execute("SELECT turn_count FROM sessions WHERE id = ?", (sid,))[0][0]
    html = html_of(viewer_client.get(session_url(sid)))
    for text in (
        "sess_demo",
        "deploy rollback plan",
        "infra.deployer",
        "edit",
        "user:alice",
        f"{turns} turns",
        "6 messages",
        "repl_state",
        "snapshot",
    ):
        assert text in html
    assert 'datetime="' in html  # created / last active
    assert session_url(sid, "frames") in html
    for fmt in ("json", "jsonl", "md"):
        assert session_url(sid, "export", format=fmt).replace("&", "&amp;") in html
    # The statistics load lazily, with a link that works without JavaScript.
    assert f'hx-get="{session_url(sid, "stats")}"' in html
    assert f'href="{session_url(sid, "stats")}"' in html


@STORE_DB
def test_every_role_is_shown_and_unknown_roles_are_neutral(conversation, viewer_client):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    for role in ("user", "assistant", "tool", "system"):
        assert f'<span class="role role-{role}">{role}</span>' in html
    assert '<span class="role role-other">critic</span>' in html
    assert message_ids(html) == sorted(ids.values())
    # The page's rows never leak into the flash area (Django's own "messages").
    assert "MessageRow(" not in html


@STORE_DB
def test_content_keeps_its_whitespace(conversation, viewer_client):
    sid, _ = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    assert '<pre class="content">Roll back\n    billing  please</pre>' in html


@STORE_DB
def test_a_tool_card_shows_name_target_op_duration_call_id_and_status(conversation, viewer_client):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    card = html.split(f'id="message-{ids["tool"]}"')[1].split("</li>")[0]
    assert '<span class="tool-name">registry.lookup</span>' in card
    assert '<span class="tool-target">system.registry</span>' in card
    assert '<span class="tool-op">lookup</span>' in card
    assert '<span class="duration">120 ms</span>' in card
    assert 'data-copy="call_7a"' in card
    assert "✓ ok" in card
    assert '<span class="j-key">&quot;limit&quot;</span>' in card
    assert '<span class="j-num">20</span>' in card
    assert "<details" in card  # args and result collapse


@STORE_DB
def test_slow_calls_and_error_results_are_marked(conversation, viewer_client, settings):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    card = html.split(f'id="message-{ids["slow"]}"')[1].split("</li>")[0]
    assert "tool-card tool-error tool-slow" in card
    assert '<span class="duration slow"' in card and "4.2 s · slow" in card
    assert "✗ error" in card and "reports an error" in card
    settings.SLOW_TOOL_CALL_MS = 10_000
    html = html_of(viewer_client.get(session_url(sid)))
    card = html.split(f'id="message-{ids["slow"]}"')[1].split("</li>")[0]
    assert "tool-slow" not in card


@STORE_DB
def test_a_call_and_its_result_are_tied_by_links_and_colour(conversation, viewer_client):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    call = html.split(f'id="message-{ids["call"]}"')[1].split("</li>")[0]
    result = html.split(f'id="message-{ids["tool"]}"')[1].split("</li>")[0]
    chip = re.search(r'class="chip (chip-\d)"', call).group(1)
    assert f'class="chip {chip}"' in result
    assert f'href="#message-{ids["tool"]}"' in call and "result ↓" in call
    assert f'href="#message-{ids["call"]}"' in result and "call ↑" in result


@STORE_DB
def test_a_result_on_the_next_page_is_linked_by_permalink(store, viewer_client):
    sid = store.add_session()
    for i in range(T.PAGE_SIZE - 1):
        store.add_message(sid, "user", f"m{i}")
    call = store.add_message(sid, "assistant", "asks", tool_call_id="c-edge")
    result = store.add_message(sid, "tool", "", tool_call_id="c-edge", tool_name="t")
    html = html_of(viewer_client.get(session_url(sid)))
    assert result not in message_ids(html)
    link = session_url(sid, at=result) + f"#message-{result}"
    assert f'href="{link.replace("&", "&amp;")}"' in html
    html = html_of(viewer_client.get(session_url(sid, after=call)))
    assert f'href="{session_url(sid, at=call)}#message-{call}"' in html


@STORE_DB
def test_model_trace_and_span_ids_are_shown_with_trace_links(conversation, viewer_client, settings):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid)))
    assert "claude-x" in html and "sp-2" in html
    assert f'href="{session_url(sid, "frames", trace="tr-1")}"' in html
    assert "trace viewer" not in html
    settings.TRACE_URL_TEMPLATE = "https://tracing.example/trace/{trace_id}"
    html = html_of(viewer_client.get(session_url(sid)))
    assert 'href="https://tracing.example/trace/tr-1"' in html


@STORE_DB
@pytest.mark.parametrize("column", ["tool_args", "tool_result"])
def test_broken_json_is_shown_raw_with_a_mark(store, viewer_client, column):
    sid = store.add_session()
    store.add_message(sid, "tool", "", tool_name="t", **{column: '{"a": <b>1'})
    html = html_of(viewer_client.get(session_url(sid)))
    assert "not valid JSON" in html
    assert '<pre class="json raw">{&quot;a&quot;: &lt;b&gt;1</pre>' in html


@STORE_DB
def test_json_that_is_not_an_object_is_shown_raw_with_a_mark(store, viewer_client):
    sid = store.add_session()
    store.add_message(sid, "tool", "", tool_name="t", tool_args='"just text"', tool_result="42")
    html = html_of(viewer_client.get(session_url(sid)))
    assert "JSON string, not an object" in html and "JSON number, not an object" in html
    assert '<pre class="json raw">42</pre>' in html


@STORE_DB
def test_markup_in_every_text_column_is_escaped(store, viewer_client):
    sid = store.add_session(XSS, target=XSS, profile=XSS, principal=XSS, title=XSS)
    store.add_message(
        sid,
        XSS,
        XSS,
        tool_name=XSS,
        tool_call_id=XSS,
        tool_target=XSS,
        tool_op=XSS,
        tool_args=json.dumps({XSS: [XSS, {"k": XSS}]}),
        tool_result=json.dumps({"error": XSS}),
        trace_id=XSS,
        span_id=XSS,
        model_id=XSS,
    )
    store.add_message(sid, "tool", XSS, tool_name="t", tool_args=XSS, tool_result=XSS)
    store.add_message(sid, "assistant", "x", tool_call_id=XSS)
    store.add_state(sid, XSS, {XSS: XSS})
    store.add_state(sid, "broken", XSS)
    for url in (
        session_url(sid),
        session_url(sid, "state"),
        session_url(sid, "stats"),
        session_url(sid, q="script", role=XSS, tool=XSS),
    ):
        html = html_of(viewer_client.get(url))
        assert_no_markup_from_store(html)
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    html = html_of(viewer_client.get(session_url(sid, "stats"), **HX))
    assert_no_markup_from_store(html)
    mid = store.execute("SELECT MIN(id) FROM session_messages")[0][0]
    for column in ("content", "tool_args", "tool_result"):
        html = html_of(viewer_client.get(session_url(sid, f"messages/{mid}/{column}"), **HX))
        assert_no_markup_from_store(html)


# -- big values -----------------------------------------------------------------------


@STORE_DB
def test_a_huge_value_is_truncated_and_loads_in_full_on_demand(store, viewer_client):
    sid = store.add_session()
    huge = "<b>" + "line of text\n" * 30_000 + "THE END"
    result = json.dumps({"rows": ["x" * 100] * 2000, "tail": "<i>end</i>"})
    mid = store.add_message(sid, "tool", huge, tool_name="t", tool_result=result)
    response = viewer_client.get(session_url(sid))
    html = html_of(response)
    assert len(response.content) < 40_000  # not the 390 KB + 200 KB of values
    assert "THE END" not in html
    full = session_url(sid, f"messages/{mid}/content")
    assert f'hx-get="{full}"' in html and "show full (" in html
    fragment = html_of(viewer_client.get(full, **HX))
    assert "THE END" in fragment and "&lt;b&gt;" in fragment and "<html" not in fragment
    page = html_of(viewer_client.get(full))  # without JavaScript: a page of its own
    assert "THE END" in page and "<html" in page
    raw = viewer_client.get(session_url(sid, f"messages/{mid}/content", raw=1))
    assert raw["Content-Type"] == "text/plain; charset=utf-8"
    assert raw["Content-Disposition"].startswith("attachment;")
    assert raw.content.decode() == huge
    fragment = html_of(viewer_client.get(session_url(sid, f"messages/{mid}/tool_result"), **HX))
    assert '<span class="j-str">&quot;&lt;i&gt;end&lt;/i&gt;&quot;</span>' in fragment


@STORE_DB
def test_a_value_of_a_missing_message_or_column_is_404(store, viewer_client):
    sid = store.add_session()
    mid = store.add_message(sid, "user", "hi")
    assert viewer_client.get(session_url(sid, "messages/99999/content")).status_code == 404
    assert viewer_client.get(session_url(sid, f"messages/{mid}/tool_args")).status_code == 404


# -- paging, permalinks, filters -----------------------------------------------------------


@STORE_DB
def test_load_more_pages_cover_every_message_once(store, viewer_client):
    sid = store.add_session()
    expected = [
        store.add_message(sid, ("user", "assistant")[i % 2], f"m{i}", ts=BASE_MS + (i // 4) * 1000)
        for i in range(250)
    ]
    html = html_of(viewer_client.get(session_url(sid)))
    seen = message_ids(html)
    assert "Load earlier" not in html and "Load more" in html and "Jump to end" in html
    while True:
        match = re.search(r'hx-get="([^"]*after=\d+[^"]*)"', html)
        if not match:
            break
        html = html_of(viewer_client.get(unescape(match.group(1)), **HX))
        assert "<html" not in html and "Load earlier" not in html
        seen += message_ids(html)
    assert seen == expected
    assert "End of the session" in html


@STORE_DB
def test_pages_work_without_javascript_in_both_directions(store, viewer_client):
    sid = store.add_session()
    expected = [store.add_message(sid, "user", f"m{i}") for i in range(230)]
    html = html_of(viewer_client.get(session_url(sid, end=1)))
    assert message_ids(html) == expected[-100:]
    assert 'id="end"' in html
    seen = message_ids(html)
    while match := re.search(r'href="([^"]*before=\d+[^"]*)"', html):
        html = html_of(viewer_client.get(unescape(match.group(1))))
        assert "Load more" in html  # a full page shows both ways
        seen = message_ids(html) + seen
    assert seen == expected


@STORE_DB
def test_load_earlier_fragment_has_no_load_more_row(store, viewer_client):
    sid = store.add_session()
    ids = [store.add_message(sid, "user", f"m{i}") for i in range(150)]
    html = html_of(viewer_client.get(session_url(sid, before=ids[120]), **HX))
    assert message_ids(html) == ids[20:120]
    assert "Load earlier" in html and "Load more" not in html


@STORE_DB
def test_a_permalink_deep_in_a_long_session_opens_the_page_around_it(store, viewer_client):
    sid = store.add_session()
    ids = [store.add_message(sid, "user", f"message number {i}") for i in range(1500)]
    target = ids[1234]
    html = html_of(viewer_client.get(session_url(sid, at=target)))
    assert f'<li id="message-{target}" class="msg role-user anchored">' in html
    assert ids[0] not in message_ids(html)
    assert "Load earlier" in html and "Load more" in html
    assert f'href="{session_url(sid, at=target)}#message-{target}"' in html


@STORE_DB
def test_bad_cursors_are_400_and_unknown_messages_404(store, viewer_client):
    sid = store.add_session()
    store.add_message(sid, "user", "hi")
    assert viewer_client.get(session_url(sid, after="abc")).status_code == 400
    assert viewer_client.get(session_url(sid, at="²")).status_code == 400
    # A rowid may be negative in a hand-written store: a well-formed id, no such message.
    assert viewer_client.get(session_url(sid, at="-1")).status_code == 404
    assert viewer_client.get(session_url(sid, tab="nope")).status_code == 400
    assert viewer_client.get(session_url(sid, at=424242)).status_code == 404


@STORE_DB
def test_filters_narrow_the_transcript_and_stay_in_the_urls(conversation, viewer_client):
    sid, ids = conversation
    html = html_of(viewer_client.get(session_url(sid, role="tool")))
    assert message_ids(html) == [ids["tool"], ids["slow"]]
    assert '<option value="tool" selected>' in html
    html = html_of(viewer_client.get(session_url(sid, tool="sql.query")))
    assert message_ids(html) == [ids["slow"]] and 'value="sql.query"' in html
    html = html_of(viewer_client.get(session_url(sid, q="billing")))
    assert message_ids(html) == [ids["user"]] and 'value="billing"' in html
    html = html_of(viewer_client.get(session_url(sid, q="nothing like this")))
    assert "No message matches these filters" in html
    fragment = html_of(
        viewer_client.get(session_url(sid, role="user"), HTTP_HX_TARGET="transcript", **HX)
    )
    assert fragment.lstrip().startswith('<section id="transcript"')


@STORE_DB
def test_filters_survive_load_more(store, viewer_client):
    sid = store.add_session()
    for i in range(300):
        store.add_message(sid, ("user", "tool")[i % 2], f"m{i}")
    html = html_of(viewer_client.get(session_url(sid, role="tool")))
    more = unescape(re.search(r'hx-get="([^"]*after=[^"]*)"', html).group(1))
    assert "role=tool" in more
    html = html_of(viewer_client.get(more, **HX))
    assert "role-user" not in html


@STORE_DB
def test_an_empty_session_says_so(store, viewer_client):
    sid = store.add_session()
    html = html_of(viewer_client.get(session_url(sid)))
    assert "This session has no messages yet" in html


# -- state and statistics -----------------------------------------------------------------


@STORE_DB
def test_the_state_tab_shows_trees_and_broken_json_raw(conversation, viewer_client):
    sid, _ = conversation
    for url in (session_url(sid, tab="state"), session_url(sid, "state")):
        html = html_of(viewer_client.get(url))
        assert 'aria-current="page">State (2)' in html
        assert '<details class="jt-root" open>' in html
        assert '<span class="j-key">&quot;children&quot;</span>' in html
        assert '<pre class="json raw">{broken</pre>' in html and "not valid JSON" in html


@STORE_DB
def test_a_big_state_value_is_truncated_and_loads_in_full(store, viewer_client):
    sid = store.add_session()
    store.add_state(sid, "snapshot", {"nodes": ["n" * 50] * 3000, "last": "<end>"})
    store.add_state(sid, "odd/key", {"x": 1})
    html = html_of(viewer_client.get(session_url(sid, "state")))
    assert "&lt;end&gt;" not in html and "show full (" in html
    full = session_url(sid, "state/snapshot/value")
    assert f'hx-get="{full}"' in html
    assert "&lt;end&gt;" in html_of(viewer_client.get(full, **HX))
    raw = viewer_client.get(session_url(sid, "state/snapshot/value", raw=1))
    assert json.loads(raw.content)["last"] == "<end>"
    odd = session_url(sid, "state", key="odd/key", raw=1)
    assert odd.replace("&", "&amp;") in html
    assert json.loads(viewer_client.get(odd).content) == {"x": 1}
    assert viewer_client.get(session_url(sid, "state/nope/value")).status_code == 404


@STORE_DB
def test_stats_load_as_a_fragment_and_as_a_page_without_javascript(conversation, viewer_client):
    sid, _ = conversation
    fragment = html_of(viewer_client.get(session_url(sid, "stats"), **HX))
    assert fragment.lstrip().startswith('<div id="session-stats"')
    assert "registry.lookup" in fragment and "sql.query" in fragment
    assert "4.2 s · slow" in fragment
    assert '<span class="role role-other">critic</span> 1' in fragment
    assert f'href="{session_url(sid, tool="sql.query")}"' in fragment
    page = html_of(viewer_client.get(session_url(sid, "stats")))
    assert "<html" in page and "registry.lookup" in page and 'id="transcript"' in page


# -- export ---------------------------------------------------------------------------------


def _export(client, sid, fmt):
    response = client.get(session_url(sid, "export", format=fmt))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Disposition"].startswith("attachment;")
    return b"".join(response.streaming_content).decode()


def _store_messages(store, sid):
    cols = ", ".join(T.MESSAGE_COLUMNS)
    return [
        dict(zip(T.MESSAGE_COLUMNS, row, strict=True))
        for row in store.execute(
            f"SELECT {cols} FROM session_messages WHERE session_id = ? ORDER BY ts, id", (sid,)
        )
    ]


def _check_exported_message(exported, stored):
    for column, value in stored.items():
        if column in ("tool_args", "tool_result"):
            if value is None:
                assert exported[column] is None
            elif T.strict_json_valid(value):
                assert exported[column] == json.loads(value)
            else:
                assert exported[column] is None and exported[f"{column}_raw"] == value
        else:
            assert exported[column] == value, column


@pytest.fixture
def export_session(store):
    sid = store.add_session("x?y#z", title=XSS)
    store.add_message(sid, "user", "multi\nline ```code``` " + XSS)
    store.add_message(
        sid,
        "tool",
        "",
        tool_name="t",
        tool_call_id="c",
        tool_args='{\n"a": 1\n}',
        tool_result='{"ok": false',
        tool_duration_ms=5,
    )
    store.add_message(sid, "tool", "", tool_name="t", tool_args='{"n": NaN}', tool_result='"s"')
    for i in range(30):
        store.add_message(sid, "assistant", f"reply {i} ünïcødé 🙂", model_id="m")
    store.add_state(sid, "snapshot", {"a": [1, 2]})
    store.add_state(sid, "repl_state", "not json")
    return sid


@STORE_DB
def test_the_json_export_parses_back_to_the_store(export_session, store, viewer_client):
    sid = export_session
    document = json.loads(_export(viewer_client, sid, "json"))
    assert document["session"]["id"] == sid and document["session"]["title"] == XSS
    stored = _store_messages(store, sid)
    assert len(document["messages"]) == len(stored)
    for exported, row in zip(document["messages"], stored, strict=True):
        _check_exported_message(exported, row)
    state = {item["key"]: item for item in document["state"]}
    assert state["snapshot"]["value"] == {"a": [1, 2]}
    assert state["repl_state"]["value"] is None
    assert state["repl_state"]["value_raw"] == "not json"


@STORE_DB
def test_the_jsonl_export_has_one_message_a_line(export_session, store, viewer_client):
    sid = export_session
    lines = _export(viewer_client, sid, "jsonl").splitlines()
    stored = _store_messages(store, sid)
    assert len(lines) == len(stored)
    for line, row in zip(lines, stored, strict=True):
        _check_exported_message(json.loads(line), row)


@STORE_DB
def test_the_markdown_export_is_a_readable_transcript(export_session, store, viewer_client):
    sid = export_session
    text = _export(viewer_client, sid, "md")
    assert text.startswith("# Session `x?y#z`")
    for row in _store_messages(store, sid):
        assert f"message {row['id']}" in text
        if row["content"]:
            assert row["content"] in text
    # Content holding a fence is wrapped in a longer one.
    assert "````\nmulti\nline ```code```" in text
    assert "*(not valid JSON)*" in text
    assert "## State" in text and "`snapshot`" in text


@STORE_DB
def test_the_export_streams_a_long_session_in_chunks(store, viewer_client):
    sid = store.add_session()
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO session_messages (session_id, role, content, ts) VALUES (?, ?, ?, ?)",
            [(sid, "user", f"m{i}", BASE_MS + i // 3) for i in range(T.EXPORT_CHUNK * 2 + 17)],
        )
    lines = _export(viewer_client, sid, "jsonl").splitlines()
    assert [json.loads(line)["content"] for line in lines] == [
        f"m{i}" for i in range(T.EXPORT_CHUNK * 2 + 17)
    ]


@STORE_DB
def test_an_unknown_export_format_is_400(store, viewer_client):
    sid = store.add_session()
    assert viewer_client.get(session_url(sid, "export", format="xml")).status_code == 400


# -- ids, access, methods ----------------------------------------------------------------------


@STORE_DB
def test_an_unknown_session_is_404(store, viewer_client):
    response = viewer_client.get(session_url("no-such-session"))
    assert response.status_code == 404
    assert "no-such-session" in response.content.decode()
    assert viewer_client.get(session_url("nope", "export")).status_code == 404
    assert viewer_client.get(session_url("nope", "stats"), **HX).status_code == 404


@STORE_DB
@pytest.mark.parametrize("odd", ["a/b", "..", "x?y#z", "% 20", "ünï/cødé 🙂", "a/stats", "."])
def test_sessions_with_odd_ids_work_on_every_subpage(store, viewer_client, odd):
    sid = store.add_session(odd, title="odd one")
    mid = store.add_message(
        sid, "tool", "x" * (T.LARGE_VALUE_CHARS + 5), tool_name="t", tool_call_id="c", trace_id="t1"
    )
    store.add_state(sid, "snapshot", {"a": 1})
    html = html_of(viewer_client.get(session_url(sid)))
    assert "odd one" in html
    permalink = unescape(re.search(r'class="permalink" href="([^"]+)"', html).group(1))
    assert f'id="message-{mid}"' in html_of(viewer_client.get(permalink.split("#")[0]))
    assert "a" in html_of(viewer_client.get(session_url(sid, "state")))
    assert "t" in html_of(viewer_client.get(session_url(sid, "stats"), **HX))
    full = html_of(viewer_client.get(session_url(sid, f"messages/{mid}/content"), **HX))
    assert "x" * 1000 in full
    lines = _export(viewer_client, sid, "jsonl").splitlines()
    assert json.loads(lines[0])["session_id"] == odd


@STORE_DB
def test_the_page_requires_staff_with_the_view_permission(conversation, client, nonstaff_client):
    sid, _ = conversation
    assert client.get(session_url(sid)).status_code == 302
    assert nonstaff_client.get(session_url(sid)).status_code == 403
    assert nonstaff_client.get(session_url(sid, "export")).status_code == 403


@STORE_DB
def test_the_pages_only_answer_safe_methods(conversation, admin_client):
    sid, ids = conversation
    for url in (
        session_url(sid),
        session_url(sid, "stats"),
        session_url(sid, "state"),
        session_url(sid, "export"),
        session_url(sid, f"messages/{ids['user']}/content"),
    ):
        assert admin_client.post(url).status_code == 405
    assert admin_client.head(session_url(sid)).status_code == 200
