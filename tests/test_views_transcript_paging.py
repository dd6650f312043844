"""The transcript's pages: Load more and earlier, permalinks, filters, an empty session."""

from __future__ import annotations

import re
from html import unescape

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS
from tests.transcript_pages import HX, html_of, message_ids


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


@STORE_DB
def test_an_empty_tool_filter_result_explains_that_tool_names_match_exactly(store, staff_client):
    sid = store.add_session("sess_tools")
    store.add_message(sid, "tool", "ok", tool_name="registry.lookup", tool_call_id="c1")
    body = staff_client.get(session_url(sid, tool="registry")).content.decode()
    assert "No message matches these filters." in body
    assert "takes a tool's full name" in body
    other = staff_client.get(session_url(sid, q="nothing-like-this")).content.decode()
    assert "takes a tool's full name" not in other
