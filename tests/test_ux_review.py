"""Small fixes from a UX review: wording, ways back, readable times, read-only refusals."""

from __future__ import annotations

import json
import time

from sessions_admin.humanize import signed_duration
from sessions_admin.ids import session_url
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import BASE_MS

pytestmark = STORE_DB


def test_a_target_row_shows_its_latest_activity_as_relative_time_like_its_profiles(
    store, staff_client
):
    now = int(time.time() * 1000)
    store.add_session("sess_a", target="ops.pager", profile="edit", last_active=now - 5 * 60_000)
    store.add_session("sess_b", target="ops.pager", profile="default", last_active=now - 3_600_000)
    body = staff_client.get("/targets/").content.decode()
    target_row = body.split('class="target-row"')[1].split("</tr>")[0]
    assert "5 min ago" in target_row
    assert 'title="' in target_row  # the exact time and zone on hover


def test_timeline_offsets_read_as_hours_and_minutes_not_thousands_of_minutes():
    assert signed_duration(450) == "450 ms"
    assert signed_duration(2_500) == "2.5 s"
    assert signed_duration(26_596.7 * 60_000) == "443 h 16 min"
    assert signed_duration(-2_500) == "-2.5 s"


def test_an_unknown_request_file_links_back_to_the_sessions_requests(store, staff_client):
    sid = store.add_session("sess_req")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-r1.jsonl").write_text(
        json.dumps({"ts": BASE_MS, "kind": "log"}) + "\n"
    )
    response = staff_client.get(session_url(sid, "frames/req_gone"))
    assert response.status_code == 404
    body = response.content.decode()
    assert f'href="{session_url(sid, "frames")}"' in body
    assert "Back to this session&#x27;s requests" in body


def test_a_refused_delete_in_read_only_mode_offers_the_way_back_not_a_retry(store, staff_client):
    sid = store.add_session("sess_ro")
    point_store_at(store.path, read_only=True)
    response = staff_client.post(session_url(sid, "delete"))
    body = response.content.decode()
    assert response.status_code == 403
    assert "Try again" not in body and "Back to the sessions" in body


def test_the_read_only_delete_page_disables_the_frames_box_too(store, staff_client):
    sid = store.add_session("sess_ro_frames")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-r1.jsonl").write_text('{"ts": 1}\n')
    point_store_at(store.path, read_only=True)
    body = staff_client.get(session_url(sid, "delete")).content.decode()
    assert 'name="wipe_frames" value="1" disabled' in body
    assert 'class="danger" disabled' in body


def test_an_empty_tool_filter_result_explains_that_tool_names_match_exactly(store, staff_client):
    sid = store.add_session("sess_tools")
    store.add_message(sid, "tool", "ok", tool_name="registry.lookup", tool_call_id="c1")
    body = staff_client.get(session_url(sid, tool="registry")).content.decode()
    assert "No message matches these filters." in body
    assert "takes a tool's full name" in body
    other = staff_client.get(session_url(sid, q="nothing-like-this")).content.decode()
    assert "takes a tool's full name" not in other


def test_list_cells_carry_the_classes_the_narrow_layout_relies_on(store, staff_client):
    store.add_session("sess_cells", title="t", principal="user:alice")
    body = staff_client.get("/sessions/").content.decode()
    row = body.split('data-session-id="sess_cells"')[1].split("</tr>")[0]
    for cls in ('class="title"', 'class="principal"', 'class="when created"', 'class="when"'):
        assert cls in row
    assert '<th scope="col" class="when created">created</th>' in body


def test_the_admin_clear_all_page_uses_the_stock_breadcrumbs_and_no_runtime_internals(
    store, admin_client
):
    store.add_session("sess_clear")
    body = admin_client.get("/admin/sessions_admin/session/clear-all/").content.decode()
    assert '<ol class="breadcrumbs">' in body and "Agent sessions" in body
    assert "$sessionClearAll" not in body
