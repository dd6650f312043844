"""Activity frames in a real browser: open a request, expand a frame, page, live tail."""

from __future__ import annotations

import json
import time

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def write_frames(
    store, session_id: str, request_id: str, count: int, *, start: int = 0, pending: bytes = b""
) -> object:
    directory = store.frames_root / session_id
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"activity-{request_id}.jsonl"
    lines = [
        json.dumps(
            {
                "ts": BASE_MS + i * 250,
                "kind": "tool.call" if i % 2 else "model.call",
                "traceId": "trace-1",
                "spanId": f"span-{i}",
                "durationMs": 120,
                "name": f"step {i}",
                "payload": {"html": "<b>not bold</b>"},
            }
        )
        for i in range(start, start + count)
    ]
    with path.open("ab") as fh:
        fh.write(("\n".join(lines) + "\n").encode() + pending)
    return path


@STORE_DB
def test_a_request_opens_from_the_session_and_a_frame_expands(store, logged_in_page, live_server):
    sid = store.add_session("sess_frames", title="with frames")
    write_frames(store, sid, "req_1", 150)
    (store.frames_root / sid / "activity-req_1.jsonl").open("ab").write(b"{damaged\n")
    page = logged_in_page

    page.goto(f"{live_server.url}{session_url(sid)}")
    actions = page.get_by_role("navigation", name="Session actions")
    actions.get_by_role("link", name="Frames").click()
    page.wait_for_url(f"**{session_url(sid, 'frames')}")
    page.get_by_role("link", name="req_1").click()
    page.wait_for_url("**/frames/req_1/")

    assert page.locator("svg.tl rect").count() > 10
    row = page.locator("tr#frame-0")
    summary = row.locator("details.frame-json > summary")
    pretty = row.locator("details.frame-json pre.json")
    assert not pretty.is_visible()
    summary.click()
    pretty.wait_for(state="visible")
    assert '"html": "<b>not bold</b>"' in pretty.inner_text()
    assert row.locator("b").count() == 0

    # Next page through htmx: the panel is swapped and the URL follows.
    page.get_by_role("link", name="Next page").click()
    page.locator("tr.frame-damaged").wait_for()
    assert "offset=" in page.url
    assert "unreadable line 151" in page.locator("tr.frame-damaged").inner_text()
    assert page.console_errors == []


@STORE_DB
def test_the_live_tail_appends_frames_as_they_are_written(store, logged_in_page, live_server):
    sid = store.add_session("sess_live")
    path = write_frames(store, sid, "req_live", 3, pending=b'{"ts": 1, "kind": "half')
    page = logged_in_page

    page.goto(f"{live_server.url}{session_url(sid, 'frames/req_live')}")
    assert page.locator("#tail[hx-trigger]").count() == 1
    assert "being written" in page.locator("#tail").inner_text()
    with open(path, "ab") as fh:
        fh.write(b'", "name": "completed"}\n')
    time.sleep(0.05)
    write_frames(store, sid, "req_live", 2, start=10)

    page.locator("#frame-rows tr", has_text="step 11").wait_for(timeout=8000)
    rows = page.locator("#frame-rows tr.frame")
    assert rows.count() == 6
    assert "completed" in rows.nth(3).inner_text()
    assert "being written" not in page.locator("#tail").inner_text()
    assert page.console_errors == []


@STORE_DB
def test_the_orphans_page_removes_selected_directories(store, logged_in_page, live_server):
    store.add_session("sess_kept")
    write_frames(store, "sess_kept", "r", 2)
    write_frames(store, "sess_orphan", "r", 2)
    page = logged_in_page

    page.goto(f"{live_server.url}/sessions/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Frames").click()
    page.wait_for_url("**/sessions/?frames=1")  # the sessions with frames, by session
    assert page.locator('tr[data-session-id="sess_kept"] a.frames-mark').count() == 1
    page.get_by_role("link", name="Frame directories whose session is gone").click()
    page.wait_for_url("**/frames/orphans/")
    page.get_by_label("Select sess_orphan").check()
    page.get_by_role("button", name="Remove selected").click()
    page.locator(".flash", has_text="Removed 1 orphan frame directory").wait_for()
    assert not (store.frames_root / "sess_orphan").exists()
    assert (store.frames_root / "sess_kept").exists()
    assert page.console_errors == []
