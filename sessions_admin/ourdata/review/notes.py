"""Notes on a session or one of its messages: written, edited, read for a page.

Who may do what is the view's business (:mod:`sessions_admin.views.notes`);
this module keeps the rows and reads only this store's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from sessions_admin.ourdata.review.models import Note
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store import feed


def notes_of_session(session_id: str) -> list[Note]:
    """Every note on the session and its messages, oldest first (one indexed read)."""
    return list(
        Note.objects.filter(store_name=current_store(), session_id=session_id).order_by(
            "created_at", "id"
        )
    )


#: What a page shows of a note, in the order :func:`shown_notes_of_session` gives.
SHOWN_FIELDS = ("pk", "author_id", "author_name", "created_at", "edited_at", "text", "message_id")


def shown_notes_of_session(session_id: str) -> list[tuple]:
    """:func:`notes_of_session` as tuples of :data:`SHOWN_FIELDS`: a session page may
    show hundreds, and building a model instance each was most of their cost."""
    return list(
        Note.objects.filter(store_name=current_store(), session_id=session_id)
        .order_by("created_at", "id")
        .values_list(*SHOWN_FIELDS)
    )


def note_of_session(session_id: str, note_id: int) -> Note | None:
    return Note.objects.filter(
        store_name=current_store(), session_id=session_id, pk=note_id
    ).first()


def add_note(
    session_id: str, text: str, *, message_id: int | None, author: AbstractBaseUser
) -> Note:
    # Which session the note is about: one the runtime re-creates under this id is another.
    keys = feed.sort_keys([session_id]).get(session_id)
    return Note.objects.create(
        session_id=session_id,
        session_created_at=keys.created_at if keys else None,
        message_id=message_id,
        text=text,
        author=author,
        author_name=author.get_username(),
    )


def edit_note(note: Note, text: str) -> None:
    note.text = text
    note.edited_at = timezone.now()
    note.save(update_fields=["text", "edited_at"])


def by_message(notes: Sequence[Note]) -> dict[int, list[Note]]:
    """The notes that name a message, grouped by its id."""
    grouped: dict[int, list[Note]] = {}
    for note in notes:
        if note.message_id is not None:
            grouped.setdefault(note.message_id, []).append(note)
    return grouped


def noted_sessions(session_ids: Iterable[str]) -> set[str]:
    """Which of these sessions have a note (for the list's marks)."""
    found: set[str] = set()
    for chunk in chunks([sid for sid in session_ids if isinstance(sid, str)], 500):
        found.update(
            Note.objects.filter(store_name=current_store(), session_id__in=chunk)
            .values_list("session_id", flat=True)
            .distinct()
        )
    return found


def notes_of_sessions(session_ids: Iterable[str]) -> dict[str, list[Note]]:
    """Each session's notes, oldest first (for exports)."""
    found: dict[str, list[Note]] = {}
    for chunk in chunks([sid for sid in session_ids if isinstance(sid, str)], 500):
        rows = Note.objects.filter(store_name=current_store(), session_id__in=chunk).order_by(
            "created_at", "id"
        )
        for note in rows:
            found.setdefault(note.session_id, []).append(note)
    return found
