"""Review queues: made from a list of session ids, claimed one session at a time,
counted (the verdicts are :mod:`.verdicts`).

The claim is the part that must hold under concurrency: two reviewers pressing
"next" at once never get the same session. On PostgreSQL the first free item is
locked with ``SELECT … FOR UPDATE SKIP LOCKED`` (a second reviewer skips the
locked row and takes the one after it). SQLite has no row locks but runs one
writer at a time, so there the claim is a conditional UPDATE (still open, and
unclaimed or its claim expired) whose row count says whether this reviewer got
it; one who lost the race tries the next free item.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, router, transaction
from django.db.models import Count, Q, QuerySet
from django.utils import timezone

from sessions_admin.ourdata.review.bulk import insert_rows
from sessions_admin.ourdata.review.models import QUEUE_MAX_ITEMS, ReviewItem, ReviewQueue
from sessions_admin.params import MAX_SQLITE_INT
from sessions_admin.store import feed

#: How long a claim holds before someone else may take the session.
CLAIM_FOR = timedelta(minutes=30)
#: Races a reviewer may lose in a row on SQLite before "next" says to try again.
CLAIM_ATTEMPTS = 50
Verdict = ReviewItem.Verdict
VERDICTS = (Verdict.PASS, Verdict.FAIL, Verdict.SKIP)


class ClaimContended(RuntimeError):
    """Every free item was taken by others while this reviewer tried (SQLite)."""


def queues_of_store() -> QuerySet[ReviewQueue]:
    return ReviewQueue.objects.of_this_store()


def queue_of_store(queue_id: int) -> ReviewQueue | None:
    if not 0 < queue_id <= MAX_SQLITE_INT:  # a URL may hold any digits
        return None
    return queues_of_store().filter(pk=queue_id).first()


def make_queue(
    name: str,
    source: str,
    session_ids: Sequence[str],
    *,
    capped: bool,
    user: AbstractBaseUser | None,
    skipped: int = 0,
) -> ReviewQueue:
    """A queue of these sessions in this order (the first QUEUE_MAX_ITEMS), in one
    transaction; ``skipped`` counts what the source listed that it could not take."""
    ids = list(dict.fromkeys(session_ids))[:QUEUE_MAX_ITEMS]
    # Which sessions the items are about: one the runtime re-creates under an id is another.
    keys = feed.sort_keys(ids)
    with transaction.atomic():
        queue = ReviewQueue.objects.create(
            name=name,
            source=source,
            created_by=user,
            total=len(ids),
            capped=capped,
            skipped=skipped,
        )
        _insert_items(
            queue,
            [(sid, keys[sid].created_at if sid in keys else None) for sid in ids],
        )
    return queue


def _insert_items(queue: ReviewQueue, sessions: list[tuple[str, int | None]]) -> None:
    """The queue's items, open and unclaimed (``bulk.insert_rows``: 10,000 in about 0.1 s)."""
    fields = ("queue", "store_name", "session_id", "session_created_at", "position")
    fields += ("verdict", "text", "session_deleted", "by_manager")
    open_item = (Verdict.OPEN.value, "", False, False)
    insert_rows(
        ReviewItem,
        fields,
        [
            (queue.pk, queue.store_name, sid, created, position, *open_item)
            for position, (sid, created) in enumerate(sessions)
        ],
    )


def _open_items(queue: ReviewQueue) -> QuerySet[ReviewItem]:
    return ReviewItem.objects.filter(queue=queue, verdict="", session_deleted=False)


def _free(cutoff) -> Q:
    return Q(claimed_by__isnull=True) | Q(claimed_at__lt=cutoff)


def claim_next(queue: ReviewQueue, user: AbstractBaseUser) -> ReviewItem | None:
    """The next session nobody has reviewed or is reviewing, now claimed by ``user``
    for :data:`CLAIM_FOR`; their own live claim first; None when the queue is done."""
    now = timezone.now()
    cutoff = now - CLAIM_FOR
    mine = (
        _open_items(queue)
        .filter(claimed_by=user, claimed_at__gte=cutoff)
        .order_by("position")
        .first()
    )
    if mine is not None:
        return mine
    connection = connections[router.db_for_write(ReviewItem)]
    if connection.features.has_select_for_update_skip_locked:
        with transaction.atomic(using=connection.alias):
            item = (
                _open_items(queue)
                .filter(_free(cutoff))
                .order_by("position")
                .select_for_update(skip_locked=True)
                .first()
            )
            if item is not None:
                item.claimed_by, item.claimed_at = user, now
                item.save(update_fields=["claimed_by", "claimed_at"])
            return item
    return _claim_by_update(queue, user, now, cutoff)


def _claim_by_update(queue: ReviewQueue, user: AbstractBaseUser, now, cutoff) -> ReviewItem | None:
    for _ in range(CLAIM_ATTEMPTS):
        candidate = (
            _open_items(queue)
            .filter(_free(cutoff))
            .order_by("position")
            .values_list("pk", flat=True)
            .first()
        )
        if candidate is None:
            return None
        # The WHERE repeats the test: of two reviewers who read the same candidate,
        # SQLite runs one UPDATE after the other and the second matches no row.
        taken = (
            _open_items(queue)
            .filter(_free(cutoff), pk=candidate)
            .update(claimed_by=user, claimed_at=now)
        )
        if taken == 1:
            return ReviewItem.objects.get(pk=candidate)
    raise ClaimContended("Every free session was taken while you asked: press next again.")


def item_of(queue: ReviewQueue, session_id: str) -> ReviewItem | None:
    return ReviewItem.objects.filter(queue=queue, session_id=session_id).first()


@dataclass
class Progress:
    total: int = 0
    reviewed: int = 0
    deleted: int = 0
    in_review: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    @property
    def left(self) -> int:
        return self.total - self.reviewed - self.deleted

    @property
    def done(self) -> bool:
        return self.left <= 0


def progress_of(queues: Iterable[ReviewQueue]) -> dict[int, Progress]:
    """Each queue's tally in one grouped read."""
    cutoff = timezone.now() - CLAIM_FOR
    found: dict[int, Progress] = {queue.pk: Progress(total=queue.total) for queue in queues}
    rows = (
        ReviewItem.objects.filter(queue__in=list(found))
        .values("queue", "verdict", "session_deleted")
        .annotate(
            n=Count("pk"),
            held=Count("pk", filter=Q(verdict="", claimed_at__gte=cutoff)),
        )
    )
    for row in rows:
        tally = found[row["queue"]]
        if row["verdict"]:
            tally.reviewed += row["n"]
            tally.verdicts[row["verdict"]] = tally.verdicts.get(row["verdict"], 0) + row["n"]
        elif row["session_deleted"]:
            tally.deleted += row["n"]
        else:
            tally.in_review += row["held"]
    return found


#: Open queues the overview lists at most.
OVERVIEW_QUEUES = 10


def open_queues(limit: int = OVERVIEW_QUEUES) -> list[tuple[ReviewQueue, Progress]]:
    """The newest queues of this store that still have sessions to review, with progress."""
    open_ids = (
        ReviewItem.objects.of_this_store()
        .filter(verdict="", session_deleted=False)
        .values("queue")
        .distinct()
    )
    shown = list(queues_of_store().filter(pk__in=open_ids)[:limit])
    tallies = progress_of(shown)
    return [(queue, tallies[queue.pk]) for queue in shown]
