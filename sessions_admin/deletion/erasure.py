"""Erase one principal's data, then prove it: the erasure and its receipt.

:func:`erase_principal` is what ``POST /principals/<id>/erase/`` and
``manage.py erase_principal`` run:

1. the phrase (:func:`erasure_phrase`) is checked against the store's own
   count *now*; a changed count refuses (:class:`StalePhrase`), nothing deleted;
2. the runtime's cascade, for every session of the principal, in the paced
   short batches of :mod:`.bulk` (one ``BEGIN IMMEDIATE`` each, sessions
   re-checked inside it, a pause after it for the runtime's writer), frame
   directories removed after each commit, the side index and rollups told
   at once (:func:`~.cascade.cascade_delete`). The walk goes to the highest
   rowid seen at the start, then once more to the highest seen then, so a
   session the runtime made meanwhile is caught; one made later is reported;
3. what our side data still files under the principal is forgotten, and our
   deletion-audit rows drop the erased ids
   (:func:`~sessions_admin.ourdata.audit.forget_session_ids`);
4. verification: the store, the frames root, the side index and rollups and
   our records are read again for the principal and the erased ids;
5. the :class:`~sessions_admin.ourdata.erasures.Erasure` receipt: counts per
   kind, what verification found left, the SHA-256 of the erased ids, status
   "ok", or "partial" with what remains (a failure half-way, a frames
   directory refused, a session that appeared). Running it again finishes.

A read-only store refuses before anything, with its sentence and no receipt
(the refusal is audited, as every delete's is).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

from django.db import DatabaseError
from django.utils import timezone

from sessions_admin.deletion import bulk
from sessions_admin.deletion.audit import Outcome, audited, check_writable, failure_text
from sessions_admin.deletion.bulk import Pacer, whole_session_batches
from sessions_admin.deletion.cascade import cascade_delete
from sessions_admin.deletion.results import Actor
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.audit import DeletionAudit, audits_naming, forget_session_ids
from sessions_admin.ourdata.erasures import Erasure, ids_digest
from sessions_admin.ourdata.principals import SideCounts, side_counts, side_session_ids
from sessions_admin.ourdata.storename import current_store
from sessions_admin.ourdata.sync import forget_sessions
from sessions_admin.store.cascade import (
    Counts,
    FramesReport,
    candidates,
    child_counts,
    count_ids,
    max_rowid,
    remove_frames,
)
from sessions_admin.store.connection import StoreError, StoreReadOnly
from sessions_admin.store.principals import frames_usage, session_ids_of
from sessions_admin.store.queries import SessionFilter, existing_session_ids

BatchHook = Callable[[Counts, int], None]
#: Threads removing frame directories while the store's batches go on.
FRAMES_WORKERS = 2


def erasure_phrase(principal: str, sessions: int) -> str:
    """``erase 14 sessions of user:alice``: what staff type to confirm."""
    return f"erase {sessions} session{'s' if sessions != 1 else ''} of {principal}"


class StalePhrase(StoreError):
    """The phrase typed does not name the principal's current count: nothing was erased."""

    status_code = 400

    def __init__(self, expected: str, sessions: int) -> None:
        super().__init__(
            f"The confirmation did not match: the store now holds {sessions} session"
            f"{'s' if sessions != 1 else ''} of this principal. Nothing was erased; "
            f"type “{expected}” to erase them.",
        )
        self.expected = expected
        self.sessions = sessions


class _FramesWorkers:
    """Frame directories removed by worker threads while the next batches run.

    Removing a directory is file-system calls (3-4 ms each on the shared bench
    machine): done inline, 1,000 of them were most of an erasure's time. The
    store's rows are committed before their ids are handed over, as everywhere.
    Each task fills its own report; :meth:`collect` waits and adds them up.
    """

    def __init__(self, workers: int = FRAMES_WORKERS) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="erase-frames")
        self.tasks: list[Future[FramesReport]] = []

    def submit(self, session_ids: list) -> None:
        half = (len(session_ids) + 1) // 2
        for part in (session_ids[:half], session_ids[half:]):
            if part:
                self.tasks.append(self.pool.submit(self._remove, part))

    @staticmethod
    def _remove(session_ids: list) -> FramesReport:
        report = FramesReport()
        remove_frames(session_ids, report)
        return report

    def collect(self, into: FramesReport) -> None:
        try:
            for task in self.tasks:
                into.merge(task.result())
        finally:
            self.tasks = []
            self.pool.shutdown(wait=True)


@dataclass
class _State:
    counts: Counts = field(default_factory=Counts)
    report: FramesReport = field(default_factory=FramesReport)
    erased: list = field(default_factory=list)
    batches: int = 0
    after_rowid: int = 0


def _pass(
    state: _State,
    matching: SessionFilter,
    up_to: int,
    pacer: Pacer,
    frames: _FramesWorkers,
    on_batch: BatchHook | None,
) -> None:
    """Cascade every session matching ``matching`` up to rowid ``up_to``, in paced batches."""
    while rows := candidates(
        matching, state.after_rowid, max(1, min(bulk.MAX_BATCH_SESSIONS, pacer.row_budget)), up_to
    ):
        state.after_rowid = rows[-1][0]
        ids = [row[1] for row in rows]
        for batch in whole_session_batches(ids, child_counts(ids), pacer.row_budget):
            timings: dict[str, float] = {}
            # Re-checked inside the transaction: a session moved to another principal
            # since it was read stays whole. Our side data forgets them all at the end.
            counts, deleted = cascade_delete(
                batch, still_matching=matching, timings=timings, forget=False
            )
            unlocked = time.perf_counter()
            state.counts.add(counts)
            state.erased.extend(deleted)
            state.batches += 1
            frames.submit(deleted)
            if on_batch is not None:
                on_batch(state.counts, state.batches)
            # Paced on the store's lock alone: what ran since it was released counts
            # towards the writer's pause.
            pause_ms = pacer.record(counts.rows, timings["store_ms"])
            free_ms = (time.perf_counter() - unlocked) * 1000
            time.sleep(max(0.0, pause_ms - free_ms) / 1000)


def _erase_store(principal: str, state: _State, on_batch: BatchHook | None) -> None:
    matching = SessionFilter(principal=principal)
    pacer = Pacer()
    frames = _FramesWorkers()
    try:
        _pass(state, matching, max_rowid(), pacer, frames, on_batch)
        # Once more, to the newest rowid now: sessions the runtime made meanwhile.
        _pass(state, matching, max_rowid(), pacer, frames, on_batch)
    finally:
        frames.collect(state.report)


def _retry_pending_frames(principal: str, state: _State) -> None:
    """Frame directories an earlier run of this principal could not remove."""
    earlier = Erasure.objects.filter(
        principal=principal, status=Erasure.Status.PARTIAL, store_name=current_store()
    ).exclude(pending_frames=[])
    pending = list(dict.fromkeys(sid for e in earlier for sid in e.pending_frames))
    if not pending:
        return
    present = existing_session_ids(pending)  # an id the runtime made again is not ours
    remove_frames([sid for sid in pending if sid not in present], state.report)
    # This run's receipt now carries whatever is still pending.
    earlier.update(pending_frames=[])


def _forget_ours(principal: str, state: _State, receipt: Erasure) -> int:
    """Side data about the erased ids and still filed under the principal (an earlier
    run's leftovers), in one go; then our audit rows naming the ids."""
    filed = side_session_ids(principal)
    present = existing_session_ids(filed)  # live sessions: the next sync files them again
    leftover = [sid for sid in filed if sid not in present]
    forget_sessions([*state.erased, *leftover])
    texts = [sid for sid in state.erased if isinstance(sid, str)]
    return forget_session_ids(texts, f"erasure {receipt.pk}")


@dataclass(frozen=True)
class _Left:
    """What verification found left, per kind of the receipt."""

    kinds: dict[str, int]
    appeared: int
    frames_pending: list[str]


def _verify(principal: str, erased: list, side_before: SideCounts | None) -> _Left:
    now_there = session_ids_of(principal)
    again = existing_session_ids([sid for sid in erased if isinstance(sid, str)])
    rows = count_ids(erased)
    frames = frames_usage(erased)
    texts = [sid for sid in erased if isinstance(sid, str)]
    side = side_counts(principal, texts) if side_before is not None else SideCounts()
    pending = [sid for sid, _ in frames.refused] + frames.present
    return _Left(
        kinds={
            "sessions": len(now_there) + len(again),
            "messages": rows.messages,
            "state_rows": rows.state,
            "frame_dirs": frames.dirs + len(frames.refused),
            "index_entries": (side or SideCounts()).index_entries,
            "rollup_rows": (side or SideCounts()).rollup_rows,
            "our_records": audits_naming(texts),
        },
        appeared=len(now_there),
        frames_pending=list(dict.fromkeys(pending))[:1000],
    )


def erase_principal(
    principal: str,
    *,
    actor: Actor,
    confirm: str | None = None,
    on_batch: BatchHook | None = None,
) -> Erasure:
    """Erase every session of ``principal`` and our data about them; returns the receipt.

    ``confirm`` must equal :func:`erasure_phrase` for the count the store
    holds now (None: the caller confirmed otherwise, ``--yes``). Raises
    :class:`StoreReadOnly` (audited, no receipt) or :class:`StalePhrase`
    (nothing done); any failure during the run is written into a "partial"
    receipt instead of raised.
    """
    if not isinstance(principal, str) or principal == "":
        raise StoreError("An erasure needs a principal: the empty one names no person.")
    operation = DeletionAudit.Operation.ERASE_PRINCIPAL
    target = {"principal": principal}
    check_writable(operation, actor, target)
    before = session_ids_of(principal)
    if confirm is not None and confirm.strip() != erasure_phrase(principal, len(before)):
        raise StalePhrase(erasure_phrase(principal, len(before)), len(before))
    user = actor.user if getattr(actor.user, "pk", None) else None
    receipt = Erasure.objects.create(
        started_at=timezone.now(), actor=actor.name[:200], user=user, principal=principal
    )
    state = _State()
    try:
        _run(principal, actor, target, before, state, receipt, on_batch)
    except BaseException as exc:
        # Not an error we expected (an interrupt, a bug): the receipt still says how far,
        # and what was erased is forgotten (this never raises).
        forget_sessions(state.erased)
        _finish(receipt, state, None, SideCounts(), 0, failure_text(exc))
        raise
    return receipt


def _run(
    principal: str,
    actor: Actor,
    target: dict,
    before: list,
    state: _State,
    receipt: Erasure,
    on_batch: BatchHook | None,
) -> None:
    side_before = side_counts(principal, [*before, *side_session_ids(principal)])
    failure = ""
    records = 0
    operation = DeletionAudit.Operation.ERASE_PRINCIPAL
    with audited(operation, actor, target, report=state.report) as run:
        receipt.audit_id = run.audit_id
        run.counts = state.counts
        expected = (StoreError, DatabaseError, OSError, *sidedb.errors())
        try:
            _erase_store(principal, state, on_batch)
            _retry_pending_frames(principal, state)
        except expected as exc:
            failure = failure_text(exc)
        try:
            # Also after a failure: what was erased is forgotten now, not at the next sync.
            records = _forget_ours(principal, state, receipt)
        except expected as exc:
            failure = failure or failure_text(exc)
        left = _verify(principal, state.erased, side_before)
        _finish(receipt, state, left, side_before or SideCounts(), records, failure)
        outcome = Outcome.OK if receipt.status == Erasure.Status.OK else Outcome.PARTIAL
        if receipt.status == Erasure.Status.REFUSED:
            outcome = Outcome.REFUSED
        run.save(outcome, f"receipt {receipt.pk}: {receipt.detail}".rstrip(": "))


def _describe(left: _Left | None, failure: str) -> str:
    lines = [f"stopped: {failure}"] if failure else []
    if left is not None:
        if left.appeared:
            lines.append(
                f"{left.appeared} session{'s' if left.appeared != 1 else ''} appeared "
                "during the erasure"
            )
        remaining = [f"{n} {kind.replace('_', ' ')}" for kind, n in left.kinds.items() if n]
        if remaining:
            lines.append("left: " + ", ".join(remaining))
    return "; ".join(lines)


def _finish(
    receipt: Erasure,
    state: _State,
    left: _Left | None,
    side_before: SideCounts,
    records: int,
    failure: str,
) -> None:
    receipt.sessions = state.counts.sessions
    receipt.messages = state.counts.messages
    receipt.state_rows = state.counts.state
    receipt.frame_dirs = state.report.dirs_removed
    receipt.frame_bytes = state.report.bytes_removed
    receipt.our_records = records
    if left is not None:
        receipt.index_entries = max(0, side_before.index_entries - left.kinds["index_entries"])
        receipt.rollup_rows = max(0, side_before.rollup_rows - left.kinds["rollup_rows"])
        receipt.verification = left.kinds
        receipt.appeared = left.appeared
        receipt.pending_frames = left.frames_pending
    receipt.ids_sha256 = ids_digest(state.erased)
    receipt.detail = _describe(left, failure)
    clean = left is not None and not failure and not any(left.kinds.values())
    refused = failure == StoreReadOnly().message and not state.erased
    receipt.status = (
        Erasure.Status.OK
        if clean
        else Erasure.Status.REFUSED
        if refused
        else Erasure.Status.PARTIAL
    )
    receipt.finished_at = timezone.now()
    receipt.save()
