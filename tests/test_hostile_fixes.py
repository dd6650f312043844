"""Issue 10's "also fix" items: the clear-all count, frames of only FIFOs or
symlinks, the login ``next`` in ``HX-Redirect``."""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlsplit

from django.test import Client
from django.urls import reverse

from sessions_admin import deletion
from sessions_admin.ids import session_url
from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB

CLEAR_ALL = "admin:sessions_admin_session_clear_all"


@STORE_DB
def test_clear_all_checks_the_phrase_against_the_count_the_server_reads(store, admin_client):
    store.add_session("a")
    store.add_session("b")
    # The page showed 2; a third session arrived before the form was posted.
    store.add_session("c")
    response = admin_client.post(
        reverse(CLEAR_ALL), {"expected": "2", "phrase": "delete 2 sessions"}
    )
    assert response.status_code == 400
    body = response.content.decode()
    assert "The store changed since this page was drawn: it now holds 3 sessions" in body
    assert "delete 3 sessions" in body
    assert store.count("sessions") == 3
    assert not DeletionAudit.objects.filter(operation=DeletionAudit.Operation.CLEAR_ALL).exists()


@STORE_DB
def test_clear_all_ignores_an_edited_expected_count(store, admin_client):
    store.add_session("a")
    response = admin_client.post(
        reverse(CLEAR_ALL), {"expected": "0", "phrase": "delete 0 sessions"}
    )
    assert response.status_code == 400
    assert store.count("sessions") == 1


@STORE_DB
def test_clear_all_starts_with_the_phrase_for_the_servers_count(store, admin_client):
    store.add_session("a")
    store.add_session("b")
    response = admin_client.post(
        reverse(CLEAR_ALL), {"expected": "7", "phrase": "delete 2 sessions"}
    )
    assert response.status_code == 302
    audit = DeletionAudit.objects.get(operation=DeletionAudit.Operation.CLEAR_ALL)
    assert audit.target["expected_sessions"] == 2


def _fifo_and_links_dir(store, session_id: str) -> None:
    directory = store.frames_root / session_id
    directory.mkdir()
    os.mkfifo(directory / "activity-r.jsonl")
    (directory / "activity-l.jsonl").symlink_to("/etc/hostname")
    (directory / "dangling").symlink_to("/nope")


@STORE_DB
def test_a_frames_dir_of_only_a_fifo_and_symlinks_is_reported_and_audited(store, admin_user):
    session_id = store.add_session("s")
    _fifo_and_links_dir(store, session_id)
    result = deletion.delete_session(
        session_id, actor=deletion.Actor.of(admin_user), wipe_frames=True
    )
    assert not (store.frames_root / session_id).exists()
    assert os.path.exists("/etc/hostname")
    text = result.describe()
    assert "no frames directory" not in text
    assert "frames removed (1 directory, 0 B, also 1 FIFO, 2 symlinks)" in text
    audit = DeletionAudit.objects.get(pk=result.audit_id)
    assert audit.frame_dirs_removed == 1
    assert "frames also held: 1 FIFO, 2 symlinks" in audit.detail


@STORE_DB
def test_removing_an_orphan_of_only_symlinks_says_what_went(store, staff_client):
    _fifo_and_links_dir(store, "gone")
    response = staff_client.post(reverse("frames_orphans"), {"session_id": "gone"}, follow=True)
    body = response.content.decode()
    assert "Removed 1 orphan frame directory" in body
    assert "1 FIFO, 2 symlinks, unlinked without following" in body


@STORE_DB
def test_the_login_redirect_for_htmx_carries_next_encoded(store):
    store.add_session("a&b=c#d")
    page = session_url("a&b=c#d")
    response = Client().get(
        page + "stats/",
        headers={"HX-Request": "true", "HX-Current-URL": f"http://testserver{page}?tab=state"},
    )
    location = urlsplit(response["HX-Redirect"])
    assert location.path == "/login/"
    assert parse_qs(location.query) == {"next": [f"{page}?tab=state"]}
