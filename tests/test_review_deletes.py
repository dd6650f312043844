"""Deletes keep their promise: a deleted session's notes and labels go, its queue items
are marked "session deleted" (verdict kept, text gone), and the audit counts them.
Every row of ours names its store; another store's rows are never touched."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command

from sessions_admin import deletion
from sessions_admin.models import (
    DeletionAudit,
    Label,
    Note,
    ReviewItem,
    SessionLabel,
)
from sessions_admin.ourdata.review import labels, notes, queues
from sessions_admin.ourdata.review.forget import forget_gone
from sessions_admin.ourdata.storename import current_store
from tests.conftest import STORE_DB
from tests.deletion_rows import ACTOR, annotate, fill
from tests.jobrunner import run_pending_jobs
from tests.storebuilder import BASE_MS

pytestmark = pytest.mark.usefixtures("fast_pacing")


def annotations_of(session_id: str, store_name: str | None = None) -> tuple[int, int]:
    store = store_name or current_store()
    return (
        Note.objects.filter(store_name=store, session_id=session_id).count(),
        SessionLabel.objects.filter(store_name=store, session_id=session_id).count(),
    )


def assert_marked_deleted(item: ReviewItem) -> None:
    item.refresh_from_db()
    assert item.session_deleted and item.verdict == "fail" and item.text == ""


@STORE_DB
def test_deleting_one_session_removes_its_notes_and_labels_and_the_audit_counts_them(store):
    gone, keep = fill(store, 2)
    item = annotate(gone)
    kept_item = annotate(keep)
    result = deletion.delete_session(gone, actor=ACTOR)
    assert annotations_of(gone) == (0, 0)
    assert_marked_deleted(item)
    assert annotations_of(keep) == (2, 1)
    kept_item.refresh_from_db()
    assert not kept_item.session_deleted and kept_item.text == "broke the deploy"
    audit = DeletionAudit.objects.get(pk=result.audit_id)
    assert (audit.notes_deleted, audit.labels_removed, audit.review_items_marked) == (2, 1, 1)
    assert audit.store_name == current_store()


@STORE_DB
def test_bulk_and_retention_deletes_forget_every_batchs_annotations(store):
    ids = fill(store, 6, last_active=BASE_MS)
    for sid in ids:
        annotate(sid)
    result = deletion.delete_sessions(ids[:3], actor=ACTOR)
    audit = DeletionAudit.objects.get(pk=result.audit_id)
    assert (audit.notes_deleted, audit.labels_removed, audit.review_items_marked) == (6, 3, 3)
    result = deletion.delete_older_than(timedelta(days=1), actor=ACTOR)
    audit = DeletionAudit.objects.get(pk=result.audit_id)
    assert audit.sessions_deleted == 3 and audit.notes_deleted == 6
    assert Note.objects.count() == 0 and SessionLabel.objects.count() == 0
    assert ReviewItem.objects.filter(session_deleted=False).count() == 0


@STORE_DB
def test_the_clear_all_job_adds_each_batchs_annotations_to_the_audit(store, monkeypatch):
    ids = fill(store, 5)
    for sid in ids:
        annotate(sid)
    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 2)  # three batches, not one
    audit = deletion.request_clear_all(actor=ACTOR, expected_sessions=5).audit
    assert run_pending_jobs() == 1
    audit.refresh_from_db()
    assert audit.job.runs == 1 and audit.sessions_deleted == 5
    assert (audit.notes_deleted, audit.labels_removed, audit.review_items_marked) == (10, 5, 5)


@STORE_DB
def test_another_stores_rows_are_never_touched(store):
    (sid,) = fill(store, 1)
    elsewhere = annotate(sid, store_name="other-host")
    deletion.delete_session(sid, actor=ACTOR)
    assert annotations_of(sid, "other-host") == (2, 1)
    elsewhere.refresh_from_db()
    assert not elsewhere.session_deleted


@STORE_DB
def test_sync_index_forgets_the_annotations_of_sessions_the_runtime_deleted(store, var_dir):
    gone, keep = fill(store, 2)
    item = annotate(gone)
    annotate(keep)
    with store.connect() as conn:  # the runtime's own cascade, not ours
        conn.execute("DELETE FROM session_messages WHERE session_id = ?", (gone,))
        conn.execute("DELETE FROM session_state WHERE session_id = ?", (gone,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (gone,))
    out = io.StringIO()
    call_command("sync_index", stdout=out)
    assert annotations_of(gone) == (0, 0) and annotations_of(keep) == (2, 1)
    assert_marked_deleted(item)
    assert "1 annotated sessions are gone" in out.getvalue()


@STORE_DB
def test_the_audit_admin_shows_only_this_stores_deletes(store, admin_client):
    DeletionAudit.objects.create(actor="here", operation="clear_all", target={})
    DeletionAudit.objects.create(
        actor="there", operation="clear_all", target={}, store_name="other-host"
    )
    page = admin_client.get("/admin/sessions_admin/deletionaudit/").content.decode()
    assert "here" in page and "there" not in page


@STORE_DB
def test_the_dashboards_delete_button_takes_the_annotations_too(store, staff_client):
    (sid,) = fill(store, 1)
    item = annotate(sid)
    response = staff_client.post(f"/sessions/{sid}/delete/", {"wipe_frames": "0"})
    assert response.status_code == 303
    assert annotations_of(sid) == (0, 0)
    assert_marked_deleted(item)
    audit = DeletionAudit.objects.get()
    assert (audit.notes_deleted, audit.labels_removed, audit.review_items_marked) == (2, 1, 1)
    queue_page = staff_client.get(f"/reviews/{item.queue_id}/").content.decode()
    assert "session deleted" in queue_page and "broke the deploy" not in queue_page


@STORE_DB
def test_erasing_a_principal_takes_their_sessions_annotations_and_counts_them(store):
    from sessions_admin.deletion.erasure import erase_principal

    theirs = fill(store, 2, principal="user:erased", prefix="e")
    (other,) = fill(store, 1, principal="user:kept", prefix="k")
    items = [annotate(sid) for sid in (*theirs, other)]
    receipt = erase_principal("user:erased", actor=ACTOR)
    assert all(annotations_of(sid) == (0, 0) for sid in theirs)
    assert annotations_of(other) == (2, 1)
    for item in items[:2]:
        assert_marked_deleted(item)
    audit = DeletionAudit.objects.get(pk=receipt.audit_id)
    assert (audit.notes_deleted, audit.labels_removed, audit.review_items_marked) == (4, 2, 2)
    assert receipt.store_name == audit.store_name == current_store()


@STORE_DB
def test_a_session_re_created_under_its_id_drops_what_was_written_about_the_old_one(store):
    old, kept = fill(store, 2)
    user, _ = User.objects.get_or_create(username="reviewer")
    label, _ = Label.objects.get_or_create(name="regression")
    notes.add_note(old, "about the first one", message_id=None, author=user)
    labels.add_label(old, label, user)
    queue = queues.make_queue("re", "/sessions/", [old, kept], capped=False, user=user)
    annotate(kept)  # rows written before creation times were recorded: they adopt the current
    with store.connect() as conn:  # the runtime deletes the session, then creates the id anew
        conn.execute("DELETE FROM session_messages WHERE session_id = ?", (old,))
        conn.execute("DELETE FROM session_state WHERE session_id = ?", (old,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (old,))
        conn.execute(
            "INSERT INTO sessions (id, target_key, created_at, last_active) VALUES (?, 't', ?, ?)",
            (old, BASE_MS + 5000, BASE_MS + 5000),
        )
    notes.add_note(old, "about the new one", message_id=None, author=user)
    forgotten, _ = forget_gone()
    assert list(Note.objects.filter(session_id=old).values_list("text", flat=True)) == [
        "about the new one"
    ]
    assert not SessionLabel.objects.filter(session_id=old).exists()
    assert ReviewItem.objects.get(queue=queue, session_id=old).session_deleted
    assert (forgotten.notes, forgotten.labels, forgotten.items) == (1, 1, 1)
    assert annotations_of(kept) == (2, 1)  # the untouched session keeps everything
    assert not ReviewItem.objects.get(queue=queue, session_id=kept).session_deleted
    forget_gone()  # and the next pass, now that they recorded its creation, keeps them too
    assert annotations_of(kept) == (2, 1)
    assert Note.objects.filter(session_id=kept, session_created_at=BASE_MS).count() == 2
