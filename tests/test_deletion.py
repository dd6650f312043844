"""The deletion service for one session: the runtime's cascade, its audit, the frames."""

from __future__ import annotations

import os
import sqlite3

import pytest
from django.db import connections

from sessions_admin import deletion
from sessions_admin.deletion import Actor
from sessions_admin.models import DeletionAudit
from sessions_admin.store import frames as store_frames
from tests.conftest import STORE_DB
from tests.deletion_rows import ACTOR, Recorder, other_tables, rows_of

pytestmark = pytest.mark.usefixtures("fast_pacing")


# --- One session ---------------------------------------------------------------------


@STORE_DB
def test_it_deletes_one_session_with_exactly_the_runtimes_three_statements_in_one_transaction(
    store,
):
    sid = store.add_session("sess_one")
    for _ in range(3):
        store.add_message(sid)
    store.add_state(sid, "repl_state", {"a": 1})
    store.add_state(sid, "snapshot", {"b": 2})
    recorder = Recorder()
    with connections["agents"].execute_wrapper(recorder):
        result = deletion.delete_session(sid, actor=ACTOR)
    assert [(sql, params) for sql, params, _ in recorder.statements] == [
        ("BEGIN IMMEDIATE", ()),
        ("DELETE FROM session_messages WHERE session_id = ?", ("sess_one",)),
        ("DELETE FROM session_state WHERE session_id = ?", ("sess_one",)),
        ("DELETE FROM sessions WHERE id = ?", ("sess_one",)),
    ]
    assert all(in_tx for sql, _, in_tx in recorder.statements if sql.startswith("DELETE"))
    assert (result.counts.sessions, result.counts.messages, result.counts.state) == (1, 3, 2)
    assert result.describe() == "3 messages, 2 state rows"
    assert rows_of(store, sid) == (0, 0, 0)


@STORE_DB
def test_it_changes_nothing_outside_the_three_tables_and_leaves_other_sessions_whole(store):
    keep = store.add_session("keep")
    store.add_message(keep)
    store.add_state(keep, "snapshot", {})
    gone = store.add_session("gone")
    store.add_message(gone)
    before = other_tables(store)
    deletion.delete_session(gone, actor=ACTOR)
    assert other_tables(store) == before
    assert rows_of(store, keep) == (1, 1, 1)
    assert rows_of(store, gone) == (0, 0, 0)


@STORE_DB
def test_it_deletes_children_first_because_the_foreign_keys_are_enforced(store):
    sid = store.add_session("fk")
    store.add_message(sid)
    store.add_state(sid, "k", 1)
    # With foreign keys on (as the runtime runs), the parent row cannot go first…
    with pytest.raises(sqlite3.IntegrityError), store.connect() as conn:
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    # …and the dashboard's own connection has them on too.
    with connections["agents"].cursor() as cursor:
        cursor.execute("PRAGMA foreign_keys")
        assert cursor.fetchone()[0] == 1
    deletion.delete_session(sid, actor=ACTOR)
    assert store.execute("PRAGMA foreign_key_check") == []
    assert rows_of(store, sid) == (0, 0, 0)


@STORE_DB
def test_a_missing_session_is_refused_and_audited(store):
    with pytest.raises(deletion.SessionNotFound):
        deletion.delete_session("nope", actor=ACTOR)
    audit = DeletionAudit.objects.get()
    assert audit.outcome == "refused"
    assert audit.target == {"session_ids": ["nope"]}


@STORE_DB
def test_it_writes_an_audit_row_with_actor_target_counts_and_outcome(store, admin_user):
    sid = store.add_session("audited")
    store.add_message(sid)
    store.add_message(sid)
    result = deletion.delete_session(sid, actor=Actor.of(admin_user))
    audit = DeletionAudit.objects.get(pk=result.audit_id)
    assert audit.user == admin_user and audit.actor == "root"
    assert audit.operation == "delete_session"
    assert audit.target == {"session_ids": ["audited"]}
    assert (audit.sessions_deleted, audit.messages_deleted, audit.state_deleted) == (1, 2, 0)
    assert audit.outcome == "ok" and audit.finished_at is not None


@STORE_DB
def test_the_audit_row_says_running_while_the_store_is_being_changed(store, monkeypatch):
    sid = store.add_session("watched")
    seen = []
    real = deletion.cascade.cascade_delete

    def spy(*args, **kwargs):
        seen.append(list(DeletionAudit.objects.values_list("outcome", flat=True)))
        return real(*args, **kwargs)

    monkeypatch.setattr(deletion.cascade, "cascade_delete", spy)
    deletion.delete_session(sid, actor=ACTOR)
    assert seen == [["running"]]
    assert DeletionAudit.objects.get().outcome == "ok"


# --- Frames --------------------------------------------------------------------------


def make_frames(root, session_id: str, size: int = 100) -> None:
    path = root / session_id
    path.mkdir(parents=True)
    (path / "activity-req1.jsonl").write_bytes(b"{}\n" * (size // 3))


@STORE_DB
def test_wiping_everything_removes_the_frames_directory_after_the_rows_are_committed(
    store, monkeypatch
):
    sid = store.add_session("wipe_me")
    store.add_message(sid)
    make_frames(store.frames_root, sid, 300)
    real = store_frames.remove_session_dir
    rows_at_removal = []

    def spy(root, session_id):
        # Another connection (the runtime's) already sees the rows gone: committed.
        rows_at_removal.append(rows_of(store, session_id))
        return real(root, session_id)

    monkeypatch.setattr(store_frames, "remove_session_dir", spy)
    result = deletion.delete_session(sid, actor=ACTOR, wipe_frames=True)
    assert rows_at_removal == [(0, 0, 0)]
    assert not (store.frames_root / sid).exists()
    assert result.frames.dirs_removed == 1 and result.frames.bytes_removed == 300
    audit = DeletionAudit.objects.get()
    assert audit.operation == "wipe_session" and audit.frame_dirs_removed == 1
    assert audit.frame_bytes_removed == 300 and audit.outcome == "ok"


@STORE_DB
def test_a_symlinked_frames_directory_is_neither_followed_nor_removed_but_the_rows_go(
    store, tmp_path
):
    sid = store.add_session("linked")
    outside = tmp_path / "precious"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    os.symlink(outside, store.frames_root / sid)
    result = deletion.delete_session(sid, actor=ACTOR, wipe_frames=True)
    assert rows_of(store, sid) == (0, 0, 0)
    assert (outside / "keep.txt").read_text() == "keep"
    assert os.path.islink(store.frames_root / sid)
    assert result.frames.dirs_removed == 0
    assert result.frames.refused and "symbolic link" in result.frames.refused[0][1]
    audit = DeletionAudit.objects.get()
    assert audit.outcome == "partial" and "symbolic link" in audit.detail


@pytest.mark.parametrize("odd_id", ["../victim", "..", "a/../../victim", "/tmp/victim", ""])
@STORE_DB
def test_an_id_that_would_escape_the_frames_root_is_refused_and_nothing_outside_is_removed(
    store, odd_id
):
    victim = store.home / "victim"
    victim.mkdir()
    (victim / "data").write_text("x")
    store.add_session(odd_id)
    store.add_message(odd_id)
    result = deletion.delete_session(odd_id, actor=ACTOR, wipe_frames=True)
    assert rows_of(store, odd_id) == (0, 0, 0)
    assert (victim / "data").read_text() == "x"
    assert store.frames_root.is_dir()
    assert result.frames.refused and result.frames.dirs_removed == 0


@STORE_DB
def test_an_id_with_spaces_and_unicode_has_its_frames_removed(store):
    sid = "séance 🙂 #1?"
    store.add_session(sid)
    make_frames(store.frames_root, sid)
    result = deletion.delete_session(sid, actor=ACTOR, wipe_frames=True)
    assert result.frames.dirs_removed == 1 and not result.frames.refused
    assert not (store.frames_root / sid).exists()


@STORE_DB
def test_the_preview_counts_messages_state_and_the_frames_size(store):
    sid = store.add_session("preview")
    store.add_message(sid)
    store.add_state(sid, "a", 1)
    make_frames(store.frames_root, sid, 300)
    preview = deletion.preview_session(sid)
    assert (preview.messages, preview.state, preview.frames_bytes, preview.frames_files) == (
        1,
        1,
        300,
        1,
    )
    assert deletion.preview_session("../x").frames_refusal
