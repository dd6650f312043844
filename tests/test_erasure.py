"""Erasing a principal: everything of theirs gone, proven by a receipt; nothing else touched."""

from __future__ import annotations

import pytest

from sessions_admin.deletion import bulk, jobs
from sessions_admin.deletion.erasure import StalePhrase, erase_principal, erasure_phrase
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.store import cascade as store_cascade
from sessions_admin.store.connection import StoreReadOnly
from tests import erasuredata as E
from tests.conftest import STORE_DB, point_store_at
from tests.deletion_rows import ACTOR, fill
from tests.runtime_writer import Appender

pytestmark = [pytest.mark.usefixtures("fast_pacing", "var_dir"), STORE_DB]


def test_the_phrase_names_the_count_and_the_principal():
    assert erasure_phrase("user:alice", 14) == "erase 14 sessions of user:alice"
    assert erasure_phrase("u", 1) == "erase 1 session of u"


def test_an_erasure_leaves_nothing_of_the_principal_and_touches_no_one_else(store):
    world = E.build(store)
    bob_before = E.exact_counts(store, E.BOB)
    others = "SELECT * FROM rollup_principal WHERE principal != ? ORDER BY principal"
    others_before = E.side_rows(others, (E.ALICE,))
    assert E.search_hits(E.ALICE_ONLY) == set(world.alice)
    receipt = erase_principal(E.ALICE, actor=ACTOR, confirm="erase 3 sessions of user:alice")
    assert receipt.status == Erasure.Status.OK, receipt.detail
    assert E.exact_counts(store, E.ALICE) == (0, 0, 0)
    for table, column in (("sessions", "id"), ("session_messages", "session_id")):
        marks = ",".join("?" * len(world.alice))
        sql = f"SELECT count(*) FROM {table} WHERE {column} IN ({marks})"
        assert store.execute(sql, tuple(world.alice))[0][0] == 0
    assert not any((store.frames_root / sid).exists() for sid in world.alice)
    assert E.search_hits(E.ALICE_ONLY) == set()
    assert E.side_rows("SELECT * FROM rollup_principal_day WHERE principal = ?", (E.ALICE,)) == []
    assert E.side_rows("SELECT * FROM rollup_principal WHERE principal = ?", (E.ALICE,)) == []
    assert E.side_rows("SELECT * FROM search_sessions WHERE principal_id = ?", (E.ALICE,)) == []
    audit = DeletionAudit.objects.get(actor="earlier")
    assert audit.target["session_ids"] == ["sess_other"] and audit.target["ids_erased"] == 1
    # Bob: his rows, his frames, his rollups, and his session that mentions alice.
    assert E.exact_counts(store, E.BOB) == bob_before
    assert (store.frames_root / world.bob[0]).is_dir()
    assert E.search_hits("talked to") == set(world.bob)
    ((sessions, messages),) = E.side_rows(
        "SELECT sessions, messages FROM rollup_principal WHERE principal = ?", (E.BOB,)
    )
    assert (sessions, messages) == bob_before[:2]
    assert E.side_rows(others, (E.ALICE,)) == others_before


def test_the_receipt_counts_what_was_there_and_hashes_the_erased_ids(store):
    world = E.build(store)
    sessions, messages, state = E.exact_counts(store, E.ALICE)
    receipt = erase_principal(E.ALICE, actor=ACTOR)
    assert (receipt.sessions, receipt.messages, receipt.state_rows) == (sessions, messages, state)
    assert receipt.frame_dirs == 3 and receipt.frame_bytes == sum(10 * n for n in (1, 2, 3))
    assert receipt.our_records == 1
    assert receipt.index_entries == sessions + messages  # session and message entries
    assert receipt.rollup_rows > 0
    assert receipt.ids_sha256 == E.sha256_of(world.alice)
    assert set(receipt.verification.values()) == {0} and receipt.appeared == 0
    assert receipt.started_at <= receipt.finished_at
    audit = DeletionAudit.objects.get(pk=receipt.audit_id)
    assert audit.operation == "erase_principal" and audit.outcome == "ok"
    assert audit.target == {"principal": E.ALICE}  # no session id in our own new record


def test_a_wrong_or_stale_phrase_refuses_and_erases_nothing(store):
    E.build(store)
    for typed in ("erase 2 sessions of user:alice", "erase 3 sessions of user:bob", ""):
        with pytest.raises(StalePhrase) as refused:
            erase_principal(E.ALICE, actor=ACTOR, confirm=typed)
        assert refused.value.expected == "erase 3 sessions of user:alice"
    assert E.exact_counts(store, E.ALICE)[0] == 3
    assert not Erasure.objects.exists()


def test_a_read_only_store_refuses_with_its_sentence_and_no_receipt(store):
    E.build(store)
    point_store_at(store.path, read_only=True)
    with pytest.raises(StoreReadOnly):
        erase_principal(E.ALICE, actor=ACTOR)
    assert not Erasure.objects.exists()
    assert DeletionAudit.objects.get(operation="erase_principal").outcome == "refused"
    assert E.exact_counts(store, E.ALICE)[0] == 3


def test_a_failure_half_way_leaves_a_partial_receipt_and_a_second_run_finishes(store, monkeypatch):
    E.build(store, alice_sessions=6)
    monkeypatch.setattr(bulk, "MAX_BATCH_SESSIONS", 2)
    real = store_cascade.run_sql
    calls = {"n": 0}

    def fail_on_the_second_batch(sql, params=()):
        if sql.startswith("DELETE FROM sessions"):
            calls["n"] += 1
            if calls["n"] == 2:
                raise store_cascade.StoreReadOnly()
        return real(sql, params)

    monkeypatch.setattr(store_cascade, "run_sql", fail_on_the_second_batch)
    first = erase_principal(E.ALICE, actor=ACTOR)
    assert first.status == Erasure.Status.PARTIAL
    assert first.sessions == 2 and first.verification["sessions"] == 4
    assert "stopped" in first.detail and "4 sessions" in first.detail
    monkeypatch.setattr(store_cascade, "run_sql", real)
    second = erase_principal(E.ALICE, actor=ACTOR)
    assert second.status == Erasure.Status.OK and second.sessions == 4
    assert E.exact_counts(store, E.ALICE) == (0, 0, 0)


def test_a_session_made_during_the_erasure_is_caught_or_reported(store, monkeypatch):
    E.build(store)
    made = []
    real = jobs.cascade_delete

    def runtime_makes_one(*args, **kwargs):
        done = real(*args, **kwargs)
        made.append(store.add_session(f"sess_new{len(made)}", principal=E.ALICE))
        return done

    monkeypatch.setattr(jobs, "cascade_delete", runtime_makes_one)
    receipt = erase_principal(E.ALICE, actor=ACTOR)
    left = E.exact_counts(store, E.ALICE)[0]
    # Those made during the first pass were caught by the second; the rest are reported.
    assert receipt.sessions == 3 + len(made) - left
    assert left >= 1 and receipt.appeared == left
    assert receipt.status == Erasure.Status.PARTIAL
    assert f"{left} session" in receipt.detail and "appeared during the erasure" in receipt.detail


def test_a_frames_symlink_is_unlinked_never_followed_and_named_on_the_receipt(store, tmp_path):
    world = E.build(store)
    victim = store.frames_root / world.alice[1]
    for child in victim.iterdir():
        child.unlink()
    victim.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.jsonl").write_text("{}\n")
    victim.symlink_to(elsewhere)
    receipt = erase_principal(E.ALICE, actor=ACTOR)
    assert receipt.status == Erasure.Status.OK, receipt.detail
    assert not victim.is_symlink() and not victim.exists()
    assert (elsewhere / "keep.jsonl").read_text() == "{}\n"  # the target is not touched
    assert str(elsewhere) in receipt.detail and "not touched" in receipt.detail
    again = erase_principal(E.ALICE, actor=ACTOR)
    assert again.status == Erasure.Status.OK
    assert again.detail == f"nothing left to erase; see receipt {receipt.pk}"


def test_a_frames_directory_refused_is_reported_and_retried_by_the_next_run(store, monkeypatch):
    world = E.build(store)
    victim = store.frames_root / world.alice[1]
    real = store_cascade.frames.remove_session_dir

    def refuse_once(root, session_id):
        if session_id == world.alice[1]:
            raise PermissionError(13, "Permission denied")
        return real(root, session_id)

    monkeypatch.setattr(store_cascade.frames, "remove_session_dir", refuse_once)
    receipt = erase_principal(E.ALICE, actor=ACTOR)
    assert receipt.status == Erasure.Status.PARTIAL
    assert receipt.verification["frame_dirs"] == 1
    assert receipt.pending_frames == [world.alice[1]]
    monkeypatch.setattr(store_cascade.frames, "remove_session_dir", real)
    again = erase_principal(E.ALICE, actor=ACTOR)
    assert again.status == Erasure.Status.OK and again.frame_dirs == 1
    assert not victim.exists()
    receipt.refresh_from_db()
    assert receipt.pending_frames == [] and f"finished by receipt {again.pk}" in receipt.detail


def test_an_erasure_under_a_live_appender_gives_it_no_error_and_no_long_wait(store, monkeypatch):
    monkeypatch.setattr(bulk, "MIN_PAUSE_MS", 25)
    monkeypatch.setattr(bulk, "PAUSE_FRACTION", 0.4)
    monkeypatch.setattr(bulk, "INITIAL_ROW_BUDGET", 200)
    doomed = fill(store, 800, 8, principal=E.ALICE, prefix="alice")
    live = fill(store, 3, 0, principal=E.BOB, prefix="live")
    sync.sync_once()
    with Appender(store.path, live) as appender:
        receipt = erase_principal(E.ALICE, actor=ACTOR)
    assert receipt.status == Erasure.Status.OK, receipt.detail
    assert receipt.sessions == 800 and receipt.ids_sha256 == E.sha256_of(doomed)
    assert appender.errors == [] and appender.written > 0
    assert store.count("session_messages") == appender.written
    assert max(appender.waits) < 0.5
