"""A job's final record: what it erased in all its runs, verified against what is left.

An erasure's receipt says "ok" only when a fresh reading finds nothing left of
the principal: no session row, no message or state row of the erased ids, no
frame entry (a symlink named for a session is unlinked and reported, its
target never touched), no index entry, no rollup row, no audit row naming
them. Its counts and SHA-256 cover every id of the job, whichever run erased
it. A clear-all's record is its deletion-audit row.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from django.db import models
from django.utils import timezone

from sessions_admin.deletion.audit import Outcome, count_forgotten
from sessions_admin.ourdata.audit import DeletionAudit, audits_naming, forget_session_ids
from sessions_admin.ourdata.erasures import Erasure, ids_digest
from sessions_admin.ourdata.jobs import Job
from sessions_admin.ourdata.principals import SideCounts, side_counts, side_session_ids
from sessions_admin.ourdata.reveals import Reveal
from sessions_admin.ourdata.review import forget as review_forget
from sessions_admin.ourdata.storeids import decode_id
from sessions_admin.ourdata.sync import forget_sessions
from sessions_admin.store.cascade import count_ids
from sessions_admin.store.connection import StoreReadOnly
from sessions_admin.store.principals import frames_usage, session_ids_of
from sessions_admin.store.queries import existing_session_ids
from sessions_admin.store.values import exact_key

#: Ids named as pending on a receipt (the next erasure of the principal retries them).
MAX_PENDING = 1000
#: Tries at forgetting the erased ids in the side database while a sync pass holds it.
FORGET_ATTEMPTS = 5


def gone_ids(ids: list) -> list:
    """The ids the store no longer holds (exactly: ids that read alike stay apart)."""
    present = {exact_key(sid) for sid in existing_session_ids(ids)}
    return [sid for sid in ids if exact_key(sid) not in present]


@dataclass(frozen=True)
class Left:
    """What verification found left, per kind of the receipt."""

    kinds: dict[str, int]
    appeared: int
    frames_pending: list[str]


def side_before(principal: object) -> SideCounts:
    """What the side index and rollups hold of the principal now (before forgetting):
    its sessions in the store, and those the side data still files under it that the
    store no longer holds (an earlier run's leftovers)."""
    if not isinstance(principal, str):
        return SideCounts()
    ids = [*session_ids_of(principal), *gone_ids(side_session_ids(principal))]
    texts = [sid for sid in ids if isinstance(sid, str)]
    return side_counts(principal, texts) or SideCounts()


def verify(principal: object, gone: list) -> Left:
    """Read the store, the frames root, the side data and our records again."""
    now_there = session_ids_of(principal) if isinstance(principal, str) else []
    texts = [sid for sid in gone if isinstance(sid, str)]
    rows = count_ids(gone)
    frames = frames_usage(texts)
    side = (side_counts(principal, texts) if isinstance(principal, str) else None) or SideCounts()
    pending = [sid for sid, _ in frames.refused] + frames.present
    return Left(
        kinds={
            "sessions": len(now_there),
            "messages": rows.messages,
            "state_rows": rows.state,
            "frame_dirs": frames.dirs + len(frames.refused),
            "index_entries": side.index_entries,
            "rollup_rows": side.rollup_rows,
            "our_records": audits_naming(texts),
        },
        appeared=len(now_there),
        frames_pending=list(dict.fromkeys(pending))[:MAX_PENDING],
    )


def _forget_ours(principal: object, gone: list, receipt: Erasure) -> int:
    """The side index, rollups, review records and audit rows forget the erased ids and
    whatever the side data still files under the principal; returns audit rows changed
    (the review records forgotten are added to the receipt)."""
    leftover = gone_ids(side_session_ids(principal)) if isinstance(principal, str) else []
    # A sync pass may hold the side database a while: the receipt waits for it, since
    # verification would otherwise find the index entries left.
    for attempt in range(FORGET_ATTEMPTS):
        if forget_sessions([*gone, *leftover], hold_purges=True):
            break
        time.sleep(1 + attempt)
    # Counted on the audit row, whose counts the receipt reads.
    count_forgotten(review_forget.forget_sessions(gone))
    # Who revealed what in these sessions goes too; the receipt keeps how many.
    receipt.reveals += Reveal.forget_sessions(gone, receipt.store_name)
    texts = [sid for sid in gone if isinstance(sid, str)]
    return forget_session_ids(texts, f"erasure {receipt.pk}")


def _describe(job: Job, left: Left) -> str:
    lines = [f"stopped: {job.detail}"] if job.detail else []
    if left.appeared:
        lines.append(
            f"{left.appeared} session{'s' if left.appeared != 1 else ''} appeared "
            "during the erasure"
        )
    remaining = [f"{n} {kind.replace('_', ' ')}" for kind, n in left.kinds.items() if n]
    if remaining:
        lines.append("left: " + ", ".join(remaining))
    for key, what in job.frame_entries[:20]:
        lines.append(f"frames entry of {decode_id(key)!r}: {what}")
    return "; ".join(lines)


def _status(job: Job, left: Left, erased: int) -> str:
    if not job.detail and not any(left.kinds.values()):
        return Erasure.Status.OK
    if job.detail == StoreReadOnly().message and not erased:
        return Erasure.Status.REFUSED
    return Erasure.Status.PARTIAL


def finish_erasure(job: Job, listed: list[tuple[object, bool]]) -> list[models.Model]:
    """Forget, verify, and fill in the receipt and the audit row (saved by the caller)."""
    receipt = Erasure.objects.get(job=job)
    # The job's audit row, counted now: the receipt reads who, when and what from it.
    receipt.audit = _counted(job)
    principal = job.principal
    gone = gone_ids([sid for sid, _ in listed])
    carried = {exact_key(sid) for sid, carry in listed if carry}
    erased = [sid for sid in gone if exact_key(sid) not in carried]
    before = receipt.verification.get("side_before", [0, 0])
    records = _forget_ours(principal, gone, receipt)
    left = verify(principal, gone)
    receipt.frame_dirs = job.frame_dirs + len(job.frame_entries)
    receipt.our_records = records
    receipt.index_entries = max(0, before[0] - left.kinds["index_entries"])
    receipt.rollup_rows = max(0, before[1] - left.kinds["rollup_rows"])
    receipt.verification = left.kinds
    receipt.appeared = left.appeared
    receipt.pending_frames = [sid for sid in left.frames_pending if isinstance(sid, str)]
    receipt.ids_sha256 = ids_digest(erased)
    receipt.status = _status(job, left, len(erased))
    receipt.detail = _describe(job, left)
    final: list[models.Model] = [receipt]
    if receipt.status == Erasure.Status.OK:
        final += _settle_earlier(receipt, erased, carried)
    final.append(_audit_of(receipt))
    return final


def _settle_earlier(receipt: Erasure, erased: list, carried: set) -> list[Erasure]:
    """Earlier partial receipts of the principal this run finished; or, when this run
    found nothing new, the receipt it points to instead of a fresh "ok"."""
    earlier = list(
        Erasure.objects.filter(principal_key=receipt.principal_key, store_name=receipt.store_name)
        .exclude(pk=receipt.pk)
        .exclude(status__in=[Erasure.Status.QUEUED, Erasure.Status.RUNNING])
        .order_by("-pk")
    )
    changed = []
    for other in earlier:
        if other.status == Erasure.Status.PARTIAL and other.pending_frames:
            other.pending_frames = []
            other.detail = f"{other.detail}; finished by receipt {receipt.pk}".lstrip("; ")
            changed.append(other)
    nothing_new = not erased and not carried and not any(receipt.counts().values())
    if nothing_new and earlier:
        receipt.see_receipt = earlier[0].pk
        receipt.detail = f"nothing left to erase; see receipt {earlier[0].pk}"
    return changed


def _counted(job: Job) -> DeletionAudit:
    """The job's audit row with what the job erased in all its runs, ended now."""
    audit = job.audit
    audit.sessions_deleted = job.sessions
    audit.messages_deleted = job.messages
    audit.state_deleted = job.state_rows
    audit.frame_dirs_removed = job.frame_dirs
    audit.frame_bytes_removed = job.frame_bytes
    audit.finished_at = timezone.now()
    return audit


def _audit_of(receipt: Erasure) -> DeletionAudit:
    audit = receipt.audit
    audit.outcome = {
        Erasure.Status.OK: Outcome.OK,
        Erasure.Status.REFUSED: Outcome.REFUSED,
    }.get(receipt.status, Outcome.PARTIAL)
    audit.detail = f"receipt {receipt.pk}: {receipt.detail}".rstrip(": ")
    return audit


def finish_clear_all(job: Job) -> list[models.Model]:
    """The clear-all's audit row, final: "partly done" when it stopped or frames were refused."""
    if job.audit is None:
        return []
    audit = _counted(job)
    lines = [f"job {job.pk}, {job.runs} run{'s' if job.runs != 1 else ''}"]
    if job.detail:
        lines.append(f"stopped: {job.detail}")
    if job.frames_refused:
        shown = "; ".join(f"{decode_id(k)!r}: {why}" for k, why in job.frames_refused[:20])
        lines.append(f"frames refused: {shown}")
    refused = job.detail == StoreReadOnly().message and not job.sessions
    audit.outcome = (
        Outcome.REFUSED
        if refused
        else Outcome.PARTIAL
        if job.detail or job.frames_refused
        else Outcome.OK
    )
    audit.detail = "\n".join(lines)
    return [audit]
