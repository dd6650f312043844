"""Notes on a session and its messages: add, edit, delete (all POST, each guarded).

``POST /sessions/<id>/notes/`` (``text``, optional ``message``) adds one;
``…/notes/<note id>/edit`` (``text``) and ``…/notes/<note id>/delete`` change
one. Each answers 303 to the session page, or for htmx the page's notes region.
Writing takes "Can annotate"; editing is the author's; deleting is the
author's, or anyone's with "Can delete any note".
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from sessions_admin import params
from sessions_admin.access import ANNOTATE, DELETE_ANY_NOTE, staff_view
from sessions_admin.ids import session_url
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


def notes_context(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """The notes region of the session page: every note, who may change which."""
    user = request.user
    notes = review_notes.notes_of_session(session_id)
    shown = []
    for note in notes:
        shown.append(
            {
                "note": note,
                "dom_id": f"note-{note.pk}",
                "message_url": session_url(session_id, at=note.message_id)
                + f"#message-{note.message_id}"
                if note.message_id is not None
                else "",
                "may_edit": note.author_id == user.pk and user.has_perm(ANNOTATE),
                "may_delete": may_delete(user, note),
                "edit_url": session_url(session_id, f"notes/{note.pk}/edit"),
                "delete_url": session_url(session_id, f"notes/{note.pk}/delete"),
            }
        )
    note_for = params.whole_or_none(request.GET, "note", minimum=-MAX_SQLITE_INT - 1)
    return {
        "notes": shown,
        "notes_by_message": review_notes.by_message(notes),
        "can_annotate": user.has_perm(ANNOTATE),
        "notes_url": session_url(session_id, "notes"),
        "note_for_message": note_for,
        "note_max_chars": NOTE_MAX_CHARS,
    }


def attach_notes(items: list, review: dict[str, Any], session_id: str) -> None:
    """Give each transcript item its notes, and (for annotators) its "note" link."""
    by_message = review["notes_by_message"]
    for item in items:
        message_id = item.row.id
        item.notes = by_message.get(message_id, [])
        if review["can_annotate"] and isinstance(message_id, int):
            item.note_url = session_url(session_id, at=message_id, note=message_id) + "#note-form"


def _answer(request: HttpRequest, session_id: str, message_id: int | None) -> HttpResponse:
    if request.htmx:
        context = {**notes_context(request, session_id), "session_id": session_id}
        return render(request, NOTES_TEMPLATE, context)
    if message_id is not None:
        return HttpResponseSeeOther(
            session_url(session_id, at=message_id) + f"#message-{message_id}"
        )
    return HttpResponseSeeOther(session_url(session_id) + "#notes")


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
