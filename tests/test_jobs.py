"""Jobs and their worker: ids kept exactly, one worker per job, a dead worker's job taken
over, another store's jobs never touched, the progress a page shows."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from sessions_admin import deletion
from sessions_admin.deletion.erasure import request_erasure
from sessions_admin.deletion.worker import claim, try_claim, work
from sessions_admin.ourdata.jobs import Job, worker_name
from sessions_admin.ourdata.storeids import decode_id, encode_id
from sessions_admin.store.values import Undecodable, exact_key
from sessions_admin.views.progress import job_sentence
from tests.conftest import STORE_DB
from tests.deletion_rows import ACTOR, fill
from tests.prodserver import ROOT, clean_environment

STORE_VALUES = st.one_of(
    st.text(),
    st.binary(),
    st.binary(min_size=1).map(Undecodable),
    st.integers(min_value=-(2**63), max_value=2**63 - 1),
    st.floats(allow_nan=False),
    st.none(),
)


@given(STORE_VALUES)
def test_an_encoded_id_comes_back_exactly_and_holds_no_nul(value):
    text = encode_id(value)
    assert "\x00" not in text
    back = decode_id(text)
    assert type(back) is type(value) and exact_key(back) == exact_key(value)


def test_ids_that_read_alike_encode_apart():
    assert encode_id(Undecodable(b"\xffA")) != encode_id("\ufffdA")
    assert encode_id(Undecodable(b"a\xff")) != encode_id(Undecodable(b"a\xfe"))
    assert encode_id(b"1") != encode_id("1") != encode_id(1)


def a_job(**fields) -> Job:
    return Job.objects.create(kind=Job.Kind.CLEAR_ALL, actor="tester", **fields)


@pytest.mark.django_db
def test_a_job_held_by_a_live_worker_is_not_taken_and_a_dead_ones_is_at_once():
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        host = worker_name().rsplit(":", 1)[0]
        lease = timezone.now() + timedelta(seconds=30)
        job = a_job(worker=f"{host}:{sleeper.pid}", lease_until=lease, runs=1)
        assert claim("me:1") is None  # its worker lives and its lease runs
    finally:
        sleeper.kill()
        sleeper.wait()
    taken = claim("me:1")  # killed: taken over without waiting for the lease
    assert taken is not None and taken.pk == job.pk and taken.runs == 2
    assert taken.worker == "me:1" and taken.lease_until > timezone.now()


@pytest.mark.django_db
def test_an_expired_lease_frees_a_job_of_another_host_and_only_one_claim_wins():
    past = timezone.now() - timedelta(seconds=1)
    job = a_job(worker="elsewhere:123", lease_until=past, runs=1)
    stale = Job.objects.get(pk=job.pk)
    assert try_claim(Job.objects.get(pk=job.pk), "me:1") is not None
    assert try_claim(stale, "me:2") is None  # read before the first claim: loses


@pytest.mark.django_db
def test_the_worker_never_takes_another_stores_jobs():
    a_job(store_name="other-host:/srv/store.db")
    assert claim("me:1") is None
    assert work(lambda: False, once=True) == 0


@STORE_DB
def test_the_progress_says_how_far_and_how_long_is_left(store):
    job = a_job(expected=20_000)
    assert job_sentence(job) == "Waiting for the worker to take it"
    job.created_at = timezone.now() - timedelta(minutes=1)
    assert "is `manage.py run_jobs` running" in job_sentence(job)
    job.phase, job.listed, job.sessions = Job.Phase.DELETING, 20_000, 4_200
    job.started_at = timezone.now() - timedelta(seconds=2.4)
    assert job_sentence(job) == "4,200 of 20,000 sessions, about 9 s left"
    job.lease_until = timezone.now() - timedelta(seconds=5)
    assert "its worker stopped" in job_sentence(job)
    job.phase, job.lease_until = Job.Phase.COMPACTING, None
    assert job.final and not job.done
    assert job_sentence(job) == "Receipt final; compacting the search index"


@STORE_DB
def test_a_stop_asked_mid_job_is_recorded_and_the_next_run_counts_everything(
    store, fast_pacing, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 3)
    fill(store, 20, 2)
    job = deletion.request_clear_all(actor=ACTOR, expected_sessions=20)
    looks = {"n": 0}

    def stop_soon() -> bool:
        looks["n"] += 1
        return looks["n"] > 5

    work(stop_soon)
    job.refresh_from_db()
    assert job.phase == Job.Phase.DELETING and job.lease_until is None
    assert store.count("sessions") == 20 - job.sessions
    work(lambda: False, once=True)
    job.refresh_from_db()
    assert job.done and job.sessions == 20 and job.messages == 40 and job.runs == 2
    assert job.targets.count() == 0  # the list goes when the job is done


@STORE_DB
def test_an_erasure_asked_twice_while_it_waits_is_one_job(store):
    fill(store, 2, principal="user:twice")
    first = request_erasure("user:twice", actor=ACTOR)
    again = request_erasure("user:twice", actor=ACTOR)
    assert again.pk == first.pk and Job.objects.count() == 1


@STORE_DB
def test_a_jobs_batches_commit_without_a_wait_each_and_are_flushed_before_it_moves_on(
    store, fast_pacing, monkeypatch
):
    from sessions_admin.deletion import jobs
    from sessions_admin.store import cascade
    from sessions_admin.store.connection import store_connection

    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 3)
    fill(store, 10, 2)
    seen: list[tuple[str, int]] = []

    def synchronous() -> int:
        with store_connection().cursor() as cursor:
            cursor.execute("PRAGMA synchronous")
            return cursor.fetchone()[0]

    real_delete, real_flush = jobs.cascade_delete, cascade.flush_to_disk

    def delete(*args, **kwargs):
        seen.append(("batch", synchronous()))
        return real_delete(*args, **kwargs)

    def flush() -> None:
        seen.append(("flush", synchronous()))
        real_flush()

    monkeypatch.setattr(jobs, "cascade_delete", delete)
    monkeypatch.setattr(cascade, "flush_to_disk", flush)
    before = synchronous()
    folder = sorted(p.name for p in store.path.parent.iterdir())
    job = deletion.request_clear_all(actor=ACTOR, expected_sessions=10)
    work(lambda: False, once=True)
    job.refresh_from_db()
    assert job.done and job.sessions == 10
    batches = [value for what, value in seen if what == "batch"]
    assert len(batches) >= 4 and set(batches) == {1}  # NORMAL: no fsync per commit
    assert seen[len(batches)] == ("flush", before)  # then one flush, the setting restored
    assert synchronous() == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == folder  # no file of ours


def _handles(pid: int, signum: int) -> bool:
    """Whether the process has installed a handler for ``signum`` (Linux's SigCgt)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) >> (signum - 1) & 1)
    return False


@STORE_DB
def test_a_burst_of_stop_signals_stops_the_worker(store, tmp_path):
    """Ctrl-C to the group and serve-with-sync's SIGTERM come at once: the worker's
    handler must take no lock, or the second waits for the first for good."""
    env = clean_environment(
        DJANGO_SECRET_KEY="signals-" + "k" * 40,
        AGENTS_HOST_HOME=str(store.home),
        SESSIONS_ADMIN_VAR_DIR=str(tmp_path / "var"),
        DJANGO_LOG_FORMAT="text",
    )
    worker = subprocess.Popen(
        [sys.executable, "manage.py", "run_jobs", "--poll", "0.05", "-v0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while not (_handles(worker.pid, signal.SIGINT) and _handles(worker.pid, signal.SIGTERM)):
            assert time.monotonic() < deadline and worker.poll() is None
            time.sleep(0.05)
        for _ in range(300):
            worker.send_signal(signal.SIGINT)
            worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=30) == 0
    finally:
        worker.kill()
        worker.wait()
