"""The session page links to activity frames only when the session has a frames directory."""

from __future__ import annotations

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.transcript_pages import html_of


def _traced_session(store) -> str:
    sid = store.add_session("traced")
    store.add_message(sid, "user", "hi", trace_id="tr-1")
    return sid


@STORE_DB
def test_without_a_frames_directory_no_trace_links_and_a_disabled_frames_button(
    store, viewer_client
):
    sid = _traced_session(store)
    for url in (session_url(sid), session_url(sid, "state")):
        html = html_of(viewer_client.get(url))
        assert f'href="{session_url(sid, "frames")}"' not in html
        assert 'aria-disabled="true"' in html and "no activity frames on disk" in html
    html = html_of(viewer_client.get(session_url(sid)))
    assert "frames/?trace=" not in html
    assert 'title="trace tr-1 (no activity frames on disk)"' in html


@STORE_DB
def test_with_a_frames_directory_the_trace_links_and_the_frames_button_are_live(
    store, viewer_client
):
    sid = _traced_session(store)
    (store.frames_root / sid).mkdir(parents=True)
    html = html_of(viewer_client.get(session_url(sid)))
    assert f'href="{session_url(sid, "frames")}"' in html
    assert session_url(sid, "frames", trace="tr-1") in html
    assert "no activity frames on disk" not in html


@STORE_DB
def test_the_next_page_fragment_follows_the_same_rule(store, viewer_client):
    sid = _traced_session(store)
    first = store.execute("SELECT min(id) FROM session_messages")[0][0]
    store.add_message(sid, "user", "again", trace_id="tr-2")
    fragment = html_of(
        viewer_client.get(session_url(sid, after=first), headers={"HX-Request": "true"})
    )
    assert "tr-2" in fragment and "frames/?trace=" not in fragment
