"""A session the runtime is writing to follows itself live at its end: a poll every
2 s answers 204 while nothing is new, and the new messages (with how many) once there are."""

from __future__ import annotations

import re

from sessions_admin import clock
from sessions_admin.ids import session_url
from tests.conftest import STORE_DB


def live_url(html: str) -> str | None:
    found = re.search(r'class="end-row live-row" id="end" hx-get="([^"]+)"', html)
    return found.group(1).replace("&amp;", "&") if found else None


@STORE_DB
def test_an_active_session_is_followed_live_and_gets_what_the_runtime_writes(store, staff_client):
    now = clock.now_ms()
    sid = store.add_session("sess_live", last_active=now)
    store.add_message(sid, "user", "hello", ts=now)
    page = staff_client.get(session_url(sid)).content.decode()
    poll = live_url(page)
    assert poll is not None and "live=1" in poll and 'hx-trigger="every 2s"' in page
    htmx = {"HTTP_HX_REQUEST": "true"}
    quiet = staff_client.get(poll, **htmx)
    assert quiet.status_code == 204 and quiet.content == b""  # nothing new: the cheap answer
    store.add_message(sid, "assistant", "a reply the runtime just wrote", ts=now + 1)
    store.add_message(sid, "user", "and another", ts=now + 2)
    fresh = staff_client.get(poll, **htmx)
    body = fresh.content.decode()
    assert fresh.status_code == 200
    assert "a reply the runtime just wrote" in body and "and another" in body
    assert "hello" not in body  # only what is new
    assert 'hx-swap-oob="true"' in body and "2 new messages" in body
    again = live_url(body)
    assert again is not None and again != poll  # the next poll asks after the newest
    assert staff_client.get(again, **htmx).status_code == 204


@STORE_DB
def test_an_old_or_filtered_session_page_does_not_poll(store, staff_client):
    sid = store.add_session("sess_old")  # last active in 2025
    store.add_message(sid, "user", "hello")
    assert live_url(staff_client.get(session_url(sid)).content.decode()) is None
    now = clock.now_ms()
    active = store.add_session("sess_now", last_active=now)
    store.add_message(active, "user", "hello", ts=now)
    filtered = staff_client.get(session_url(active, role="user")).content.decode()
    assert live_url(filtered) is None
