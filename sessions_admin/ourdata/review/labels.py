"""Labels on sessions: put on, taken off, read for a page, a row, or the list's filter.

The list's ``?label=`` filter must not look up every labelled session in the
store (10,000 primary-key reads, about 150 ms): each label row keeps a copy
of its session's sort values (last activity, creation, turn count), taken
when the label is put on and refreshed by every ``sync_index`` pass
(:func:`refresh_copies`), which also records up to which store message the
copies are current (:class:`~.models.LabelCopiesMark`). A page then walks our
index in sort order (:func:`walk`) and reads from the store only the rows it
shows and the few sessions with a message after that mark
(``lists.labelled``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connections, router
from django.db.models import F, Q, Value
from django.db.models.functions import Collate

from sessions_admin.ourdata.review.bulk import update_rows
from sessions_admin.ourdata.review.models import Label, LabelCopiesMark, SessionLabel
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store import feed
from sessions_admin.store.feed import SortKeys

#: The sort columns a label row copies, by the store's column name.
COPIED = ("last_active", "created_at", "turn_count")

#: The list's label filter reads at most this many ids (more than any queue holds).
MAX_LABELLED_IDS = 200_000
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
DEFAULT_COLOUR = "#64748b"


def safe_colour(value: str) -> str:
    """The label's colour if it is ``#rrggbb`` (the admin checks; a row written
    another way must not put anything else into the page's style sheet)."""
    return value if _COLOUR.fullmatch(value or "") else DEFAULT_COLOUR


#: The colours a label made on a session's page picks from (white text reads on each).
PALETTE = (
    ("blue", "#2456a6"),
    ("green", "#1e6b35"),
    ("red", "#b3261e"),
    ("amber", "#8a5a00"),
    ("purple", "#6b3fa0"),
    ("teal", "#0f766e"),
    ("slate", "#475569"),
    ("magenta", "#a21caf"),
)


def make_label(name: str, colour: str) -> Label:
    """The label named ``name``, made with ``colour`` if there is none yet; a name the
    admin would refuse raises :class:`django.core.exceptions.ValidationError`."""
    existing = label_named(name)
    if existing is not None:
        return existing
    label = Label(name=name, color=colour)
    label.full_clean()
    label.save()
    return label


def all_labels() -> list[Label]:
    return list(Label.objects.order_by("name"))


def label_named(name: str) -> Label | None:
    return Label.objects.filter(name=name).first()


def labels_of_session(session_id: str, every: list[Label] | None = None) -> list[Label]:
    """The session's labels in name order; ``every`` (:func:`all_labels`), when the
    caller has read it, saves building a label for each of them."""
    uses = SessionLabel.objects.of_this_store().filter(session_id=session_id)
    if every is None:
        return [use.label for use in uses.select_related("label").order_by("label__name")]
    on = set(uses.values_list("label_id", flat=True))
    return [label for label in every if label.pk in on]


def copies_of(keys: SortKeys | None) -> dict[str, int | None]:
    """A label row's copied fields for a session's sort values (``None``: not in the store)."""
    return {
        f"session_{column}": None if keys is None else getattr(keys, column) for column in COPIED
    }


def add_label(session_id: str, label: Label, user: AbstractBaseUser) -> bool:
    """Put ``label`` on the session, copying its sort values; False when it was already there."""
    keys = feed.sort_keys([session_id]).get(session_id)
    _, created = SessionLabel.objects.get_or_create(
        store_name=current_store(),
        session_id=session_id,
        label=label,
        defaults={"added_by": user, **copies_of(keys)},
    )
    return created


def remove_label(session_id: str, label: Label) -> bool:
    deleted, _ = (
        SessionLabel.objects.of_this_store().filter(session_id=session_id, label=label).delete()
    )
    return bool(deleted)


def labels_of_sessions(session_ids: Iterable[str]) -> dict[str, list[Label]]:
    """Each session's labels (for a page of list rows), in name order."""
    found: dict[str, list[Label]] = {}
    named: dict[int, Label] | None = None
    for chunk in chunks([sid for sid in session_ids if isinstance(sid, str)], 500):
        uses = (
            SessionLabel.objects.of_this_store()
            .filter(session_id__in=chunk)
            .values_list("session_id", "label_id")
        )
        for sid, label_id in uses:
            # The labels are few: read once, not one Label object per row (a list page's
            # 50 rows each build one otherwise, about a millisecond).
            named = named if named is not None else {label.pk: label for label in all_labels()}
            if label_id in named:  # not a label deleted in the admin since
                found.setdefault(sid, []).append(named[label_id])
    for on in found.values():
        on.sort(key=lambda label: label.name)
    return found


def session_ids_with(label: Label) -> list[str]:
    """Every session of this store with ``label`` (read by the index (store, label, id))."""
    return list(
        SessionLabel.objects.of_this_store()
        .filter(label=label)
        .order_by("session_id")
        .values_list("session_id", flat=True)[:MAX_LABELLED_IDS]
    )


def labelled_among(label: Label, session_ids: Iterable[str]) -> set[str]:
    """Which of these sessions carry ``label``."""
    found: set[str] = set()
    for chunk in chunks(list(session_ids), 500):
        found.update(
            SessionLabel.objects.of_this_store()
            .filter(label=label, session_id__in=chunk)
            .values_list("session_id", flat=True)
        )
    return found


def copies_mark() -> int | None:
    """The store message id the sort copies are current to; ``None`` before the first
    ``sync_index`` pass refreshed them."""
    return LabelCopiesMark.objects.of_this_store().values_list("message_id", flat=True).first()


def has_uncopied(label: Label, column: str) -> bool:
    """Does a row of ``label`` hold no copy of ``column`` (a value no integer orders as,
    or a session missing when labelled)? Then its place is the store's to say."""
    return (
        SessionLabel.objects.of_this_store()
        .filter(label=label, **{f"session_{column}__isnull": True})
        .exists()
    )


def _binary(field: str) -> Any:
    """The field compared byte by byte, as SQLite compares the store's ids (PostgreSQL
    would use the database's collation otherwise)."""
    if connections[router.db_for_read(SessionLabel)].vendor == "postgresql":
        return Collate(F(field), "C")
    return F(field)


def walk(
    label: Label,
    column: str,
    descending: bool,
    after: tuple[Any, str] | None,
    limit: int,
) -> list[tuple[str, int]]:
    """Up to ``limit`` (session id, copied value) of ``label`` in the order of ``column``
    then id, after ``after`` (a value and an id), from the index on the copies."""
    field = f"session_{column}"
    rows = (
        SessionLabel.objects.of_this_store().filter(label=label).annotate(sid=_binary("session_id"))
    )
    if after is not None:
        value, after_id = after
        before, before_eq = ("lt", "lte") if descending else ("gt", "gte")
        # The first test lets the database seek in the index; the second breaks ties by id.
        rows = rows.filter(**{f"{field}__{before_eq}": value}).filter(
            Q(**{f"{field}__{before}": value})
            | Q(**{field: value, f"sid__{before}": Value(after_id)})
        )
    order = (F(field).desc(), F("sid").desc()) if descending else (F(field).asc(), F("sid").asc())
    return list(rows.order_by(*order).values_list("session_id", field)[:limit])


def correct_copies(session_id: str, *, last_active: int | None, turn_count: int | None) -> None:
    """A page found the store's values differ from the session's copies: take them.
    (Not ``created_at``: another one means another session, which the next pass forgets.)"""
    SessionLabel.objects.of_this_store().filter(session_id=session_id).update(
        session_last_active=last_active, session_turn_count=turn_count
    )


def refresh_copies(current: Mapping[str, SortKeys], mark: int) -> int:
    """Bring every label row of this store up to ``current`` (each labelled session's
    sort values, read after ``mark`` was the store's newest message) and record the
    mark; returns how many rows changed. ``sync_index`` calls it each pass."""
    store = current_store()
    fields = [f"session_{column}" for column in COPIED]
    stale: list[tuple] = []
    for pk, sid, *copied in (
        SessionLabel.objects.filter(store_name=store)
        .values_list("pk", "session_id", *fields)
        .iterator(chunk_size=5000)
    ):
        if sid not in current:
            continue  # labelled since ``current`` was read: its copy is the newer one
        wanted = list(copies_of(current[sid]).values())
        if copied != wanted:
            stale.append((*wanted, pk))
    update_rows(SessionLabel, fields, stale)
    LabelCopiesMark.objects.update_or_create(store_name=store, defaults={"message_id": mark})
    return len(stale)
