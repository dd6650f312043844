"""Notes on a session or one of its messages: written, edited, read for a page.

Who may do what is the view's business (:mod:`sessions_admin.views.notes`);
this module keeps the rows and reads only this store's.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from sessions_admin.ourdata.review.bulk import sql_names
from sessions_admin.ourdata.review.models import Note
from sessions_admin.ourdata.storeids import to_column
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks
from sessions_admin.store import feed


def notes_of_session(session_id: str) -> list[Note]:
    """Every note on the session and its messages, oldest first (one indexed read)."""
    return list(
        Note.objects.of_this_store().filter(session_id=session_id).order_by("created_at", "id")
    )


#: What a page shows of a note, in the order :func:`shown_notes_of_session` gives.
SHOWN_FIELDS = ("pk", "author_id", "author_name", "created_iso", "edited", "text", "message_id")


def shown_notes_of_session(session_id: str) -> list[tuple]:
    """The session's notes, oldest first, as tuples of :data:`SHOWN_FIELDS`
    (``created_iso`` when it was written, in UTC, as ISO 8601 text: what a page shows
    of it is cut from that text; ``edited`` whether the note was edited).

    One SQL statement of our own: a session page may show hundreds of notes, and
    through the ORM (model instances, then ``values_list``'s per-value converters)
    reading them was most of their cost on the page (bench/bench_review.py).
    """
    connection, table, names = sql_names(Note, _COLUMNS, write=False)
    column = dict(zip(_COLUMNS, names, strict=True))
    # SQLite keeps a datetime as UTC text, which Django's converter parses with a
    # regular expression: read the text itself.
    sqlite = connection.vendor == "sqlite"
    created = f"CAST({column['created_at']} AS TEXT)" if sqlite else column["created_at"]
    sql = (
        f"SELECT {column['id']}, {column['author']}, {column['author_name']}, {created}, "
        f"{column['edited_at']} IS NOT NULL, {column['text']}, {column['message_id']} "
        f"FROM {table} WHERE {column['store_name']} = %s AND {column['session_id']} = %s "
        f"ORDER BY {column['created_at']}, {column['id']}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [current_store(), to_column(session_id)])
        rows = cursor.fetchall()
    convert = utc_iso_text if sqlite else utc_iso
    return [
        (pk, author_id, author, convert(created), bool(edited), text, message_id)
        for pk, author_id, author, created, edited, text, message_id in rows
    ]


_COLUMNS = (
    "id", "author", "author_name", "created_at", "edited_at", "text", "message_id",
    "store_name", "session_id",
)  # fmt: skip


def utc_iso(moment: datetime | None) -> str | None:
    """An aware datetime as UTC ISO 8601 text."""
    return None if moment is None else moment.astimezone(UTC).isoformat()


def utc_iso_text(stored: str | None) -> str | None:
    """Django's SQLite text for a datetime (UTC, ``YYYY-MM-DD HH:MM:SS[.ffffff]``) as
    ISO 8601 text with its offset; any other shape is parsed (naive read as UTC)."""
    if stored is None:
        return None
    if len(stored) in (19, 26) and stored[10] == " " and stored[19:20] in ("", "."):
        return f"{stored[:10]}T{stored[11:]}+00:00"
    moment = datetime.fromisoformat(stored)
    return utc_iso(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def note_of_session(session_id: str, note_id: int) -> Note | None:
    return Note.objects.of_this_store().filter(session_id=session_id, pk=note_id).first()


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


def notes_of_sessions(session_ids: Iterable[str]) -> dict[str, list[Note]]:
    """Each session's notes, oldest first (for exports)."""
    found: dict[str, list[Note]] = {}
    for chunk in chunks([sid for sid in session_ids if isinstance(sid, str)], 500):
        rows = (
            Note.objects.of_this_store().filter(session_id__in=chunk).order_by("created_at", "id")
        )
        for note in rows:
            found.setdefault(note.session_id, []).append(note)
    return found
