"""``/frames/orphans/``: frame directories without a session, and their audited removal."""

from __future__ import annotations

from django.test import Client

from sessions_admin import deletion
from sessions_admin.models import DeletionAudit
from sessions_admin.store import frames as store_frames
from tests.conftest import STORE_DB, point_store_at
from tests.frames_files import (
    frame,
    text,
    write_request,
)

pytestmark = STORE_DB


# --- Orphans --------------------------------------------------------------------------


def orphans_setup(store, old) -> None:
    kept = store.add_session("sess_kept")
    write_request(store, kept, "req", [frame(0)], mtime=old)
    write_request(store, "sess_orphan1", "req", [frame(0), frame(1)], mtime=old)
    write_request(store, "sess_orphan2", "req", [frame(0)], mtime=old)
    store.add_session("sess_nodir")


def test_it_lists_orphans_with_sizes_and_total_disk_use(store, staff_client, old):
    orphans_setup(store, old)
    (store.frames_root / "a-link").symlink_to(store.frames_root / "sess_kept")

    body = text(staff_client.get("/frames/orphans/"))

    assert "sess_orphan1" in body and "sess_orphan2" in body
    assert 'value="sess_kept"' not in body
    total = sum(p.stat().st_size for p in store.frames_root.glob("sess_*/*.jsonl"))
    assert f"({total:,} bytes)" in body
    assert '<strong class="orphan-count">2</strong>' in body
    assert "a-link" in body and "skipped: symlink" in body
    # Sessions without a directory, for information.
    assert '<strong class="without-dir-count">1</strong>' in body
    assert "sess_nodir" in body


def test_removing_selected_orphans_is_audited(store, staff_client, old):
    orphans_setup(store, old)
    size = (store.frames_root / "sess_orphan1" / "activity-req.jsonl").stat().st_size

    response = staff_client.post("/frames/orphans/", {"session_id": ["sess_orphan1"]}, follow=True)

    assert response.redirect_chain[-1] == ("/frames/orphans/", 303)
    assert not (store.frames_root / "sess_orphan1").exists()
    assert (store.frames_root / "sess_orphan2").exists()
    assert (store.frames_root / "sess_kept").exists()
    assert "Removed 1 orphan frame directory" in text(response)
    audit = DeletionAudit.objects.get()
    assert audit.operation == DeletionAudit.Operation.ORPHAN_FRAMES
    assert audit.outcome == DeletionAudit.Outcome.OK
    assert audit.actor == "staff" and audit.frame_dirs_removed == 1
    assert audit.frame_bytes_removed == size
    assert audit.target["session_ids"] == ["sess_orphan1"]
    assert audit.sessions_deleted == audit.messages_deleted == 0
    assert store.count("sessions") == 2


def test_removing_all_orphans_needs_the_confirmation(store, staff_client, old):
    orphans_setup(store, old)
    refused = staff_client.post("/frames/orphans/", {"all": "1"}, follow=True)
    assert "Tick the confirmation box" in text(refused)
    assert (store.frames_root / "sess_orphan1").exists()
    assert not DeletionAudit.objects.exists()

    done = staff_client.post("/frames/orphans/", {"all": "1", "confirm": "1"}, follow=True)

    assert "Removed 2 orphan frame directories" in text(done)
    assert sorted(p.name for p in store.frames_root.iterdir()) == ["sess_kept"]
    audit = DeletionAudit.objects.get()
    assert audit.target["orphans"] == "all" and audit.frame_dirs_removed == 2


def test_a_directory_whose_session_exists_is_never_removed(store, staff_client, old):
    orphans_setup(store, old)
    response = staff_client.post(
        "/frames/orphans/", {"session_id": ["sess_kept", "sess_orphan2"]}, follow=True
    )
    assert (store.frames_root / "sess_kept").exists()
    assert not (store.frames_root / "sess_orphan2").exists()
    assert "1 now have a session row and were left alone" in text(response)


def test_removal_never_follows_a_symlink_or_leaves_the_root(store, staff_client, outside, old):
    orphans_setup(store, old)
    (store.frames_root / "evil").symlink_to(outside)
    response = staff_client.post(
        "/frames/orphans/", {"session_id": ["evil", "..", "../outside"]}, follow=True
    )
    assert (outside / "secret.txt").exists() and (store.frames_root / "evil").is_symlink()
    assert "3 refused" in text(response)
    assert DeletionAudit.objects.get().outcome == DeletionAudit.Outcome.PARTIAL


def test_selecting_nothing_removes_nothing(store, staff_client, old):
    orphans_setup(store, old)
    response = staff_client.post("/frames/orphans/", {}, follow=True)
    assert "Select at least one directory" in text(response)
    assert not DeletionAudit.objects.exists()


def test_a_viewer_may_not_remove_orphans(store, viewer_client, old):
    orphans_setup(store, old)
    response = viewer_client.post("/frames/orphans/", {"all": "1", "confirm": "1"})
    assert response.status_code == 403
    assert (store.frames_root / "sess_orphan1").exists()


def test_read_only_mode_refuses_removal(store, staff_client, old):
    orphans_setup(store, old)
    point_store_at(store.path, read_only=True)

    page = text(staff_client.get("/frames/orphans/"))
    response = staff_client.post("/frames/orphans/", {"session_id": ["sess_orphan1"]})

    assert "read-only mode" in page
    assert response.status_code == 403 and "read-only" in text(response)
    assert (store.frames_root / "sess_orphan1").exists()
    assert DeletionAudit.objects.get().outcome == DeletionAudit.Outcome.REFUSED


def test_removal_needs_a_csrf_token(store, old):
    orphans_setup(store, old)
    from django.contrib.auth.models import User

    user = User.objects.create_superuser("csrf", "", "pw")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/frames/orphans/", {"all": "1", "confirm": "1"})
    assert response.status_code == 403
    assert (store.frames_root / "sess_orphan1").exists()


def test_the_orphans_page_says_when_there_is_no_frames_root(
    store, staff_client, settings, tmp_path
):
    settings.FRAMES_DIR = tmp_path / "nowhere"
    body = text(staff_client.get("/frames/orphans/"))
    assert "the frames root does not exist" in body


def test_the_deletion_service_removes_every_orphan_and_reports_it(store, old, admin_user):
    orphans_setup(store, old)
    (store.frames_root / "empty_orphan").mkdir()
    result = deletion.remove_orphan_frames(actor=deletion.Actor.of(admin_user))
    assert result.frames is not None
    # The empty one is removed and counted as removed (issue 10): it was there.
    assert (result.frames.dirs_removed, result.frames.missing) == (3, 0)
    assert not (store.frames_root / "empty_orphan").exists()
    report = store_frames.scan_frame_dirs(store.frames_root, lambda ids: {"sess_kept"})
    assert report.orphans == []


def test_the_orphans_list_is_capped_but_remove_all_takes_every_one(
    store, staff_client, old, monkeypatch
):
    from sessions_admin.views.frames import orphans as views

    monkeypatch.setattr(views, "ORPHANS_SHOWN", 1)
    orphans_setup(store, old)
    body = text(staff_client.get("/frames/orphans/"))
    assert "1 older orphan not listed" in body
    assert "remove all 2 orphaned directories" in body
