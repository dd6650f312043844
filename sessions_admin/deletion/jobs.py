"""Carrying out a job: list its sessions, delete them in paced batches, remove their
frames, forget them in our data, verify, finish.

Each step is recorded on the :class:`~sessions_admin.ourdata.jobs.Job` row before
the next begins, so a run that dies anywhere is taken over by the next from what
the row says: the list is written before the first delete; a batch is recorded
as *in flight* (with what it counted just before) before its transaction, and
settled after a crash by what the store still holds; frames, forgetting and
verification run over the whole list, whichever run deleted the rows. Every
step is idempotent: a batch re-run deletes what is left of it and nothing else.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from sessions_admin.deletion import bulk
from sessions_admin.deletion.audit import WrongStore, count_forgotten, tallying
from sessions_admin.deletion.bulk import Pacer, whole_session_batches
from sessions_admin.deletion.cascade import cascade_delete
from sessions_admin.deletion.receipts import finish_clear_all, finish_erasure, gone_ids, side_before
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.ourdata.jobs import LEASE, Job, JobSession
from sessions_admin.ourdata.review import forget as review_forget
from sessions_admin.ourdata.storeids import encode_id
from sessions_admin.ourdata.sync import forget_sessions, purge_step
from sessions_admin.store.cascade import (
    Counts,
    FramesReport,
    candidates,
    checkpoint,
    child_counts,
    count_ids,
    deferred_sync,
    max_rowid,
    remove_frames,
)
from sessions_admin.store.connection import StoreReadOnly, frames_root
from sessions_admin.store.frames import standing
from sessions_admin.store.principals import frames_usage
from sessions_admin.store.queries import SessionFilter, existing_session_ids
from sessions_admin.store.values import exact_key

#: Sessions read per listing query and per round of the delete loop.
LIST_CHUNK = 5_000
#: Sessions whose frame directories one recorded step removes (two threads share it).
FRAMES_CHUNK = 400
FRAMES_WORKERS = 2
#: Refused frame paths kept on a job for its receipt.
MAX_REFUSALS_KEPT = 1000
#: How long a job's batch may hold the store's write lock: longer than a bulk form's
#: (``bulk.TARGET_BATCH_MS``), since each batch also commits twice to our database,
#: and still well under the half second the runtime's writer may wait.
JOB_TARGET_BATCH_MS = 150
#: Deleted sessions an erasure's side index forgets in one transaction, beside the deletes.
FORGET_EVERY = 10_000

Phase = Job.Phase
log = logging.getLogger("sessions_admin.jobs")


class LeaseLost(Exception):
    """Another worker took the job over (this one stalled past its lease): stop at once."""


@dataclass
class Run:
    """One worker's run of a job: records its steps under the lease it holds."""

    job: Job
    worker: str
    should_stop: Callable[[], bool]

    def record(self, *names: str) -> None:
        """Save these fields and renew the lease, if this worker still holds it."""
        values = {name: getattr(self.job, name) for name in names}
        values["lease_until"] = timezone.now() + LEASE
        if not Job.objects.filter(pk=self.job.pk, worker=self.worker).update(**values):
            raise LeaseLost(f"job {self.job.pk} was taken over by another worker")
        self.job.lease_until = values["lease_until"]

    def release(self) -> None:
        """Let the next worker take the job at once (a clean stop)."""
        Job.objects.filter(pk=self.job.pk, worker=self.worker).update(lease_until=None)

    @property
    def erasing(self) -> bool:
        return self.job.kind == Job.Kind.ERASE_PRINCIPAL

    def matching(self) -> SessionFilter:
        if self.erasing:
            return SessionFilter(principal=self.job.principal)
        return SessionFilter()


def run_job(job: Job, *, worker: str, should_stop: Callable[[], bool]) -> bool:
    """Carry ``job`` on from its recorded phase; True when it is done.

    The caller holds the lease (:func:`sessions_admin.deletion.worker.claim`).
    A store that refuses deletes (read-only, another store's data folder) ends
    the job with what was done; other errors leave it for the next run.
    """
    run = Run(job, worker, should_stop)
    audit = job.audit
    with tallying(audit) as tally:
        while not job.done:
            if should_stop():
                run.release()
                return False
            phase, started = job.phase, time.perf_counter()
            try:
                STEPS[job.phase](run)
            except (StoreReadOnly, WrongStore) as exc:
                _stop_deleting(run, exc.message)
            if audit is not None:
                _save_tally(audit, tally.forgotten)
            log.info(
                "job %s: %s took %.1f s (%s sessions)",
                job.pk,
                phase,
                time.perf_counter() - started,
                job.sessions,
            )
    return True


def _stop_deleting(run: Run, why: str) -> None:
    run.job.detail = why
    run.job.inflight = None
    run.job.phase = Phase.FINISHING
    run.record("detail", "inflight", "phase")


def _save_tally(audit, forgotten) -> None:
    audit.notes_deleted = forgotten.notes
    audit.labels_removed = forgotten.labels
    audit.review_items_marked = forgotten.items
    # An update, not save(): the audit's post_save logs a finished delete, once, when
    # the job's last step saves it; a step after it (compacting) must not log it again.
    type(audit).objects.filter(pk=audit.pk).update(
        notes_deleted=forgotten.notes,
        labels_removed=forgotten.labels,
        review_items_marked=forgotten.items,
    )


# --- Listing ---------------------------------------------------------------------------


def _start(run: Run) -> None:
    run.job.phase = Phase.LISTING
    run.record("phase")
    if run.erasing:
        # What the side data holds of the principal before anything is forgotten: the
        # receipt's index and rollup counts are this minus what verification finds.
        before = side_before(run.job.principal)
        Erasure.objects.filter(job=run.job).update(
            verification={"side_before": [before.index_entries, before.rollup_rows]}
        )


def _list(run: Run) -> None:
    """Write the sessions this pass will delete, before the first delete of the pass.

    An erasure lists twice: once up to the newest row when it starts, once more
    after those are gone, for sessions the runtime made meanwhile.
    """
    job = run.job
    up_to = max_rowid()
    matching = run.matching()
    known = set(JobSession.objects.filter(job=job).values_list("session_key", flat=True))
    new: list[str] = []
    after = 0
    while rows := candidates(matching, after, LIST_CHUNK, up_to):
        after = rows[-1][0]
        for _, sid in rows:
            key = encode_id(sid)
            if key not in known:
                known.add(key)
                new.append(key)
    carried = _earlier_leftovers(job, known) if run.erasing and job.passes == 0 else []
    with transaction.atomic():
        JobSession.objects.bulk_create(
            [
                JobSession(job=job, seq=job.listed + n + 1, session_key=key, carried=carry)
                for n, (key, carry) in enumerate(
                    [*((k, False) for k in new), *((k, True) for k in carried)]
                )
            ],
            batch_size=2000,
        )
        job.listed += len(new) + len(carried)
        job.passes += 1
        job.phase = Phase.DELETING
        run.record("listed", "passes", "phase")


def _earlier_leftovers(job: Job, known: set[str]) -> list[str]:
    """Sessions whose frames an earlier, partial erasure of this principal left."""
    earlier = Erasure.objects.filter(
        principal_key=job.principal_key, store_name=job.store_name, status=Erasure.Status.PARTIAL
    ).exclude(job=job)
    keys = [encode_id(sid) for e in earlier for sid in e.pending_frames]
    return [key for key in dict.fromkeys(keys) if key not in known]


# --- Deleting --------------------------------------------------------------------------


class SideForgetter:
    """An erasure's deleted ids, forgotten by the side index from a thread of its own
    while the next batches delete (the store and the side files are two databases).

    A side transaction per ``FORGET_EVERY`` sessions, since the rollup cells and index
    pages a transaction writes are shared by the sessions of one erasure: batch by
    batch would cost several times more. The search index's purges are held (the
    job compacts it after its receipt). Forgetting never raises; the job's last step
    forgets every id again, which finds these gone already and settles whatever a
    busy side database left.
    """

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="job-forget")
        self.pending: list = []

    def add(self, session_ids: list) -> None:
        self.pending.extend(session_ids)
        if len(self.pending) >= FORGET_EVERY:
            self.flush()

    def flush(self) -> None:
        ids, self.pending = self.pending, []
        if ids:
            self.pool.submit(forget_sessions, ids, hold_purges=True)

    def close(self) -> None:
        self.flush()
        self.pool.shutdown(wait=True)


def _delete(run: Run) -> None:
    """Delete the listed sessions after ``cursor`` in paced batches of whole sessions."""
    job = run.job
    if job.inflight:
        _settle_batch(run)
    pacer = Pacer(target_ms=JOB_TARGET_BATCH_MS)
    forgetter = SideForgetter() if run.erasing else None
    try:
        # The phase moves on only once the deletes are on disk (deferred_sync's end).
        with deferred_sync():
            finished = _delete_listed(run, pacer, run.matching(), forgetter)
    finally:
        if forgetter is not None:
            forgetter.close()
    if finished:
        _after_deleting(run)


def _delete_listed(
    run: Run, pacer: Pacer, matching: SessionFilter, forgetter: SideForgetter | None
) -> bool:
    """The batches, until none is left (True) or the run is asked to stop (False)."""
    job = run.job
    while not run.should_stop():
        rows = list(
            JobSession.objects.filter(job=job, seq__gt=job.cursor, carried=False).order_by("seq")[
                : max(1, min(bulk.MAX_BATCH_SESSIONS, pacer.row_budget))
            ]
        )
        if not rows:
            return True
        ids = [row.session_id for row in rows]
        start = 0
        for batch in whole_session_batches(ids, child_counts(ids), pacer.row_budget):
            seqs = (rows[start].seq, rows[start + len(batch) - 1].seq)
            start += len(batch)
            deleted = _delete_batch(run, batch, seqs, matching, pacer)
            if forgetter is not None:
                forgetter.add(deleted)
            if run.should_stop():
                return False
    return False


def _delete_batch(
    run: Run, batch: list, seqs: tuple[int, int], matching: SessionFilter, pacer: Pacer
) -> list:
    """One batch, recorded in flight before its transaction; returns the ids deleted."""
    job = run.job
    before = count_ids(batch)
    job.inflight = {
        "first": seqs[0],
        "last": seqs[1],
        "sessions": before.sessions,
        "messages": before.messages,
        "state": before.state,
    }
    run.record("inflight")
    timings: dict[str, float] = {}
    # An erasure forgets its side data beside the next batches (SideForgetter) and its
    # review records at the end, over every id it listed (whichever run deleted them).
    counts, deleted = cascade_delete(
        batch, still_matching=matching, timings=timings, forget=not run.erasing
    )
    unlocked = time.perf_counter()
    _add_counts(job, counts)
    job.cursor = seqs[1]
    job.inflight = None
    run.record("sessions", "messages", "state_rows", "cursor", "inflight")
    pause_ms = pacer.record(counts.rows, timings["store_ms"])
    checkpoint()  # in the pause: the runtime may write meanwhile
    time.sleep(max(0.0, pause_ms - (time.perf_counter() - unlocked) * 1000) / 1000)
    return deleted


def _add_counts(job: Job, counts: Counts) -> None:
    job.sessions += counts.sessions
    job.messages += counts.messages
    job.state_rows += counts.state


def _settle_batch(run: Run) -> None:
    """A batch a dead run began: count what its transaction took, then run it again.

    The store's transaction either committed (its sessions that still matched are
    gone) or not; what the store holds of it now tells which, and the difference
    from what it counted just before is what that run erased. Running the batch
    again deletes whatever is left of it, and nothing twice.
    """
    job = run.job
    inflight = job.inflight
    rows = JobSession.objects.filter(
        job=job, seq__gte=inflight["first"], seq__lte=inflight["last"]
    ).order_by("seq")
    ids = [row.session_id for row in rows]
    now = count_ids(ids)
    gone = Counts(
        max(0, inflight["sessions"] - now.sessions),
        max(0, inflight["messages"] - now.messages),
        max(0, inflight["state"] - now.state),
    )
    if gone.sessions:
        present = {exact_key(sid) for sid in existing_session_ids(ids)}
        left = [sid for sid in ids if exact_key(sid) not in present]
        # What cascade_delete does after a commit, which the dead run may not have reached;
        # the audit (and so the receipt) counts what the review records lost here too.
        count_forgotten(review_forget.forget_sessions(left))
        if not run.erasing:
            forget_sessions(left)
    _add_counts(job, gone)
    job.cursor = inflight["first"] - 1
    job.inflight = None
    run.record("sessions", "messages", "state_rows", "cursor", "inflight")


def _after_deleting(run: Run) -> None:
    job = run.job
    if run.erasing and job.passes < 2:
        job.phase = Phase.LISTING  # once more: sessions the runtime made meanwhile
    elif run.erasing or job.wipe_frames:
        job.phase = Phase.FRAMES
    else:
        job.phase = Phase.FINISHING
    run.record("phase")


# --- Frames ----------------------------------------------------------------------------


def _frames(run: Run) -> None:
    """Remove the frame directories of every listed session the store no longer holds.

    A session the runtime made again under its id is not ours to touch. Before
    each chunk, what its directories hold is recorded, so a run that dies while
    removing them is counted exactly by the next.
    """
    job = run.job
    while not run.should_stop():
        rows = list(
            JobSession.objects.filter(job=job, seq__gt=job.frames_cursor).order_by("seq")[
                :FRAMES_CHUNK
            ]
        )
        if not rows:
            job.phase = Phase.FINISHING
            run.record("phase")
            return
        if job.inflight:
            _settle_frames(run)
        gone = standing(frames_root(), gone_ids([row.session_id for row in rows]))
        before = frames_usage(gone)
        job.inflight = {"frames_last": rows[-1].seq, "dirs": before.dirs, "bytes": before.bytes}
        run.record("inflight", "frame_dirs", "frame_bytes")
        report = _remove_frames(gone, unlink_entries=run.erasing)
        job.frame_dirs += report.dirs_removed
        job.frame_bytes += report.bytes_removed
        job.frame_entries = [*job.frame_entries, *([encode_id(s), w] for s, w in report.unlinked)]
        refused = [[encode_id(s), why] for s, why in report.refused]
        job.frames_refused = [*job.frames_refused, *refused][:MAX_REFUSALS_KEPT]
        job.frames_cursor = rows[-1].seq
        job.inflight = None
        run.record(
            "frame_dirs",
            "frame_bytes",
            "frame_entries",
            "frames_refused",
            "frames_cursor",
            "inflight",
        )


def _settle_frames(run: Run) -> None:
    """A chunk of frame directories a dead run began removing: count what it removed
    (what it measured before, less what is still there), then it runs again."""
    job = run.job
    inflight = job.inflight
    rows = JobSession.objects.filter(
        job=job, seq__gt=job.frames_cursor, seq__lte=inflight["frames_last"]
    )
    gone = standing(frames_root(), gone_ids([row.session_id for row in rows]))
    now = frames_usage(gone)
    job.frame_dirs += max(0, inflight["dirs"] - now.dirs)
    job.frame_bytes += max(0, inflight["bytes"] - now.bytes)
    job.inflight = None
    run.record("inflight", "frame_dirs", "frame_bytes")


def _remove_frames(session_ids: list, *, unlink_entries: bool) -> FramesReport:
    """Remove directories from two threads: each is file-system calls, not CPU."""
    report = FramesReport()
    half = (len(session_ids) + 1) // 2
    parts = [part for part in (session_ids[:half], session_ids[half:]) if part]

    def remove(part: list) -> FramesReport:
        mine = FramesReport()
        remove_frames(part, mine, unlink_entries=unlink_entries)
        return mine

    with ThreadPoolExecutor(max_workers=FRAMES_WORKERS, thread_name_prefix="job-frames") as pool:
        for done in pool.map(remove, parts):
            report.merge(done)
    return report


# --- Finishing -------------------------------------------------------------------------


def _finish(run: Run) -> None:
    """Forget, verify and write the final record; the job's list goes with it."""
    job = run.job
    targets = JobSession.objects.filter(job=job).order_by("seq")
    listed = [(row.session_id, row.carried) for row in targets]
    # The long reads and the side index's forgetting first, outside any transaction of
    # ours; then the final rows and the end of the list, together.
    final = finish_erasure(job, listed) if run.erasing else finish_clear_all(job)
    with transaction.atomic():
        for row in final:
            row.save()
        JobSession.objects.filter(job=job).delete()
        # The receipt is final; an erasure's forgetting held the search index's purges.
        job.phase = Phase.COMPACTING if run.erasing else Phase.DONE
        job.finished_at = timezone.now()
        job.inflight = None
        run.record("phase", "finished_at", "inflight")


def _compact(run: Run) -> None:
    """Purge what the erasure tombstoned in the search index, a short step at a time.

    FTS5 keeps a deleted block's postings, marked, until it rewrites the segment;
    the forgetting held that rewrite (it took half a minute inside one batch) and
    the job does it here, after the receipt, in steps that let the sync write
    between them. A run that dies here simply starts again: the steps are FTS5's.
    """
    steps = 0
    while not run.should_stop():
        if not purge_step():
            run.job.phase = Phase.DONE
            run.record("phase")
            return
        steps += 1
        if steps % 20 == 0:
            run.record()  # renews the lease


STEPS: dict[str, Callable[[Run], None]] = {
    Phase.QUEUED: _start,
    Phase.LISTING: _list,
    Phase.DELETING: _delete,
    Phase.FRAMES: _frames,
    Phase.FINISHING: _finish,
    Phase.COMPACTING: _compact,
}
