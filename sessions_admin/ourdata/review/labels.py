"""Labels on sessions: put on, taken off, read for a page, a row, or the list's filter."""

from __future__ import annotations

import re
from collections.abc import Iterable

from django.contrib.auth.models import AbstractBaseUser

from sessions_admin.ourdata.review.models import Label, SessionLabel
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks

#: The list's label filter reads at most this many ids (more than any queue holds).
MAX_LABELLED_IDS = 200_000
_COLOUR = re.compile(r"#[0-9a-fA-F]{6}")
DEFAULT_COLOUR = "#64748b"


def safe_colour(value: str) -> str:
    """The label's colour if it is ``#rrggbb`` (the admin checks; a row written
    another way must not put anything else into the page's style sheet)."""
    return value if _COLOUR.fullmatch(value or "") else DEFAULT_COLOUR


def all_labels() -> list[Label]:
    return list(Label.objects.order_by("name"))


def label_named(name: str) -> Label | None:
    return Label.objects.filter(name=name).first()


def labels_of_session(session_id: str) -> list[Label]:
    return [
        use.label
        for use in SessionLabel.objects.filter(store_name=current_store(), session_id=session_id)
        .select_related("label")
        .order_by("label__name")
    ]


def add_label(session_id: str, label: Label, user: AbstractBaseUser) -> bool:
    """Put ``label`` on the session; False when it was already there."""
    _, created = SessionLabel.objects.get_or_create(
        store_name=current_store(),
        session_id=session_id,
        label=label,
        defaults={"added_by": user},
    )
    return created


def remove_label(session_id: str, label: Label) -> bool:
    deleted, _ = SessionLabel.objects.filter(
        store_name=current_store(), session_id=session_id, label=label
    ).delete()
    return bool(deleted)


def labels_of_sessions(session_ids: Iterable[str]) -> dict[str, list[Label]]:
    """Each session's labels (for a page of list rows), in name order."""
    found: dict[str, list[Label]] = {}
    for chunk in chunks([sid for sid in session_ids if isinstance(sid, str)], 500):
        uses = (
            SessionLabel.objects.filter(store_name=current_store(), session_id__in=chunk)
            .select_related("label")
            .order_by("label__name")
        )
        for use in uses:
            found.setdefault(use.session_id, []).append(use.label)
    return found


def session_ids_with(label: Label) -> list[str]:
    """Every session of this store with ``label`` (read by the index (store, label, id))."""
    return list(
        SessionLabel.objects.filter(store_name=current_store(), label=label)
        .order_by("session_id")
        .values_list("session_id", flat=True)[:MAX_LABELLED_IDS]
    )
