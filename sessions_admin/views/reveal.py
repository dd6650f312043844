"""``POST /sessions/<id>/reveal/``: one message's hidden values, in full, for a reason.

Only with ``sessions_admin.reveal_hidden``; the reason is required (a ticket number
or a sentence) and the reveal is recorded before the answer leaves. The answer is
that message alone, unmasked, and never cached: the page reloaded is masked again.
"""

from __future__ import annotations

from dataclasses import replace

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.http import require_POST

from sessions_admin import params
from sessions_admin.access import staff_view
from sessions_admin.ourdata.reveals import REASON_MAX_CHARS, REVEAL_PERMISSION, Reveal
from sessions_admin.params import MAX_SQLITE_INT, BadParameter
from sessions_admin.store import frames, transcript
from sessions_admin.store.connection import frames_root
from sessions_admin.views.transcript_html import message_html
from sessions_admin.views.transcript_items import message_items


def _reason(request: HttpRequest) -> str:
    reason = params.text(request.POST, "reason", max_chars=REASON_MAX_CHARS)
    if reason is None or not reason.strip():
        raise BadParameter(
            "reason: say why you reveal these values (a ticket number or a sentence); "
            "nothing was revealed.",
            name="reason",
        )
    return reason.strip()


def record_reveal(request: HttpRequest, session_id: str, *, message_id: int | None) -> Reveal:
    """Check the asker may reveal and gave a reason, then record the reveal (before any
    value leaves): a message's, or the whole session's (an unmasked export)."""
    if not request.user.has_perm(REVEAL_PERMISSION):
        raise PermissionDenied(f"Revealing hidden values needs {REVEAL_PERMISSION!r}.")
    return Reveal.objects.create(
        user=request.user,
        actor=request.user.get_username()[:150],
        session_id=session_id,
        message_id=message_id,
        reason=_reason(request),
    )


@require_POST
@staff_view(REVEAL_PERMISSION)
def reveal_message(request: HttpRequest, session_id: str) -> HttpResponse:
    message_id = params.whole(
        request.POST, "message", minimum=-MAX_SQLITE_INT - 1, what="a message id"
    )
    if message_id is None:
        raise BadParameter("message: name the message to reveal.", name="message")
    _reason(request)  # refused before anything is read
    if not transcript.message_in_session(session_id, message_id):
        raise Http404(f"Message {message_id} is not a message of this session.")
    page = transcript.message_page(session_id, at=message_id)
    page = replace(page, messages=[m for m in page.messages if m.id == message_id])
    record = record_reveal(request, session_id, message_id=message_id)
    items = message_items(session_id, page, reveal=True)
    has_frames = frames.has_session_dir(frames_root(), session_id)
    context = {
        "message_html": message_html(items[0], has_frames) if items else "",
        "session_id": session_id,
        "message_id": message_id,
        "reason": record.reason,
    }
    template = "sessions_admin/revealed.html"
    response = render(request, f"{template}#message" if request.htmx else template, context)
    add_never_cache_headers(response)
    return response
