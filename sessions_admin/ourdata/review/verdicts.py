"""Verdicts on review items: who may give one, giving it, and the history a change keeps.

A verdict comes from the reviewer holding the item's claim (a free item is
claimed by the verdict itself), from whoever gave the item's verdict when they
change it, or from a queue manager, whose verdict over another reviewer's claim
or verdict is recorded as such. The write compares the item with what the
request read, so of two verdicts given at once the second is refused, never lost.
"""

from __future__ import annotations

from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from sessions_admin.humanize import shown_and_exact_time
from sessions_admin.ourdata.review.models import EarlierVerdict, ReviewItem
from sessions_admin.ourdata.review.queues import CLAIM_FOR


class VerdictRefused(Exception):
    """This reviewer may not give this item's verdict now; the text says why in a sentence."""


def _name(user: AbstractBaseUser | None) -> str:
    return user.get_username() if user is not None else "a former account"


def _when(moment: datetime | None) -> str:
    return shown_and_exact_time(timezone.localtime(moment))[0] if moment else "an unknown time"


def _held_by_other(item: ReviewItem, user: AbstractBaseUser, now: datetime) -> bool:
    """The item is open and another reviewer's claim on it is still live."""
    return (
        not item.verdict
        and item.claimed_by_id is not None
        and item.claimed_by_id != user.pk
        and item.claimed_at is not None
        and item.claimed_at >= now - CLAIM_FOR
    )


def _over_another(item: ReviewItem, user: AbstractBaseUser, now: datetime) -> bool:
    """Giving this verdict would replace another reviewer's verdict or break their claim."""
    if item.verdict:
        return item.reviewer_id != user.pk
    return _held_by_other(item, user, now)


def refusal(item: ReviewItem, user: AbstractBaseUser, *, manager: bool) -> str | None:
    """Why ``user`` may not give ``item`` a verdict, as a sentence; None when they may."""
    if manager or not _over_another(item, user, timezone.now()):
        return None
    if item.verdict:
        return (
            f"{_name(item.reviewer)} gave this session “{item.verdict}” at "
            f"{_when(item.reviewed_at)}: only they or a queue manager can change it."
        )
    return (
        f"{_name(item.claimed_by)} is reviewing this session (claimed at "
        f"{_when(item.claimed_at)}): the verdict is theirs to give, or a queue manager's."
    )


def give_verdict(
    item: ReviewItem, verdict: str, text: str, user: AbstractBaseUser, *, manager: bool = False
) -> None:
    """Record ``user``'s verdict on the item as read, keep the one it replaces, and
    release the claim; raise :class:`VerdictRefused` when it is not theirs to give
    or the item changed since it was read."""
    why = refusal(item, user, manager=manager)
    if why is not None:
        raise VerdictRefused(why)
    now = timezone.now()
    as_read = ReviewItem.objects.filter(
        pk=item.pk,
        session_deleted=False,
        verdict=item.verdict,
        reviewer_id=item.reviewer_id,
        reviewed_at=item.reviewed_at,
        claimed_by_id=item.claimed_by_id,
        claimed_at=item.claimed_at,
    )
    with transaction.atomic():
        # The first statement writes: SQLite takes its write lock before reading anything.
        changed = as_read.update(
            verdict=verdict,
            text=text,
            reviewer=user,
            reviewed_at=now,
            by_manager=manager and _over_another(item, user, now),
            claimed_by=None,
            claimed_at=None,
        )
        if changed != 1:
            raise VerdictRefused(
                "This session's review changed while you wrote (another verdict or claim, "
                "or the session was deleted): open it again to see where it stands."
            )
        if item.verdict:
            EarlierVerdict.objects.create(
                item=item,
                verdict=item.verdict,
                text=item.text,
                reviewer_id=item.reviewer_id,
                reviewer_name=_name(item.reviewer) if item.reviewer_id else "",
                reviewed_at=item.reviewed_at,
                by_manager=item.by_manager,
                replaced_at=now,
            )


def earlier_record(earlier: EarlierVerdict) -> dict:
    """A replaced verdict as plain data for the exports."""
    return {
        "verdict": earlier.verdict,
        "reviewer": earlier.reviewer_name or None,
        "reviewed_at": earlier.reviewed_at.isoformat() if earlier.reviewed_at else None,
        "by_manager": earlier.by_manager,
        "replaced_at": earlier.replaced_at.isoformat(),
        "text": earlier.text,
    }


def verdicts_of_session(session_id: str) -> list[dict]:
    """Every verdict given on the session, in any queue of this store, oldest first,
    each with the verdicts it replaced."""
    items = (
        ReviewItem.objects.of_this_store()
        .filter(session_id=session_id)
        .exclude(verdict="")
        .select_related("queue", "reviewer")
        .prefetch_related("earlier_verdicts")
        .order_by("reviewed_at", "pk")
    )
    return [
        {
            "queue": item.queue.name,
            "verdict": item.verdict,
            "reviewer": item.reviewer.get_username() if item.reviewer else None,
            "reviewed_at": item.reviewed_at.isoformat() if item.reviewed_at else None,
            "by_manager": item.by_manager,
            "text": item.text,
            "earlier": [earlier_record(earlier) for earlier in item.earlier_verdicts.all()],
        }
        for item in items
    ]
