"""Notes as HTML, built in Python: the notes beside a transcript's messages and the
header's links to them.

In the template, 50 notes cost the session page 12 ms over its 29 ms, against a
goal of 10 % (``bench/bench_review.py``; figures in docs/benchmarks-history.md).
Every value goes through :mod:`sessions_admin.markup`; what all notes of a page
share (their links' heads, escaped) is made once (:class:`NoteLinks`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.utils.safestring import SafeString

from sessions_admin.markup import linked_markup, safe_html


@dataclass(frozen=True, slots=True)
class NoteLinks:
    """What every note's links on one page share, built and escaped once: a note's
    own links are these around its id (``html``: escaped for an attribute; escaping
    is per character and an id is digits)."""

    edit: str
    delete: str
    delete_tail: str
    at: str
    at_tail: str
    at_html: str
    at_tail_html: str
    #: A note's "edit" link and "delete" button around its id, escaped.
    edit_open: str
    delete_open: str
    delete_close: str


@dataclass(slots=True)
class ShownNote:
    """A note as the page shows it: a page may hold hundreds, so what all share is in
    ``links`` and each link is made only when asked for."""

    pk: int
    author: str
    author_html: str
    #: When it was written: UTC, ISO 8601 text (``created_at`` parses it).
    created_iso: str | None
    edited: bool
    text: str
    message_id: int | None
    may_edit: bool
    may_delete: bool
    links: NoteLinks
    #: Whether its message is on this page (set by :func:`attach_notes`).
    on_page: bool = False

    @property
    def created_at(self) -> datetime | None:
        return None if self.created_iso is None else datetime.fromisoformat(self.created_iso)

    @property
    def edit_url(self) -> str:
        return f"{self.links.edit}{self.pk}#note-form"

    @property
    def delete_url(self) -> str:
        return f"{self.links.delete}/notes/{self.pk}/{self.links.delete_tail}"

    @property
    def jump(self) -> str:
        """Where the header's link goes: this page's anchor, or the page holding the
        message (a message's note is beside its message)."""
        if self.message_id is None or self.on_page:
            return f"#note-{self.pk}"
        return f"{self.links.at}at={self.message_id}{self.links.at_tail}#note-{self.pk}"

    @property
    def jump_html(self) -> str:
        if self.message_id is None or self.on_page:
            return f"#note-{self.pk}"
        links = self.links
        return f"{links.at_html}at={self.message_id}{links.at_tail_html}#note-{self.pk}"


def note_controls(note: ShownNote) -> str:
    """A note's "edit" link and "delete" button (the button submits ``#note-actions``)."""
    links = note.links
    edit = f"{links.edit_open}{note.pk}{EDIT_CLOSE}" if note.may_edit else ""
    delete = f"{links.delete_open}{note.pk}/{links.delete_close}" if note.may_delete else ""
    return f"{edit}{delete}"


EDIT_CLOSE = '#note-form" class="small">edit</a>'


def notes_beside_messages(notes: list[ShownNote], zone: Any) -> dict[int, str]:
    """The notes beside each message, by message id: author, time in ``zone`` (the
    page's, read once: Django's lookup costs more than the formatting), text (escaped,
    web addresses linked), controls.

    Markup not yet marked safe (every value escaped): the message's own markup holds
    it (:func:`sessions_admin.views.transcript_html.message_html`) and is marked once
    whole. One pass over the page's notes: per message, a join and a ``SafeString``
    (a copy) were a fifth of the notes' cost on the page (bench_review.py).
    """
    shown_zone = None if is_utc(zone) else zone
    by_message: dict[int, list[str]] = {}
    for note in notes:
        if note.message_id is None:
            continue
        by_message.setdefault(note.message_id, []).append(
            f'<li id="note-{note.pk}"><span class="note-author">{note.author_html}</span> '
            f"{note_time(note.created_iso, shown_zone)} "
            f'<span class="note-text">{linked_markup(note.text)}</span>{note_controls(note)}</li>'
        )
    return {message: f"{NOTES_OPEN}{''.join(items)}</ul>" for message, items in by_message.items()}


NOTES_OPEN = '<ul class="message-notes" aria-label="Notes on this message">'


def note_time(created_iso: str | None, zone: Any) -> str:
    """When a note was written, as the session's notes show it: the zone's time to the
    minute, the exact instant in ``datetime``. Cut from UTC ISO text: for a UTC page
    (``zone`` None) nothing is parsed or formatted (``strftime``, then formatting a
    datetime's fields, were most of the notes' cost on a page of 50)."""
    if created_iso is None:
        return ""
    iso = created_iso
    if zone is not None:
        iso = datetime.fromisoformat(created_iso).astimezone(zone).isoformat()
    return f'<time class="note-time small" datetime="{iso}">{iso[:10]} {iso[11:16]}</time>'


def is_utc(zone: Any) -> bool:
    return zone is UTC or getattr(zone, "key", None) in ("UTC", "Etc/UTC")


def jump_html(notes: list[ShownNote]) -> SafeString:
    """The header's link to each note: its author and where it is."""
    links = ", ".join(
        f'<a href="{note.jump_html}">{note.author_html} · '
        f"{'session' if note.message_id is None else f'#{note.message_id}'}</a>"
        for note in notes
    )
    return safe_html(links)
