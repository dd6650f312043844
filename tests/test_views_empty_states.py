"""Empty states that say why: the list names each filter and clears it; an id with
no session says so, on the list and from the header's go-to box."""

from __future__ import annotations

import html as htmllib

from django.urls import reverse

from sessions_admin.ids import looks_like_session_id
from tests.conftest import STORE_DB
from tests.transcript_pages import html_of


@STORE_DB
def test_the_empty_list_names_each_active_filter_and_offers_to_clear_it(store, viewer_client):
    store.add_session("sess_abc", target="ops.pager")
    page = html_of(
        viewer_client.get(
            reverse("sessions"), {"target": "ops.pager", "q": "nothing", "active": "1h"}
        )
    )
    text = htmllib.unescape(page)
    assert "No sessions match these filters:" in text
    assert "target ops.pager · <a" in text
    assert "title or id contains “nothing”" in text
    assert "last active: last hour" in text
    # Each clear link drops its own filter and keeps the others.
    assert 'href="/sessions/?q=nothing&active=1h">clear this filter' in text
    assert 'href="/sessions/?target=ops.pager&active=1h">clear this filter' in text
    assert 'href="/sessions/?target=ops.pager&q=nothing">clear this filter' in text
    assert "remove a filter." not in text


@STORE_DB
def test_an_exact_looking_id_with_no_session_says_so_on_the_list(store, viewer_client):
    store.add_session("sess_abc")
    page = htmllib.unescape(html_of(viewer_client.get(reverse("sessions"), {"q": "sess_nope"})))
    assert "No session with id “sess_nope”." in page
    assert 'href="/sessions/">clear this filter' in page


@STORE_DB
def test_the_go_to_box_says_when_no_session_has_the_id(store, viewer_client):
    store.add_session("sess_abc")
    found = viewer_client.get(reverse("search"), {"q": "sess_abc"})
    assert found.status_code == 302
    missing = htmllib.unescape(html_of(viewer_client.get(reverse("search"), {"q": "sess_nope"})))
    assert "No session with id “sess_nope”." in missing
    words = htmllib.unescape(html_of(viewer_client.get(reverse("search"), {"q": "rollback"})))
    assert "No session with id" not in words


def test_only_text_shaped_like_the_runtimes_ids_counts_as_an_id():
    assert looks_like_session_id("sess_9f0c21")
    assert not looks_like_session_id("sess 9f")
    assert not looks_like_session_id("rollback")
    assert not looks_like_session_id("sess_")
