"""Notes on a session and its messages: add, edit, delete (all POST, each guarded).

The notes beside messages and the header's links to them are built in Python
(:func:`message_notes_html`, :func:`jump_html`, every value through
:mod:`sessions_admin.markup`): in the template, 50 notes cost the session page
12 ms over its 29 ms (×1.42, bench/bench_review.py, 2026-12-01), against a
goal of 10%.

``POST /sessions/<id>/notes/`` (``text``, optional ``message``) adds one;
``…/notes/<note id>/edit`` (``text``) and ``…/notes/<note id>/delete`` change
one. Each answers 303 to the session page, or for htmx the page's notes region.
Writing takes "Can annotate"; editing is the author's; deleting is the
author's, or anyone's with "Can delete any note".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.safestring import SafeString
from django.views.decorators.http import require_POST

from sessions_admin import params
from sessions_admin.access import ANNOTATE, DELETE_ANY_NOTE, staff_view
from sessions_admin.ids import session_url
from sessions_admin.markup import esc, linked_text, safe_html
from sessions_admin.ourdata.review import notes as review_notes
from sessions_admin.ourdata.review.models import NOTE_MAX_CHARS, Note
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import transcript
from sessions_admin.views.responses import HttpResponseSeeOther

NOTES_TEMPLATE = "sessions_admin/_review_head.html#notes"


def note_text(request: HttpRequest) -> str:
    """The posted ``text``: required, at most NOTE_MAX_CHARS characters."""
    text = params.text(request.POST, "text", max_chars=NOTE_MAX_CHARS)
    if text is None:
        raise BadParameter("text is empty: write something to save a note.", name="text")
    return text


def _message(request: HttpRequest, session_id: str) -> int | None:
    message_id = params.whole(
        request.POST, "message", minimum=-MAX_SQLITE_INT - 1, what="a message id"
    )
    if message_id is not None and not transcript.message_in_session(session_id, message_id):
        raise BadParameter(
            f"message {message_id} is not a message of this session.", name="message"
        )
    return message_id


def may_delete(user: Any, note: Note) -> bool:
    return user.has_perm(DELETE_ANY_NOTE) or (note.author_id == user.pk and user.has_perm(ANNOTATE))


@dataclass(slots=True)
class ShownNote:
    """A note as the page shows it (values prepared once: a page may hold hundreds)."""

    pk: str
    author: str
    created_at: Any
    edited: bool
    text: str
    message_id: int | None
    may_edit: bool
    may_delete: bool
    edit_url: str
    delete_url: str
    #: Where the header's link jumps: this page's anchor, or the page holding the message.
    jump: str = ""
    #: ``edit_url`` and ``delete_url`` escaped for an attribute (the markup beside messages).
    edit_url_html: str = ""
    delete_url_html: str = ""


def _with(url: str, marker: str, value: str) -> str:
    # session_url percent-encodes the id into the path (or the query): build each
    # note's URL from one made with a marker instead of encoding the id per note.
    head, _, tail = url.rpartition(marker)
    return f"{head}{value}{tail}"


def notes_context(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """The notes region of the session page: every note, who may change which, and
    the one note form (``?note=<message id>`` aims it at a message, ``?edit=<note id>``
    edits one of yours)."""
    user = request.user
    annotate, delete_any = user.has_perm(ANNOTATE), user.has_perm(DELETE_ANY_NOTE)
    delete_pattern = session_url(session_id, "notes/0/delete")
    # The page's own query, less ?note= and ?edit=, encoded once: a page may show
    # hundreds of notes, each with its "edit" link (issue 20: 50 notes within 10 %).
    edit_query = request.GET.copy()
    edit_query.pop("note", None)
    edit_query.pop("edit", None)
    kept = edit_query.urlencode()
    edit_head = f"?{kept}&edit=" if kept else "?edit="
    # The URLs around each note's id, cut once (session_url percent-encodes the id).
    delete_head, _, delete_tail = delete_pattern.rpartition("/notes/0/")
    at_head, _, at_tail = session_url(session_id, at=0).rpartition("at=0")
    edit_head_html, delete_head_html, delete_tail_html = (
        esc(edit_head),
        esc(delete_head),
        esc(delete_tail),
    )
    shown: list[ShownNote] = []
    user_pk = user.pk  # request.user is lazy: each attribute read goes through a proxy
    for (
        pk,
        author_id,
        author,
        created_at,
        edited_at,
        text,
        message_id,
    ) in review_notes.shown_notes_of_session(session_id):
        own = author_id == user_pk
        shown.append(
            ShownNote(
                str(pk),
                author,
                created_at,
                edited_at is not None,
                text,
                message_id,
                own and annotate,
                delete_any or (own and annotate),
                f"{edit_head}{pk}#note-form",
                f"{delete_head}/notes/{pk}/{delete_tail}",
                # A message's note is on the page holding that message (attach_notes
                # says which are on this one).
                f"#note-{pk}"
                if message_id is None
                else f"{at_head}at={message_id}{at_tail}#note-{pk}",
                # Escaping is per character and an id is digits: the heads are escaped once.
                f"{edit_head_html}{pk}#note-form",
                f"{delete_head_html}/notes/{pk}/{delete_tail_html}",
            )
        )
    editing = params.whole_or_none(request.GET, "edit", minimum=1)
    edited = next((n for n in shown if n.may_edit and n.pk == str(editing)), None)
    note_for = params.whole_or_none(request.GET, "note", minimum=-MAX_SQLITE_INT - 1)
    return {
        "notes": shown,
        "notes_jump_html": jump_html(shown),
        "session_notes": [n for n in shown if n.message_id is None],
        "can_annotate": annotate,
        "can_delete_notes": any(n.may_delete for n in shown),
        "notes_url": session_url(session_id, "notes"),
        "note_form_url": (
            _with(delete_pattern, "/notes/0/delete", f"/notes/{edited.pk}/edit")
            if edited
            else session_url(session_id, "notes")
        ),
        "editing": edited,
        "note_for_message": None if edited else note_for,
        "note_max_chars": NOTE_MAX_CHARS,
        "notes_session_id": session_id,
        "review_id": params.whole_or_none(request.GET, "review", minimum=1),
    }


def note_controls(note: ShownNote) -> str:
    """A note's "edit" link and "delete" button (the button submits ``#note-actions``)."""
    parts = []
    if note.may_edit:
        parts.append(f' <a href="{note.edit_url_html}" class="small">edit</a>')
    if note.may_delete:
        parts.append(
            f' <button type="submit" form="note-actions" formaction="{note.delete_url_html}" '
            'class="link small">delete</button>'
        )
    return "".join(parts)


def message_notes_html(notes: list[ShownNote], zone: Any) -> SafeString:
    """The notes beside one message: author, time in ``zone`` (the page's, read once:
    Django's lookup costs more than the formatting), text (escaped, web addresses
    linked), controls."""
    authors: dict[str, str] = {}  # a page's notes have a few authors: escape each once
    items = "".join(
        f'<li id="note-{note.pk}"><span class="note-author">'
        f"{authors.get(note.author) or authors.setdefault(note.author, esc(note.author))}</span> "
        f"{_note_time(note.created_at, zone)} "
        f'<span class="note-text">{linked_text(note.text)}</span>{note_controls(note)}</li>'
        for note in notes
    )
    return safe_html(f'<ul class="message-notes" aria-label="Notes on this message">{items}</ul>')


def _note_time(created_at: Any, zone: Any) -> str:
    """When a note was written, as the session's notes show it: the zone's time to the
    minute, the exact instant in ``datetime`` (formatted by hand: ``strftime`` was a
    third of the notes' cost on a page of 50)."""
    if created_at is None:
        return ""
    t = created_at.astimezone(zone)
    return (
        f'<time class="note-time small" datetime="{t.isoformat()}">'
        f"{t.year:04d}-{t.month:02d}-{t.day:02d} {t.hour:02d}:{t.minute:02d}</time>"
    )


def jump_html(notes: list[ShownNote]) -> SafeString:
    """The header's link to each note: its author and where it is."""
    links = ", ".join(
        f'<a href="{esc(note.jump)}">{esc(note.author)} · '
        f"{'session' if note.message_id is None else f'#{note.message_id}'}</a>"
        for note in notes
    )
    return safe_html(links)


def attach_notes(items: list, review: dict[str, Any], session_id: str) -> None:
    """Give each transcript item its notes and (for annotators) its "note" link; the
    header's links to notes of messages on other pages open those pages."""
    by_message: dict[int, list[ShownNote]] = {}
    for note in review["notes"]:
        if note.message_id is not None:
            by_message.setdefault(note.message_id, []).append(note)
    on_page: set[int] = set()
    zone = timezone.get_current_timezone()
    note_pattern = session_url(session_id, at=0, note=0) + "#note-form"
    for item in items:
        message_id = item.row.id
        notes = by_message.get(message_id)
        if notes:
            item.notes_html = message_notes_html(notes, zone)
        if isinstance(message_id, int):
            on_page.add(message_id)
            if review["can_annotate"]:
                item.note_url = note_pattern.replace("at=0", f"at={message_id}", 1).replace(
                    "note=0", f"note={message_id}", 1
                )
    for message_id in on_page & by_message.keys():
        for note in by_message[message_id]:
            note.jump = f"#note-{note.pk}"  # on this page
    review["notes_jump_html"] = jump_html(review["notes"])


def _answer(request: HttpRequest, session_id: str, message_id: int | None) -> HttpResponse:
    if request.htmx:
        context = notes_context(request, session_id)
        return render(request, NOTES_TEMPLATE, context)
    # Written from a review queue's session: back to it with the review bar.
    review = params.whole_or_none(request.POST, "review", minimum=1)
    kept = {"review": review} if review is not None else {}
    if message_id is not None:
        return HttpResponseSeeOther(
            session_url(session_id, at=message_id, **kept) + f"#message-{message_id}"
        )
    return HttpResponseSeeOther(session_url(session_id, **kept) + "#notes")


def _note(session_id: str, note_id: str) -> Note:
    number = int(note_id)  # the route allows digits only
    note = review_notes.note_of_session(session_id, number) if number <= MAX_SQLITE_INT else None
    if note is None:
        raise Http404(f"No note {note_id} on this session.")
    return note


@require_POST
@staff_view(ANNOTATE)
def add_note(request: HttpRequest, session_id: str) -> HttpResponse:
    text = note_text(request)
    message_id = _message(request, session_id)
    review_notes.add_note(session_id, text, message_id=message_id, author=request.user)
    return _answer(request, session_id, message_id)


@require_POST
@staff_view(ANNOTATE)
def edit_note(request: HttpRequest, session_id: str, note_id: str) -> HttpResponse:
    note = _note(session_id, note_id)
    if note.author_id != request.user.pk:
        raise PermissionDenied("Only its author may edit a note.")
    review_notes.edit_note(note, note_text(request))
    return _answer(request, session_id, note.message_id)


@require_POST
@staff_view()
def delete_note(request: HttpRequest, session_id: str, note_id: str) -> HttpResponse:
    note = _note(session_id, note_id)
    if not may_delete(request.user, note):
        raise PermissionDenied(
            f"Only its author (with {ANNOTATE!r}) or staff with {DELETE_ANY_NOTE!r} "
            "may delete a note."
        )
    message_id = note.message_id
    note.delete()
    return _answer(request, session_id, message_id)
