"""Notes on a session and its messages: add, edit, delete (all POST, each guarded).

The notes beside messages and the header's links to them are markup built in
:mod:`sessions_admin.views.notes_html` (which says why); the notes are read with one
SQL statement of our own (:func:`~sessions_admin.ourdata.review.notes.shown_notes_of_session`).

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
from django.utils import timezone
from django.views.decorators.http import require_POST

from sessions_admin import params
from sessions_admin.access import ANNOTATE, DELETE_ANY_NOTE, staff_view
from sessions_admin.ids import session_url
from sessions_admin.markup import esc
from sessions_admin.ourdata.review import notes as review_notes
from sessions_admin.ourdata.review.models import NOTE_MAX_CHARS, Note
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import transcript
from sessions_admin.views.notes_html import NoteLinks, ShownNote, jump_html, notes_beside_messages
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


def _note_links(request: HttpRequest, session_id: str) -> NoteLinks:
    # The page's own query, less ?note= and ?edit=, encoded once.
    edit_query = request.GET.copy()
    edit_query.pop("note", None)
    edit_query.pop("edit", None)
    kept = edit_query.urlencode()
    edit = f"?{kept}&edit=" if kept else "?edit="
    # session_url percent-encodes the id into the path (or the query): cut its URLs
    # around a marker once rather than encode the id per note.
    delete, _, delete_tail = session_url(session_id, "notes/0/delete").rpartition("/notes/0/")
    at, _, at_tail = session_url(session_id, at=0).rpartition("at=0")
    edit_html, delete_html, delete_tail_html = esc(edit), esc(delete), esc(delete_tail)
    return NoteLinks(
        edit, delete, delete_tail, at, at_tail,
        esc(at), esc(at_tail),
        # " · " apart: right after a note's last link, "edit" read as part of it.
        f' · <a href="{edit_html}',
        f' · <button type="submit" form="note-actions" formaction="{delete_html}/notes/',
        f'{delete_tail_html}" class="link small">delete</button>',
    )  # fmt: skip


def _with(url: str, marker: str, value: str) -> str:
    head, _, tail = url.rpartition(marker)
    return f"{head}{value}{tail}"


def notes_context(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """The notes region of the session page: every note, who may change which, and
    the one note form (``?note=<message id>`` aims it at a message, ``?edit=<note id>``
    edits one of yours)."""
    user = request.user
    annotate, delete_any = user.has_perm(ANNOTATE), user.has_perm(DELETE_ANY_NOTE)
    links = _note_links(request, session_id)
    user_pk = user.pk  # request.user is lazy: each attribute read goes through a proxy
    authors: dict[str, str] = {}  # a page's notes have a few authors: escape each once
    shown = [
        ShownNote(
            pk,
            author,
            authors.get(author) or authors.setdefault(author, esc(author)),
            created_iso,
            edited,
            text,
            message_id,
            author_id == user_pk and annotate,
            delete_any or (author_id == user_pk and annotate),
            links,
        )
        for pk, author_id, author, created_iso, edited, text, message_id in (
            review_notes.shown_notes_of_session(session_id)
        )
    ]
    editing = params.whole_or_none(request.GET, "edit", minimum=1)
    edited = next((n for n in shown if n.may_edit and n.pk == editing), None)
    note_for = params.whole_or_none(request.GET, "note", minimum=-MAX_SQLITE_INT - 1)
    notes_url = session_url(session_id, "notes")
    return {
        "notes": shown,
        # Made when the template reads it (Django calls a callable): the session page
        # makes it again once it knows which notes' messages it shows (attach_notes).
        "notes_jump_html": lambda: jump_html(shown),
        "session_notes": [n for n in shown if n.message_id is None],
        "can_annotate": annotate,
        "can_delete_notes": any(n.may_delete for n in shown),
        "notes_url": notes_url,
        "note_form_url": (
            _with(session_url(session_id, "notes/0/edit"), "/notes/0/", f"/notes/{edited.pk}/")
            if edited
            else notes_url
        ),
        "editing": edited,
        "note_for_message": None if edited else note_for,
        "note_max_chars": NOTE_MAX_CHARS,
        "notes_session_id": session_id,
        "review_id": params.whole_or_none(request.GET, "review", minimum=1),
    }


def attach_notes(items: list, review: dict[str, Any], session_id: str) -> None:
    """Give each transcript item its notes and (for annotators) its "note" link; the
    header's links to notes of messages on other pages open those pages."""
    on_page = {item.row.id for item in items if isinstance(item.row.id, int)}
    shown_here = []
    for note in review["notes"]:
        if note.message_id in on_page:
            note.on_page = True
            shown_here.append(note)
    # Only this page's messages' notes are drawn: a long session's others wait for their page.
    beside = notes_beside_messages(shown_here, timezone.get_current_timezone())
    note_pattern = session_url(session_id, at=0, note=0) + "#note-form"
    for item in items:
        message_id = item.row.id
        markup = beside.get(message_id)
        if markup:
            item.notes_html = markup
        if review["can_annotate"] and isinstance(message_id, int):
            item.note_url = note_pattern.replace("at=0", f"at={message_id}", 1).replace(
                "note=0", f"note={message_id}", 1
            )
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
