"""What a deleted session takes with it from our review records.

A delete promises the session is gone, so what we wrote about it goes too:
its notes and labels are deleted, and its queue items are marked "session
deleted" (the verdict stays, for the queue's tally; any text goes, and the
claim). Two callers:

* the dashboard's deletes, through :func:`sessions_admin.deletion.cascade.cascade_delete`,
  right after the store's transaction commits, counted in the audit row;
* ``manage.py sync_index``, for the sessions the runtime deleted:
  :func:`forget_gone` checks every session our rows name against the store.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from sessions_admin.ourdata.review.models import Note, ReviewItem, SessionLabel
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store import feed

#: Session ids per statement (an ``IN`` list PostgreSQL and SQLite both take).
FORGET_CHUNK = 500


@dataclass
class Forgotten:
    """What our review records lost: notes deleted, labels removed, items marked."""

    notes: int = 0
    labels: int = 0
    items: int = 0

    def add(self, other: Forgotten) -> None:
        self.notes += other.notes
        self.labels += other.labels
        self.items += other.items

    @property
    def any(self) -> bool:
        return bool(self.notes or self.labels or self.items)


def forget_sessions(session_ids: Iterable[str], store_name: str | None = None) -> Forgotten:
    """Delete these sessions' notes and labels; mark their queue items deleted."""
    store = store_name or current_store()
    ids = [sid for sid in dict.fromkeys(session_ids) if isinstance(sid, str)]
    done = Forgotten()
    for chunk in chunks(ids, FORGET_CHUNK):
        with transaction.atomic():
            done.notes += Note.objects.filter(store_name=store, session_id__in=chunk).delete()[0]
            done.labels += SessionLabel.objects.filter(
                store_name=store, session_id__in=chunk
            ).delete()[0]
            done.items += ReviewItem.objects.filter(
                store_name=store, session_id__in=chunk, session_deleted=False
            ).update(session_deleted=True, text="", claimed_by=None, claimed_at=None)
    return done


def annotated_session_ids(store_name: str | None = None) -> set[str]:
    """Every session id this store's notes, labels and live queue items name."""
    store = store_name or current_store()
    found: set[str] = set()
    for queryset in (
        Note.objects.filter(store_name=store),
        SessionLabel.objects.filter(store_name=store),
        ReviewItem.objects.filter(store_name=store, session_deleted=False),
    ):
        found.update(queryset.values_list("session_id", flat=True).distinct().iterator())
    return found


def forget_gone() -> tuple[Forgotten, int]:
    """The sessions our rows name that the store no longer holds, forgotten.

    Reads every annotated id (tens of thousands at most) against the store in
    chunks, so it finds what the runtime deleted whether or not the side
    index ever saw the session. Returns what was forgotten and how many
    sessions were gone.
    """
    gone: list[str] = []
    for chunk in chunks(sorted(annotated_session_ids()), FORGET_CHUNK):
        present = feed.sessions_by_id(chunk)
        gone.extend(sid for sid in chunk if sid not in present)
    return forget_sessions(gone), len(gone)
