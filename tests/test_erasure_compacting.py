"""An erasure's forgetting holds the search index's purges; its job purges after the receipt.

FTS5 marks a deleted block with a tombstone and rewrites the segment once a tenth
of it is marked: inside one of an erasure's batches that rewrite took half a
minute on the bench store. These tests read the text file's own pages to tell a
rewrite from a tombstone.
"""

from __future__ import annotations

import logging

import pytest

from sessions_admin.deletion.erasure import request_erasure
from sessions_admin.deletion.worker import work
from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.ourdata.index import textindex
from sessions_admin.ourdata.jobs import Job
from sessions_admin.ourdata.sync import passes
from tests.conftest import STORE_DB
from tests.deletion_rows import ACTOR
from tests.indexdata import matching

WORDS = ["osprey", "heron", "kestrel", "plover", "curlew", "dunlin", "godwit", "avocet"]


def some_sessions(store, sessions: int, principal: str, prefix: str) -> list[str]:
    ids = []
    for s in range(sessions):
        sid = store.add_session(f"{prefix}{s}", principal=principal)
        ids.append(sid)
        for m in range(8):
            store.add_message(sid, "user", f"{WORDS[(s + m) % 8]} {prefix}{s} note {m} " * 3)
    return ids


def text_file() -> tuple[int, int]:
    """The trigram index's pages (bytes in its data table) and its ``deletemerge``."""
    conn = sidedb.connect_text()
    try:
        size = conn.execute("SELECT sum(length(block)) FROM search_text_data").fetchone()[0]
        row = conn.execute("SELECT v FROM search_text_config WHERE k = 'deletemerge'").fetchone()
        return size, (row[0] if row else textindex.DELETE_MERGE)
    finally:
        conn.close()


def one_segment() -> None:
    conn = sidedb.connect_text()
    try:
        textindex.TextIndex(conn, "main").optimize()
    finally:
        conn.close()


def delete_in_store(store, ids: list[str]) -> None:
    for sid in ids:
        store.execute("DELETE FROM session_messages WHERE session_id = ?", (sid,))
        store.execute("DELETE FROM sessions WHERE id = ?", (sid,))


@STORE_DB
@pytest.mark.parametrize("writer", ["attached file", "writer thread"])
def test_a_held_forgetting_leaves_tombstones_and_purge_steps_rewrite_them(
    store, var_dir, monkeypatch, writer
):
    if writer == "writer thread":
        monkeypatch.setattr(passes, "PARALLEL_FORGET", 1)
    gone = some_sessions(store, 20, "user:gone", "g")
    some_sessions(store, 20, "user:stays", "k")
    sync.sync_once()
    one_segment()
    before, _ = text_file()
    kept = matching("osprey")
    delete_in_store(store, gone)
    assert sync.forget_sessions(gone, hold_purges=True)
    held, merge = text_file()
    assert merge == 0 and held >= before  # tombstones added, nothing rewritten
    now = matching("osprey")
    assert now and set(now) < set(kept)  # the search already answers without them
    steps = 0
    while sync.purge_step(pages=4):
        steps += 1
        assert text_file()[1] == 0  # held between steps: no other commit does it all
    after, merge = text_file()
    assert steps >= 1 and merge == textindex.DELETE_MERGE
    assert after < before * 0.75  # half the blocks' postings are gone from the pages
    assert matching("osprey") == now
    assert not sync.purge_step()  # nothing left


@STORE_DB
def test_an_erasure_job_writes_its_receipt_then_compacts_the_index(
    store, var_dir, fast_pacing, monkeypatch, caplog
):
    from sessions_admin.deletion import jobs

    some_sessions(store, 20, "user:gone", "g")
    some_sessions(store, 20, "user:stays", "k")
    sync.sync_once()
    one_segment()
    before, _ = text_file()
    seen: list[tuple] = []
    real = jobs.purge_step

    def step(*args, **kwargs) -> bool:
        receipt = Erasure.objects.get()
        seen.append((receipt.status, receipt.job.phase, text_file()[1]))
        return real(*args, **kwargs)

    monkeypatch.setattr(jobs, "purge_step", step)
    receipt = request_erasure("user:gone", actor=ACTOR)
    caplog.set_level(logging.INFO, logger="sessions_admin.deletion")
    work(lambda: False, once=True)
    receipt.refresh_from_db()
    job = Job.objects.get()
    assert receipt.status == Erasure.Status.OK and job.done
    # The receipt was final before the first step, purges held until the steps.
    assert seen and seen[0] == (Erasure.Status.OK, Job.Phase.COMPACTING, 0)
    after, merge = text_file()
    assert merge == textindex.DELETE_MERGE and after < before * 0.75
    assert job.finished_at is not None and store.count("sessions") == 20
    # The log says the erasure ended once, not again after each later step.
    ended = [r for r in caplog.records if r.getMessage().startswith("deletion erase_principal ok")]
    assert len(ended) == 1
