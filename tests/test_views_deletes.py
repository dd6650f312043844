"""The ``delete`` subpage: confirmation dialog, the delete itself, permissions, CSRF."""

from __future__ import annotations

import json

from django.test import Client

from sessions_admin.ids import session_url
from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB, point_store_at

HX = {"HTTP_HX_REQUEST": "true"}


def a_session(store, session_id: str = "sess_del") -> str:
    store.add_session(session_id, title="deploy rollback plan")
    for _ in range(3):
        store.add_message(session_id)
    store.add_state(session_id, "repl_state", {})
    store.add_state(session_id, "snapshot", {})
    return session_id


def make_frames(store, session_id: str, size: int = 2048) -> None:
    path = store.frames_root / session_id
    path.mkdir()
    (path / "activity-r1.jsonl").write_bytes(b"x" * size)


@STORE_DB
def test_it_shows_a_confirmation_page_with_the_counts(store, staff_client):
    sid = a_session(store)
    response = staff_client.get(session_url(sid, "delete"))
    assert response.status_code == 200
    html = response.content.decode()
    assert "delete-dialog" not in html and "<html" in html
    assert "<strong>3</strong> messages" in html and "<strong>2</strong> state rows" in html
    assert "No activity frames directory" in html


@STORE_DB
def test_for_htmx_it_answers_with_a_modal_dialog_with_cancel_focused_and_the_frames_size(
    store, staff_client
):
    sid = a_session(store)
    make_frames(store, sid, 2048)
    response = staff_client.get(session_url(sid, "delete", **{"from": "list"}), **HX)
    html = response.content.decode()
    assert response.status_code == 200 and "<html" not in html
    assert "<dialog data-open-modal" in html
    assert "data-close-dialog data-autofocus>Cancel" in html
    assert "also remove activity frames" in html and "2.0 KB" in html
    assert 'hx-target="closest tr" hx-swap="delete"' in html
    assert response["Vary"] and "HX-Request" in response["Vary"]


@STORE_DB
def test_a_plain_form_post_deletes_and_redirects_to_the_list_with_a_message(store, staff_client):
    sid = a_session(store)
    response = staff_client.post(session_url(sid, "delete"), follow=True)
    assert response.redirect_chain == [("/sessions/", 303)]
    assert "Deleted session sess_del: 3 messages, 2 state rows" in response.content.decode()
    assert store.count("sessions") == 0 and store.count("session_messages") == 0
    audit = DeletionAudit.objects.get()
    assert audit.actor == "staff" and audit.user.username == "staff" and audit.outcome == "ok"


@STORE_DB
def test_the_message_says_the_frames_left_on_disk_will_show_as_orphans(store, staff_client):
    sid = a_session(store)
    make_frames(store, sid, 2048)
    response = staff_client.post(session_url(sid, "delete"), follow=True)
    html = response.content.decode()
    assert "Deleted session sess_del: 3 messages, 2 state rows; its frames (2.0 KB)" in html
    assert "stay on disk and show as orphans" in html
    assert (store.frames_root / sid).exists()


@STORE_DB
def test_an_htmx_post_from_the_list_answers_with_an_out_of_band_flash_and_no_row(
    store, staff_client
):
    sid = a_session(store)
    make_frames(store, sid)
    response = staff_client.post(
        session_url(sid, "delete"), {"from": "list", "wipe_frames": "1"}, **HX
    )
    html = response.content.decode()
    assert response.status_code == 200
    assert 'hx-swap-oob="innerHTML"' in html
    assert "Deleted session sess_del: 3 messages, 2 state rows, frames removed" in html
    assert "<tr" not in html
    # The list's count counts again (django-htmx writes the event as JSON).
    assert json.loads(response["HX-Trigger"]) == {"sessions-changed": {}}
    assert not (store.frames_root / sid).exists()
    assert DeletionAudit.objects.get().operation == "wipe_session"


@STORE_DB
def test_an_htmx_post_from_the_session_page_redirects_the_browser_to_the_list(store, staff_client):
    sid = a_session(store)
    response = staff_client.post(session_url(sid, "delete"), **HX)
    assert response["HX-Redirect"] == "/sessions/"
    listing = staff_client.get("/sessions/").content.decode()
    assert "Deleted session sess_del" in listing


@STORE_DB
def test_odd_ids_are_deleted_through_their_canonical_url(store, staff_client):
    for sid in ("a/b?c#d %e", "..", "séance 🙂"):
        store.add_session(sid)
        store.add_message(sid)
        response = staff_client.post(session_url(sid, "delete"))
        assert response.status_code == 303, sid
    assert store.count("sessions") == 0


@STORE_DB
def test_a_symlinked_frames_directory_is_reported_in_the_message_not_followed(
    store, staff_client, tmp_path
):
    sid = a_session(store)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    (store.frames_root / sid).symlink_to(outside)
    page = staff_client.get(session_url(sid, "delete")).content.decode()
    assert "cannot be removed here" in page and "symbolic link" in page
    response = staff_client.post(session_url(sid, "delete"), {"wipe_frames": "1"}, follow=True)
    assert "frames NOT removed" in response.content.decode()
    assert (outside / "keep").exists() and store.count("sessions") == 0


@STORE_DB
def test_a_staff_member_without_the_delete_permission_gets_403(store, viewer_client):
    sid = a_session(store)
    assert viewer_client.get(session_url(sid, "delete")).status_code == 403
    assert viewer_client.post(session_url(sid, "delete")).status_code == 403
    assert store.count("sessions") == 1
    assert not DeletionAudit.objects.exists()


@STORE_DB
def test_non_staff_get_403_and_anonymous_users_are_sent_to_log_in(store, nonstaff_client, client):
    sid = a_session(store)
    assert nonstaff_client.post(session_url(sid, "delete")).status_code == 403
    response = client.post(session_url(sid, "delete"))
    assert response.status_code == 302 and "/login/" in response["Location"]
    assert store.count("sessions") == 1


@STORE_DB
def test_csrf_is_enforced(store, staff_client):
    sid = a_session(store)
    strict = Client(enforce_csrf_checks=True)
    strict.cookies = staff_client.cookies
    assert strict.post(session_url(sid, "delete")).status_code == 403
    assert store.count("sessions") == 1
    page = strict.get(session_url(sid, "delete"))
    token = page.context["csrf_token"]
    response = strict.post(session_url(sid, "delete"), {"csrfmiddlewaretoken": str(token)})
    assert response.status_code == 303 and store.count("sessions") == 0


@STORE_DB
def test_other_methods_are_rejected(store, staff_client):
    sid = a_session(store)
    assert staff_client.put(session_url(sid, "delete")).status_code == 405
    assert staff_client.delete(session_url(sid, "delete")).status_code == 405


@STORE_DB
def test_a_missing_session_is_404(store, staff_client):
    assert staff_client.post(session_url("nope", "delete")).status_code == 404


@STORE_DB
def test_read_only_mode_disables_the_button_and_refuses_the_post(store, staff_client):
    sid = a_session(store)
    point_store_at(store.path, read_only=True)
    page = staff_client.get(session_url(sid, "delete")).content.decode()
    assert "read-only mode" in page
    response = staff_client.post(session_url(sid, "delete"))
    assert response.status_code == 403 and "read-only" in response.content.decode()
    htmx = staff_client.post(session_url(sid, "delete"), {"from": "list"}, **HX)
    assert htmx.status_code == 403 and htmx["HX-Retarget"] == "#flash"
    assert store.count("sessions") == 1
    assert set(DeletionAudit.objects.values_list("outcome", flat=True)) == {"refused"}


@STORE_DB
def test_the_list_rows_carry_a_delete_control_only_for_users_who_may_delete(
    store, staff_client, viewer_client
):
    sid = a_session(store)
    html = staff_client.get("/sessions/").content.decode()
    assert f'href="{session_url(sid, "delete", **{"from": "list"})}"' in html
    # In the row's menu; the dialog lands in the row's last cell.
    assert 'hx-target="closest td" hx-swap="beforeend"' in html
    assert session_url(sid, "delete") not in viewer_client.get("/sessions/").content.decode()


@STORE_DB
def test_a_refused_delete_in_read_only_mode_offers_the_way_back_not_a_retry(store, staff_client):
    sid = store.add_session("sess_ro")
    point_store_at(store.path, read_only=True)
    response = staff_client.post(session_url(sid, "delete"))
    body = response.content.decode()
    assert response.status_code == 403
    assert "Try again" not in body and "Back to the sessions" in body


@STORE_DB
def test_the_read_only_delete_page_disables_the_frames_box_too(store, staff_client):
    sid = store.add_session("sess_ro_frames")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-r1.jsonl").write_text('{"ts": 1}\n')
    point_store_at(store.path, read_only=True)
    body = staff_client.get(session_url(sid, "delete")).content.decode()
    assert 'name="wipe_frames" value="1" disabled' in body
    assert 'class="danger" disabled' in body
