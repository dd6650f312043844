"""The session list marks the sessions with activity frames on disk and keeps to them
with ``?frames=1`` (what the navigation's Frames opens), equal to a reading of the disk."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB


@STORE_DB
def test_rows_with_frames_are_marked_and_the_filter_keeps_to_them(store, staff_client):
    for sid in ("with-1", "with-2", "without"):
        store.add_session(sid)
    for sid in ("with-1", "with-2", "orphan-only"):
        (store.frames_root / sid).mkdir()
    os.mkdir(os.path.join(os.fsencode(store.frames_root), b"not-utf8-\xff\xfe"))  # no text id
    page = staff_client.get("/sessions/").content.decode()
    assert page.count('class="frames-mark"') == 2
    assert session_url("with-1", "frames") in page
    kept = staff_client.get("/sessions/?frames=1").content.decode()
    assert "with-1" in kept and "with-2" in kept and "without" not in kept
    assert "orphan-only" not in kept  # a directory without its session is an orphan
    counted = staff_client.get("/sessions/?frames=1&count=1", HTTP_HX_REQUEST="true")
    assert b"2 sessions" in counted.content
    assert (
        b"2 sessions"
        not in staff_client.get("/sessions/?frames=1&q=1&count=1", HTTP_HX_REQUEST="true").content
    )
    assert 'href="/sessions/?frames=1"' in page  # the navigation's Frames
    assert staff_client.get("/sessions/?frames=x").status_code == 400


@STORE_DB
@hsettings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    sessions=st.sets(st.sampled_from([f"s{n}" for n in range(8)]), max_size=8),
    dirs=st.sets(st.sampled_from([f"s{n}" for n in range(10)]), max_size=10),
)
def test_the_frames_filter_equals_a_reading_of_the_disk(store, staff_client, sessions, dirs):
    store.clear()
    for name in os.listdir(store.frames_root):
        os.rmdir(store.frames_root / name)
    for sid in sorted(sessions):
        store.add_session(sid)
    for sid in dirs:
        (store.frames_root / sid).mkdir()
    page = staff_client.get("/sessions/?frames=1").content.decode()
    shown = {sid for sid in (f"s{n}" for n in range(10)) if f'data-session-id="{sid}"' in page}
    assert shown == sessions & dirs
