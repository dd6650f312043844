"""The session page: header, transcript (paged by keyset), state, statistics, values.

One URL per state of the page: ``?role=&tool=&q=`` filter the transcript,
``?after=<id>`` / ``?before=<id>`` page it, ``?at=<id>#message-<id>`` opens it
around one message, ``?end=1`` at its last page, ``?tab=state`` (or the
``state`` subpage) shows the state. For htmx the same URLs answer with the
swapped region only. Big values are fetched on demand from the
``message_value`` / ``state_value`` subpages (``?raw=1`` downloads them).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import clock, params
from sessions_admin.access import staff_view
from sessions_admin.ids import session_url
from sessions_admin.masking import masker
from sessions_admin.ourdata.reveals import REVEAL_PERMISSION
from sessions_admin.params import MAX_SQLITE_INT
from sessions_admin.store import frames, queries, transcript
from sessions_admin.store.connection import frames_root
from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.values import Undecodable
from sessions_admin.views import json_html, listparams
from sessions_admin.views.notes import attach_notes, notes_context
from sessions_admin.views.review_labels import labels_context
from sessions_admin.views.reviews import review_bar_context
from sessions_admin.views.transcript_html import messages_html
from sessions_admin.views.transcript_items import message_items, tool_outline

TEMPLATE = "sessions_admin/session.html"
VALUE_TEMPLATE = "sessions_admin/value.html"
HIGHLIGHT_MAX_CHARS = 2 * 1024 * 1024


def _message_id(request: HttpRequest, name: str) -> int | None:
    # Message ids are SQLite rowids: 64-bit, and a hand-written row may be negative.
    return params.whole(request.GET, name, minimum=-MAX_SQLITE_INT - 1, what="a message id")


def _session(session_id: str) -> queries.SessionRow:
    session = queries.get_session(session_id)
    if session is None:  # deleted between the router's check and now
        raise Http404(f"No session with id {session_id!r} in the store.")
    return session


def _header_context(session: queries.SessionRow, has_frames: bool | None = None) -> dict[str, Any]:
    if has_frames is None:
        has_frames = frames.has_session_dir(frames_root(), session.id)
    return {
        "session": session,
        "has_frames": has_frames,
        "message_count": transcript.message_count(session.id),
        "state_keys": transcript.state_keys(session.id),
        "stats_url": session_url(session.id, "stats"),
        "state_url": session_url(session.id, "state"),
        "transcript_url": session_url(session.id),
        "masking_on": masker() is not None,
    }


def _transcript_context(request: HttpRequest, session: queries.SessionRow) -> dict[str, Any]:
    message_filter = listparams.parse_message_filter(request.GET)
    after = _message_id(request, "after")
    before = _message_id(request, "before")
    at = _message_id(request, "at")
    end = request.GET.get("end") == "1"
    try:
        page = transcript.message_page(
            session.id, message_filter, after=after, before=before, at=at, end=end
        )
    except transcript.UnknownMessage as exc:
        raise Http404(str(exc)) from None
    kept = message_filter.as_query()
    can_reveal = request.user.has_perm(REVEAL_PERMISSION)
    items = message_items(session.id, page, can_reveal=can_reveal)
    review = notes_context(request, session.id)
    attach_notes(items, review, session.id)
    # One lstat a page: trace links to frames that are not on disk lead nowhere.
    has_frames = frames.has_session_dir(frames_root(), session.id)
    return {
        **review,
        "filter": message_filter,
        "filter_query": kept,
        "page": page,
        "message_rows": page.messages,
        "messages_html": messages_html(items, has_frames),
        "roles": _role_choices(message_filter.role),
        "after_url": session_url(session.id, after=page.last_id, **kept) if page.last_id else "",
        "before_url": session_url(session.id, before=page.first_id, **kept)
        if page.first_id
        else "",
        "start_url": session_url(session.id, **kept),
        "end_url": session_url(session.id, end=1, **kept),
        "filter_url": session_url(session.id),
        "show_before_row": True,
        "show_after_row": True,
        "has_frames": has_frames,
        "can_reveal": can_reveal and masker() is not None,
        **_display_context(),
    }


def _display_context() -> dict[str, Any]:
    return {"slow_ms": settings.SLOW_TOOL_CALL_MS, "known_roles": KNOWN_ROLES}


def _role_choices(current: str | None) -> list[str]:
    roles = list(KNOWN_ROLES)
    if current and current not in roles:
        roles.append(current)
    return roles


def _state_context(session: queries.SessionRow) -> dict[str, Any]:
    rows = []
    for index, row in enumerate(transcript.state_rows(session.id)):
        item: dict[str, Any] = {
            "row": row,
            "dom_id": f"state-{index}",
            "html": None,
            "mark": "",
            "size": row.value.size
            if row.value.truncated
            else len(row.value.text.encode("utf-8", "replace")),
        }
        if isinstance(row.value.text, Undecodable):
            item["mark"] = Undecodable.MARK
        elif row.value.truncated:
            item["mark"] = "truncated"
        else:
            parsed = parse_json_text(row.value.text)
            if parsed is None or not parsed.valid:
                item["mark"] = "not valid JSON"
            else:
                item["html"] = json_html.tree(_masked_value(parsed.value))
        # A key that is not UTF-8 cannot be written into a URL exactly: no link.
        linkable = not isinstance(row.key, Undecodable)
        item["full_url"] = _state_value_url(session.id, row.key) if linkable else ""
        item["raw_url"] = _state_value_url(session.id, row.key, raw=1) if linkable else ""
        rows.append(item)
    return {"state_rows": rows}


def _state_value_url(session_id: str, key: str, **query: Any) -> str:
    # The state_value route holds the key as one path segment; a key that cannot
    # be one (a "/" or a dot-segment) goes in the query of the state subpage.
    if "/" in key or set(key) <= {"."}:
        return session_url(session_id, "state", key=key, **query)
    return session_url(session_id, f"state/{quote(key, safe='')}/value", **query)


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    tab = params.choice(request.GET, "tab", ("transcript", "state"), "transcript")
    if tab == "state":
        return _state_page(request, session_id)
    return _transcript_page(request, session_id)


#: A session whose last activity is this recent is followed live at its end.
LIVE_FOR_MS = 3_600_000
#: How often a live page asks for new messages (htmx's ``every``).
LIVE_POLL = "2s"


def _live_poll(request: HttpRequest, session_id: str) -> HttpResponse | None:
    """A live page's poll (``?live=1&after=<id>``): 204 while nothing is new, the cheap
    answer most polls get; None when there is something to render."""
    if not (request.htmx and request.GET.get("live") == "1"):
        return None
    after = _message_id(request, "after")
    if after is not None and not transcript.has_message_after(session_id, after):
        return HttpResponse(status=204)
    return None


def _live_context(session: queries.SessionRow, context: dict[str, Any]) -> dict[str, Any]:
    """Whether the end of this page follows the session live, and its poll's URL."""
    page = context["page"]
    active = (
        isinstance(session.last_active, int) and clock.now_ms() - session.last_active < LIVE_FOR_MS
    )
    live = active and context["filter"].is_empty() and not page.has_after and page.last_id
    return {
        "live_url": session_url(session.id, after=page.last_id, live=1) if live else "",
        "live_poll": LIVE_POLL,
    }


def _transcript_page(
    request: HttpRequest, session_id: str, *, with_stats: bool = False
) -> HttpResponse:
    if (nothing_new := _live_poll(request, session_id)) is not None:
        return nothing_new
    session = _session(session_id)
    context = _transcript_context(request, session)
    context.update(_live_context(session, context))
    if request.htmx:
        if request.GET.get("live") == "1":
            return render(
                request,
                f"{TEMPLATE}#live",
                {**context, "session": session, "show_before_row": False},
            )
        if "after" in request.GET:
            return render(
                request,
                f"{TEMPLATE}#messages",
                {**context, "session": session, "show_before_row": False},
            )
        if "before" in request.GET:
            return render(
                request,
                f"{TEMPLATE}#messages",
                {**context, "session": session, "show_after_row": False},
            )
        if request.htmx.target == "transcript":
            return render(request, f"{TEMPLATE}#transcript", {**context, "session": session})
    context.update(_header_context(session, context["has_frames"]))
    context.update(labels_context(request, session.id))
    context.update(review_bar_context(request, session.id))
    context["tab"] = "transcript"
    on_page = {row.id for row in context["page"].messages}
    context["outline"] = tool_outline(
        session.id, transcript.tool_outline(session.id), on_page, settings.SLOW_TOOL_CALL_MS
    )
    if with_stats:
        context["stats"] = transcript.session_stats(session.id, slow_ms=settings.SLOW_TOOL_CALL_MS)
    return render(request, TEMPLATE, context)


def _state_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = _session(session_id)
    key = request.GET.get("key")
    if key is not None:
        return _state_value(request, session, key)
    context = _state_context(session)
    if request.htmx and request.htmx.target == "tab-panel":
        return render(request, f"{TEMPLATE}#state", {**context, "session": session})
    context.update(_header_context(session))
    context.update(notes_context(request, session.id))
    context.update(labels_context(request, session.id))
    context.update(review_bar_context(request, session.id))
    context["tab"] = "state"
    return render(request, TEMPLATE, context)


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def state_page(request: HttpRequest, session_id: str) -> HttpResponse:
    return _state_page(request, session_id)


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def stats_page(request: HttpRequest, session_id: str) -> HttpResponse:
    """Statistics: a fragment for the header's lazy load, else the page with them shown."""
    if request.htmx:
        session = _session(session_id)
        return render(
            request,
            f"{TEMPLATE}#stats",
            {
                "session": session,
                "stats": transcript.session_stats(session.id, slow_ms=settings.SLOW_TOOL_CALL_MS),
                **_display_context(),
            },
        )
    return _transcript_page(request, session_id, with_stats=True)


def _value_response(
    request: HttpRequest,
    session: queries.SessionRow,
    *,
    text: str,
    label: str,
    filename: str,
    dom_id: str,
    is_json: bool,
    back_url: str,
) -> HttpResponse:
    if request.GET.get("raw") == "1":
        # Raw means as stored: text that is not UTF-8 leaves as its own bytes; hidden
        # values are masked all the same (revealing is a POST with a reason).
        if (active := masker()) is not None:
            body = active.text(text)
        else:
            body = text.raw if isinstance(text, Undecodable) else text
        response = HttpResponse(body, content_type="text/plain; charset=utf-8")
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response
    context: dict[str, Any] = {
        "session": session,
        "text": text,
        "label": label,
        "dom_id": dom_id,
        "html": None,
        "mark": "",
        "size": len(text.encode("utf-8", "replace")),
        "raw_url": f"{request.path}?{_with_raw(request)}",
        "back_url": back_url,
        "is_json": is_json,
    }
    # Highlighting multiplies a value's size several times over; past a few
    # megabytes the plain escaped text is what a browser can still show.
    if isinstance(text, Undecodable):
        context["mark"] = Undecodable.MARK
    elif is_json and len(text) <= HIGHLIGHT_MAX_CHARS:
        parsed = parse_json_text(text)
        if parsed is None or not parsed.valid:
            context["mark"] = "not valid JSON"
        elif isinstance(parsed.value, dict | list):
            context["html"] = json_html.highlight(_masked_value(parsed.value))
    template = f"{VALUE_TEMPLATE}#value" if request.htmx else VALUE_TEMPLATE
    return render(request, template, context)


def _masked_value(value: Any) -> Any:
    """A parsed JSON value as a page shows it: its hidden values masked."""
    active = masker()
    return value if active is None else active.value(value, html=True)


def _with_raw(request: HttpRequest) -> str:
    query = request.GET.copy()
    query["raw"] = "1"
    return query.urlencode()


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def message_value(
    request: HttpRequest, session_id: str, message_id: str, field: str
) -> HttpResponse:
    """One message column in full (the page only had its head)."""
    session = _session(session_id)
    number = int(message_id)
    if not -MAX_SQLITE_INT - 1 <= number <= MAX_SQLITE_INT:  # 19 digits can still overflow
        raise Http404(f"This session has no message {message_id}.")
    try:
        text = transcript.message_value(session.id, number, field)
    except transcript.UnknownMessage as exc:
        raise Http404(str(exc)) from None
    if text is None:
        raise Http404(f"Message {message_id} has no {field}.")
    extension = "txt" if field == "content" else "json"
    return _value_response(
        request,
        session,
        text=text,
        label=f"message {message_id} · {field}",
        filename=f"message-{message_id}-{field}.{extension}",
        dom_id=f"value-{message_id}-{field}",
        is_json=field != "content",
        back_url=session_url(session.id, at=int(message_id)) + f"#message-{message_id}",
    )


def _state_value(request: HttpRequest, session: queries.SessionRow, key: str) -> HttpResponse:
    try:
        row = transcript.state_value(session.id, key)
    except transcript.UnknownMessage as exc:
        raise Http404(str(exc)) from None
    safe_key = "".join(c if c.isalnum() or c in "-_." else "_" for c in key)[:60] or "state"
    return _value_response(
        request,
        session,
        text=row.value.text,
        label=f"state · {key}",
        filename=f"state-{safe_key}.json",
        dom_id="",
        is_json=True,
        back_url=session_url(session.id, "state"),
    )


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def state_value(request: HttpRequest, session_id: str, key: str) -> HttpResponse:
    return _state_value(request, _session(session_id), key)
