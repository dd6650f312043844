"""The job worker: takes this store's unfinished jobs, one at a time, and carries them out.

``manage.py run_jobs`` runs :func:`work` beside the server. A job is free when
no worker holds its lease: never claimed, released by a clean stop, expired
(its worker stopped renewing it), or held by a process of this host that no
longer exists (``kill -9``: taken over at once). Claiming is one conditional
UPDATE on the row as it was read, so two workers never both win, on SQLite or
PostgreSQL alike.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import timedelta

from django.db import DatabaseError, close_old_connections
from django.db.models import F
from django.utils import timezone

from sessions_admin.deletion.audit import failure_text
from sessions_admin.deletion.jobs import LeaseLost, run_job
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.ourdata.jobs import LEASE, Job, worker_is_dead, worker_name
from sessions_admin.store.connection import StoreError

log = logging.getLogger("sessions_admin.jobs")

#: How long a job whose run failed waits before the next try, per run so far.
RETRY_STEP = timedelta(seconds=5)
RETRY_MAX = timedelta(minutes=5)


def _is_free(job: Job, me: str, now) -> bool:
    if job.done:
        return False
    if job.worker == me or job.lease_until is None or job.lease_until < now:
        return True
    return worker_is_dead(job.worker)


def try_claim(job: Job, me: str) -> Job | None:
    """Take ``job`` for worker ``me`` if it is free; the row as claimed, or None."""
    now = timezone.now()
    if not _is_free(job, me, now):
        return None
    won = Job.objects.filter(pk=job.pk, worker=job.worker, lease_until=job.lease_until).update(
        worker=me, lease_until=now + LEASE, runs=F("runs") + 1
    )
    if not won:
        return None
    job.refresh_from_db()
    if job.started_at is None:
        job.started_at = now
        job.save(update_fields=["started_at"])
    Erasure.objects.filter(job=job, status=Erasure.Status.QUEUED).update(
        status=Erasure.Status.RUNNING
    )
    return job


def claim(me: str) -> Job | None:
    """The oldest free job of this store, claimed for ``me``."""
    for job in Job.objects.of_this_store().unfinished().order_by("id")[:50]:
        if (claimed := try_claim(job, me)) is not None:
            return claimed
    return None


def _run_claimed(job: Job, me: str, should_stop: Callable[[], bool]) -> bool:
    """Run a claimed job; a failure is recorded on it and retried later, never lost."""
    try:
        return run_job(job, worker=me, should_stop=should_stop)
    except LeaseLost as exc:
        log.warning("%s", exc)
    except (StoreError, DatabaseError, OSError) as exc:
        log.exception("job %s stopped; it will be tried again", job.pk)
        delay = min(RETRY_MAX, RETRY_STEP * max(1, job.runs))
        Job.objects.filter(pk=job.pk, worker=me).update(
            detail=failure_text(exc)[:2000], lease_until=timezone.now() + delay
        )
    return False


def work(should_stop: Callable[[], bool], *, poll_s: float = 1.0, once: bool = False) -> int:
    """Carry out jobs until ``should_stop()``; with ``once``, until none is free. Returns
    how many jobs this call finished."""
    me = worker_name()
    finished = 0
    while not should_stop():
        close_old_connections()
        try:
            job = claim(me)
        except DatabaseError as exc:  # not migrated yet, or the database is away: wait
            log.warning("run_jobs cannot read the jobs yet: %s", exc)
            job = None
        if job is None:
            if once:
                break
            time.sleep(poll_s)
            continue
        log.info("job %s (%s) taken at %s, run %s", job.pk, job.kind, job.phase, job.runs)
        if _run_claimed(job, me, should_stop):
            finished += 1
            log.info("job %s done", job.pk)
    return finished


def run_now(job: Job, *, poll_s: float = 0.2) -> None:
    """Carry ``job`` out in this process (the command line), or wait while a live
    worker does; errors are raised after the job is released for the worker."""
    me = worker_name()
    while True:
        job.refresh_from_db()
        if job.done:
            return
        claimed = try_claim(job, me)
        if claimed is None:
            time.sleep(poll_s)
            continue
        try:
            run_job(claimed, worker=me, should_stop=lambda: False)
        except BaseException:
            Job.objects.filter(pk=job.pk, worker=me).update(lease_until=None)
            raise
