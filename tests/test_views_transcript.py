"""The session page's transcript: header, messages, tool cards, ids, values, escaping."""

from __future__ import annotations

import json
import re

import pytest

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB
from tests.transcript_pages import HX, XSS, assert_no_markup_from_store, html_of, message_ids

# -- the page ---------------------------------------------------------------------


@STORE_DB
def test_the_header_shows_every_session_field_the_counts_and_the_actions(
    conversation, store, viewer_client
):
    sid, _ = conversation
    (store.frames_root / sid).mkdir(parents=True)  # the Frames button is live
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
def test_model_trace_and_span_ids_are_shown_with_trace_links(
    conversation, store, viewer_client, settings
):
    sid, ids = conversation
    (store.frames_root / sid).mkdir(parents=True)  # trace links lead to frames on disk
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
def test_a_session_whose_id_is_empty_names_it_in_its_header_and_crumbs(store, viewer_client):
    # The store allows the empty id; its page is /sessions/~/?id= (ids.session_url).
    store.add_session("", title="nameless")
    store.add_message("", "user", "hello")
    url = session_url("")
    assert url == "/sessions/~/?id="
    page = viewer_client.get(url).content.decode()
    header = re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)
    assert '<code title="">(empty id)</code>' in header
    assert "› (empty id)</nav>" in page  # the breadcrumbs name it too
    assert "hello" in page
