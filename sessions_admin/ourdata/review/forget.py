"""What a deleted session takes with it from our review records.

A delete promises the session is gone, so what we wrote about it goes too:
its notes and labels are deleted, and its queue items are marked "session
deleted" (the verdict stays, for the queue's tally; any text goes, the
earlier verdicts' too, and the claim). Two callers:

* the dashboard's deletes, through :func:`sessions_admin.deletion.cascade.cascade_delete`,
  right after the store's transaction commits, counted in the audit row;
* ``manage.py sync_index``, for the sessions the runtime deleted:
  :func:`forget_gone` checks every session our rows name against the store.

A session the runtime deletes and creates again under the same id between two
passes is another session: every row of ours records the ``created_at`` of the
session it was written about (``session_created_at``), and a row whose session
now has another is forgotten like a deleted one's (:func:`forget_recreated`).
The rowid the side index's walk sees would tell the same only while no
``VACUUM`` renumbers the table, and only where a side index is kept; the
creation time is in every row the runtime writes. A row written before this
was recorded (NULL) takes the session it finds at the next pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.db import transaction

from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.bulk import update_rows
from sessions_admin.ourdata.review.models import EarlierVerdict, Note, ReviewItem, SessionLabel
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store import feed
from sessions_admin.store.feed import SortKeys

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
            EarlierVerdict.objects.filter(
                item__store_name=store, item__session_id__in=chunk
            ).exclude(text="").update(text="")
    return done


def _forget_items(pks: list[int]) -> int:
    """Mark these items' sessions deleted: their texts (and earlier verdicts') go."""
    EarlierVerdict.objects.filter(item__in=pks).exclude(text="").update(text="")
    return ReviewItem.objects.filter(pk__in=pks, session_deleted=False).update(
        session_deleted=True, text="", claimed_by=None, claimed_at=None
    )


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


def _forget_rows(
    model: type[Note | SessionLabel | ReviewItem], current: dict[str, SortKeys], store: str
) -> tuple[list[int], list[tuple[int, int]]]:
    """Of this store's ``model`` rows on the sessions in ``current``: the pks written
    about another session than the one the store holds now, and (pk, created_at) for
    rows that recorded none yet. One read of the rows (not one per id chunk)."""
    other: list[int] = []
    unrecorded: list[tuple[int, int]] = []
    rows = model.objects.filter(store_name=store).values_list(
        "pk", "session_id", "session_created_at"
    )
    for pk, sid, recorded in rows.iterator(chunk_size=5000):
        keys = current.get(sid)
        if keys is None or keys.created_at is None:
            continue  # gone (forgotten apart), or a created_at nothing tells apart by
        if recorded is None:
            unrecorded.append((pk, keys.created_at))
        elif recorded != keys.created_at:
            other.append(pk)
    return other, unrecorded


def forget_recreated(current: dict[str, SortKeys], store_name: str | None = None) -> Forgotten:
    """Forget the rows written about an earlier session under an id the store now
    holds again (another ``created_at``), as a delete would; rows that recorded no
    ``created_at`` yet take the current one's."""
    store = store_name or current_store()
    done = Forgotten()
    models = (
        (Note, "notes", lambda pks: Note.objects.filter(pk__in=pks).delete()[0]),
        (SessionLabel, "labels", lambda pks: SessionLabel.objects.filter(pk__in=pks).delete()[0]),
        (ReviewItem, "items", _forget_items),
    )
    for model, counted, forget in models:
        other, unrecorded = _forget_rows(model, current, store)
        for chunk in chunks(other, FORGET_CHUNK):
            with transaction.atomic():
                setattr(done, counted, getattr(done, counted) + forget(chunk))
        update_rows(model, ["session_created_at"], [(c, pk) for pk, c in unrecorded])
    return done


def forget_gone() -> tuple[Forgotten, int]:
    """The sessions our rows name that the store no longer holds (or holds again as
    another session), forgotten; the label rows' sort copies refreshed.

    Reads every annotated id (tens of thousands at most) against the store in
    chunks, so it finds what the runtime deleted whether or not the side
    index ever saw the session. Returns what was forgotten and how many
    sessions were gone.
    """
    # Read before the rows: a message after it is one the label pages look at anew.
    mark = feed.last_message_id()
    gone: list[str] = []
    current: dict[str, SortKeys] = {}
    for chunk in chunks(sorted(annotated_session_ids()), FORGET_CHUNK):
        present = feed.sort_keys(chunk)
        gone.extend(sid for sid in chunk if sid not in present)
        current.update(present)
    done = forget_sessions(gone)
    done.add(forget_recreated(current))
    labels.refresh_copies(current, mark)
    return done, len(gone)
