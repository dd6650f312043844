"""The deletion service: the runtime's cascade, its bulk forms, frames and the audit."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from datetime import timedelta

import pytest
from django.db import connections

from sessions_admin.models import DeletionAudit
from sessions_admin.store import deletion
from sessions_admin.store.connection import StoreReadOnly
from sessions_admin.store.deletion import Actor
from sessions_admin.store.queries import SessionFilter
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import BASE_MS

ACTOR = Actor(name="tester")


@pytest.fixture(autouse=True)
def fast_pacing(monkeypatch):
    """Small batches and short pauses, so bulk paths run many batches quickly."""
    monkeypatch.setattr(deletion.bulk, "MIN_PAUSE_MS", 0)
    monkeypatch.setattr(deletion.bulk, "PAUSE_FRACTION", 0)


def fill(
    store,
    sessions: int,
    messages: int = 3,
    *,
    principal: str = "user:alice",
    prefix: str = "s",
    last_active: int = BASE_MS,
    state: bool = True,
) -> list[str]:
    ids = [f"{prefix}{n:05d}" for n in range(sessions)]
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count,"
            " created_at, last_active) VALUES (?, 't', 'default', ?, 'x', 0, ?, ?)",
            [(sid, principal, last_active, last_active) for sid in ids],
        )
        conn.executemany(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES (?, 'user', 'm', ?)",
            [(sid, last_active) for sid in ids for _ in range(messages)],
        )
        if state:
            conn.executemany(
                "INSERT INTO session_state (session_id, key, value, updated_at) "
                "VALUES (?, 'repl_state', '{}', 0)",
                [(sid,) for sid in ids],
            )
    return ids


def rows_of(store, session_id: str) -> tuple[int, int, int]:
    return (
        store.execute("SELECT COUNT(*) FROM sessions WHERE id = ?", (session_id,))[0][0],
        store.execute("SELECT COUNT(*) FROM session_messages WHERE session_id = ?", (session_id,))[
            0
        ][0],
        store.execute("SELECT COUNT(*) FROM session_state WHERE session_id = ?", (session_id,))[0][
            0
        ],
    )


def other_tables(store) -> dict:
    return {
        "schema": store.schema_objects(),
        "memory": store.execute("SELECT * FROM memory_records ORDER BY id"),
        "user_version": store.execute("PRAGMA user_version"),
    }


class Recorder:
    """Every statement sent to the store, and whether it ran inside a transaction."""

    def __init__(self) -> None:
        self.statements: list[tuple[str, tuple, bool]] = []

    def __call__(self, execute, sql, params, many, context):
        connection = connections["agents"]
        self.statements.append(
            (sql.replace("%s", "?"), tuple(params or ()), connection.in_atomic_block)
        )
        return execute(sql, params, many, context)

    def writes(self) -> list[tuple[str, tuple, bool]]:
        return [s for s in self.statements if not s[0].lstrip().upper().startswith("SELECT")]


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
    real = deletion.cascade.frames.remove_session_dir
    rows_at_removal = []

    def spy(root, session_id):
        # Another connection (the runtime's) already sees the rows gone: committed.
        rows_at_removal.append(rows_of(store, session_id))
        return real(root, session_id)

    monkeypatch.setattr(deletion.cascade.frames, "remove_session_dir", spy)
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


# --- Bulk ----------------------------------------------------------------------------


@STORE_DB
def test_a_filtered_delete_dry_run_counts_first_then_removes_only_that_principal(store):
    fill(store, 30, 4, principal="user:bob", prefix="bob")
    keep = fill(store, 10, 2, principal="user:alice", prefix="alice")
    before = other_tables(store)
    dry = deletion.delete_filtered(SessionFilter(principal="user:bob"), actor=ACTOR, dry_run=True)
    assert dry.dry_run and (dry.counts.sessions, dry.counts.messages, dry.counts.state) == (
        30,
        120,
        30,
    )
    assert store.count("sessions") == 40 and not DeletionAudit.objects.exists()
    result = deletion.delete_filtered(SessionFilter(principal="user:bob"), actor=ACTOR)
    assert (result.counts.sessions, result.counts.messages, result.counts.state) == (30, 120, 30)
    assert store.count("sessions") == 10 and all(rows_of(store, s) == (1, 2, 1) for s in keep)
    assert other_tables(store) == before
    audit = DeletionAudit.objects.get()
    assert audit.operation == "delete_filtered" and audit.target["filter"] == {
        "principal": "user:bob"
    }
    assert audit.sessions_deleted == 30 and audit.outcome == "ok"


@STORE_DB
def test_a_filtered_delete_uses_whole_session_batches_with_the_three_statements_each(
    store, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "INITIAL_ROW_BUDGET", 10)
    monkeypatch.setattr(deletion.bulk, "MIN_ROW_BUDGET", 10)
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 10)
    fill(store, 12, 3)
    recorder = Recorder()
    with connections["agents"].execute_wrapper(recorder):
        result = deletion.delete_filtered(SessionFilter(principal="user:alice"), actor=ACTOR)
    writes = [sql.split(" WHERE")[0] for sql, _, _ in recorder.writes()]
    assert result.batches == 6
    assert (
        writes
        == [
            "BEGIN IMMEDIATE",
            "DELETE FROM session_messages",
            "DELETE FROM session_state",
            "DELETE FROM sessions",
        ]
        * 6
    )
    assert all(in_tx for sql, _, in_tx in recorder.writes() if sql.startswith("DELETE"))
    assert store.count("sessions") == store.count("session_messages") == 0


@STORE_DB
def test_clear_all_empties_the_three_tables_and_keeps_schema_and_other_tables(store):
    fill(store, 50, 5)
    before = other_tables(store)
    result = deletion.clear_all(actor=ACTOR)
    assert (result.counts.sessions, result.counts.messages, result.counts.state) == (50, 250, 50)
    assert store.count("sessions") == store.count("session_messages") == 0
    assert store.count("session_state") == 0
    assert other_tables(store) == before
    audit = DeletionAudit.objects.get()
    assert audit.operation == "clear_all" and audit.target["all"] is True
    assert audit.messages_deleted == 250


@STORE_DB
def test_retention_deletes_sessions_idle_longer_than_the_age_and_keeps_the_rest(store):
    now_ms = int(time.time() * 1000)
    old = fill(store, 5, 2, prefix="old", last_active=now_ms - 100 * 86_400_000)
    new = fill(store, 5, 2, prefix="new", last_active=now_ms - 10 * 86_400_000)
    dry = deletion.delete_older_than(timedelta(days=90), actor=ACTOR, dry_run=True)
    assert dry.counts.sessions == 5
    result = deletion.delete_older_than(timedelta(days=90), actor=ACTOR)
    assert result.counts.sessions == 5
    assert all(rows_of(store, s) == (0, 0, 0) for s in old)
    assert all(rows_of(store, s) == (1, 2, 1) for s in new)
    assert DeletionAudit.objects.get().operation == "retention"


@STORE_DB
def test_a_session_that_becomes_active_during_retention_is_left_whole(store, monkeypatch):
    now_ms = int(time.time() * 1000)
    ids = fill(store, 4, 2, last_active=now_ms - 100 * 86_400_000)
    real = deletion.bulk.child_counts

    def runtime_appends_between_selection_and_delete(session_ids):
        # The trigger moves last_active to the new message's time.
        store.add_message(ids[0], ts=now_ms)
        return real(session_ids)

    monkeypatch.setattr(deletion.bulk, "child_counts", runtime_appends_between_selection_and_delete)
    result = deletion.delete_older_than(timedelta(days=90), actor=ACTOR)
    assert result.counts.sessions == 3 and result.skipped == 1
    assert rows_of(store, ids[0]) == (1, 3, 1)
    assert all(rows_of(store, s) == (0, 0, 0) for s in ids[1:])


@STORE_DB
def test_a_bulk_delete_interrupted_inside_a_batch_leaves_no_half_deleted_session(
    store, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "INITIAL_ROW_BUDGET", 20)
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 20)
    ids = fill(store, 40, 4)
    real = deletion.cascade.run_sql
    calls = {"n": 0}

    def crash_on_the_third_batchs_session_delete(sql, params=()):
        if sql.startswith("DELETE FROM sessions"):
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("killed")
        return real(sql, params)

    monkeypatch.setattr(deletion.cascade, "run_sql", crash_on_the_third_batchs_session_delete)
    with pytest.raises(RuntimeError):
        deletion.clear_all(actor=ACTOR)
    states = {rows_of(store, s) for s in ids}
    assert states <= {(1, 4, 1), (0, 0, 0)}
    assert (0, 0, 0) in states and (1, 4, 1) in states
    gone = sum(1 for s in ids if rows_of(store, s) == (0, 0, 0))
    audit = DeletionAudit.objects.get()
    assert audit.outcome == "failed" and "killed" in audit.detail
    assert audit.sessions_deleted == gone  # the audit's counts are exactly what is gone


@STORE_DB
def test_a_bulk_delete_stopped_between_batches_leaves_every_session_whole_or_gone(
    store, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "INITIAL_ROW_BUDGET", 50)
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 50)
    ids = fill(store, 60, 3)

    def stop(counts, batches):
        if batches == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        deletion.clear_all(actor=ACTOR, on_batch=stop)
    assert {rows_of(store, s) for s in ids} == {(1, 3, 1), (0, 0, 0)}
    assert DeletionAudit.objects.get().outcome == "failed"


@STORE_DB
def test_a_concurrent_appender_gets_no_error_and_loses_no_write_during_a_bulk_delete(
    store, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "MIN_PAUSE_MS", 25)
    monkeypatch.setattr(deletion.bulk, "PAUSE_FRACTION", 0.4)
    monkeypatch.setattr(deletion.bulk, "INITIAL_ROW_BUDGET", 200)
    fill(store, 1500, 8, principal="user:bob", prefix="bob")
    live = fill(store, 3, 0, principal="user:alice", prefix="live")
    stop = threading.Event()
    errors: list[str] = []
    waits: list[float] = []
    written = [0]

    def appender():
        conn = sqlite3.connect(store.path, timeout=10, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        n = 0
        while not stop.is_set():
            started = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
                waits.append(time.perf_counter() - started)
                conn.execute(
                    "INSERT INTO session_messages (session_id, role, content, ts) "
                    "VALUES (?, 'user', 'live', ?)",
                    (live[n % 3], BASE_MS + n),
                )
                conn.execute("COMMIT")
                written[0] += 1
            except sqlite3.Error as exc:
                errors.append(str(exc))
            n += 1
            time.sleep(0.002)
        conn.close()

    thread = threading.Thread(target=appender)
    thread.start()
    try:
        result = deletion.delete_filtered(SessionFilter(principal="user:bob"), actor=ACTOR)
    finally:
        stop.set()
        thread.join()
    assert result.counts.sessions == 1500 and result.batches > 1
    assert errors == []
    assert written[0] > 0
    assert store.count("session_messages") == written[0]
    assert max(waits) < 1.0


@STORE_DB
def test_the_stepped_clear_all_resumes_from_its_audit_row_until_done(store, monkeypatch):
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 30)
    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 20)
    fill(store, 100, 2)
    audit = deletion.start_clear_all(actor=ACTOR, expected_sessions=100)
    steps = 0
    while True:
        steps += 1
        result = deletion.continue_clear_all(audit, seconds=0.0 if steps < 3 else 30)
        audit.refresh_from_db()
        if result.done:
            break
        assert audit.outcome == "running" and audit.sessions_deleted == result.counts.sessions
    assert steps == 3
    assert audit.outcome == "ok" and audit.sessions_deleted == 100 and audit.messages_deleted == 200
    assert store.count("sessions") == 0


@STORE_DB
def test_selected_sessions_are_deleted_by_the_cascade(store):
    ids = fill(store, 5, 2)
    result = deletion.delete_sessions(ids[:3], actor=ACTOR)
    assert result.counts.sessions == 3
    assert [rows_of(store, s) for s in ids] == [(0, 0, 0)] * 3 + [(1, 2, 1)] * 2


# --- Orphans -------------------------------------------------------------------------


@STORE_DB
def test_orphaned_children_are_reported_and_removed_without_touching_sessions(store):
    keep = fill(store, 2, 2)
    with sqlite3.connect(store.path) as conn:  # foreign keys off: a crashed writer's leftovers
        conn.execute(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES ('ghost', 'user', 'x', 1)"
        )
        conn.execute(
            "INSERT INTO session_state (session_id, key, value, updated_at) "
            "VALUES ('ghost2', 'k', '1', 1)"
        )
    found = deletion.find_orphaned_children()
    assert (found.session_ids, found.messages, found.state) == (["ghost", "ghost2"], 1, 1)
    recorder = Recorder()
    with connections["agents"].execute_wrapper(recorder):
        result = deletion.remove_orphaned_children(actor=ACTOR)
    assert not any("FROM sessions" in sql for sql, _, _ in recorder.writes())
    assert (result.counts.sessions, result.counts.messages, result.counts.state) == (0, 1, 1)
    assert all(rows_of(store, s) == (1, 2, 1) for s in keep)
    assert deletion.find_orphaned_children().session_ids == []
    assert DeletionAudit.objects.get().operation == "orphan_children"


# --- Read-only -----------------------------------------------------------------------


@STORE_DB
def test_read_only_mode_refuses_every_delete_and_audits_the_refusal(store):
    sid = store.add_session("ro")
    store.add_message(sid)
    point_store_at(store.path, read_only=True)
    for attempt in (
        lambda: deletion.delete_session(sid, actor=ACTOR),
        lambda: deletion.clear_all(actor=ACTOR),
        lambda: deletion.delete_filtered(SessionFilter(principal="user:alice"), actor=ACTOR),
        lambda: deletion.delete_older_than(timedelta(days=1), actor=ACTOR),
        lambda: deletion.remove_orphaned_children(actor=ACTOR),
        lambda: deletion.start_clear_all(actor=ACTOR, expected_sessions=1),
    ):
        with pytest.raises(StoreReadOnly):
            attempt()
    assert rows_of(store, sid) == (1, 1, 0)
    assert set(DeletionAudit.objects.values_list("outcome", flat=True)) == {"refused"}
    assert DeletionAudit.objects.count() == 6
    # Counting what would go still works.
    assert deletion.clear_all(actor=ACTOR, dry_run=True).counts.sessions == 1


@STORE_DB
def test_sessions_the_runtime_creates_during_a_clear_all_are_not_part_of_it(store, monkeypatch):
    monkeypatch.setattr(deletion.bulk, "INITIAL_ROW_BUDGET", 20)
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 20)
    fill(store, 50, 3)
    created = []

    def runtime_creates_a_session(counts, batches):
        if batches == 1:
            created.append(store.add_session("fresh"))
            store.add_message("fresh")

    result = deletion.clear_all(actor=ACTOR, on_batch=runtime_creates_a_session)
    assert result.counts.sessions == 50 and created == ["fresh"]
    assert rows_of(store, "fresh") == (1, 1, 0)
