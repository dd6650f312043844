"""The session's other subpages (state, statistics), and what every subpage shares:
odd ids, access, methods."""

from __future__ import annotations

import json
import re
from html import unescape

import pytest

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB
from tests.transcript_pages import HX, export_text, html_of

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
    lines = export_text(viewer_client, sid, "jsonl").splitlines()
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
        session_url(sid, f"messages/{ids['user']}/content"),
    ):
        assert admin_client.post(url).status_code == 405
    assert admin_client.head(session_url(sid)).status_code == 200
    # The export takes a POST only to export unmasked, for a reason (tests/test_masking.py).
    refused = admin_client.post(session_url(sid, "export"))
    assert refused.status_code == 400 and b"reason" in refused.content
    assert admin_client.put(session_url(sid, "export")).status_code == 405
