"""The deletion service's bulk forms: filtered sets, clear-all, retention, orphans, read-only."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import timedelta

import pytest
from django.db import connections

from sessions_admin import deletion
from sessions_admin.deletion.worker import work
from sessions_admin.models import DeletionAudit
from sessions_admin.store import cascade as store_cascade
from sessions_admin.store.connection import StoreReadOnly
from sessions_admin.store.queries import SessionFilter
from tests.conftest import STORE_DB, point_store_at
from tests.deletion_rows import ACTOR, Recorder, fill, other_tables, rows_of
from tests.storebuilder import BASE_MS

pytestmark = pytest.mark.usefixtures("fast_pacing")


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
    real = store_cascade.run_sql
    calls = {"n": 0}

    def crash_on_the_third_batchs_session_delete(sql, params=()):
        if sql.startswith("DELETE FROM sessions"):
            calls["n"] += 1
            if calls["n"] == 3:
                raise RuntimeError("killed")
        return real(sql, params)

    monkeypatch.setattr(store_cascade, "run_sql", crash_on_the_third_batchs_session_delete)
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
def test_a_clear_all_job_stopped_part_way_goes_on_from_its_row_until_done(store, monkeypatch):
    monkeypatch.setattr(deletion.bulk, "MAX_ROW_BUDGET", 30)
    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 20)
    fill(store, 100, 2)
    job = deletion.request_clear_all(actor=ACTOR, expected_sessions=100)
    asked = {"n": 0}

    def stop_after_a_few_looks() -> bool:
        asked["n"] += 1
        return asked["n"] > 6

    assert work(stop_after_a_few_looks) == 0
    job.refresh_from_db()
    audit = job.audit
    assert audit.outcome == "running" and job.lease_until is None  # released for the next
    assert 0 < job.sessions < 100 and store.count("sessions") == 100 - job.sessions
    assert work(lambda: False, once=True) == 1
    job.refresh_from_db()
    audit.refresh_from_db()
    assert job.runs == 2 and job.done
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
        lambda: deletion.request_clear_all(actor=ACTOR, expected_sessions=1),
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
