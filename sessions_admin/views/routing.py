"""``/sessions/<id>/…``: find which session (and which subpage) a path means.

The path arrives percent-decoded, so an id holding ``/`` cannot be told from
a subpage by shape alone; :func:`sessions_admin.ids.split_session_path` lists
the readings and the first whose session exists wins (the whole path as an id
first). Each subpage view takes ``(request, session_id, **kwargs)``.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote, urlsplit

from django.http import Http404, HttpRequest, HttpResponse

from sessions_admin.access import staff_view
from sessions_admin.ids import QUERY_FORM_MARKER, SESSIONS_PREFIX, split_session_path
from sessions_admin.store.queries import existing_session_ids

SessionPageView = Callable[..., HttpResponse]
_PAGES: dict[str, SessionPageView] = {}


def register(page: str) -> Callable[[SessionPageView], SessionPageView]:
    """Register a view for a subpage name from ``sessions_admin.ids.SUBPAGES``."""

    def decorator(view: SessionPageView) -> SessionPageView:
        _PAGES[page] = view
        return view

    return decorator


def _raw_session_segment(request: HttpRequest) -> str | None:
    """The id as sent, from the undecoded path when the server passes it on.

    gunicorn (``RAW_URI``) and most front servers (``REQUEST_URI``) keep the
    path as the browser sent it, where ``%2F`` inside the id is still encoded:
    that settles which reading is meant. Django's development server and test
    client don't, and the store-backed guess below applies.
    """
    raw = request.META.get("RAW_URI") or request.META.get("REQUEST_URI")
    if not raw:
        return None
    path = urlsplit(raw).path
    if not path.startswith(SESSIONS_PREFIX):
        return None
    segment = path[len(SESSIONS_PREFIX) :].split("/", 1)[0]
    if segment == QUERY_FORM_MARKER:
        return None
    return unquote(segment)


@staff_view()
def session_dispatch(request: HttpRequest, rest: str) -> HttpResponse:
    readings = [
        reading
        for reading in split_session_path(rest, request.GET.get("id"))
        if reading.page in _PAGES
    ]
    raw_id = _raw_session_segment(request)
    if raw_id is not None and any(reading.session_id == raw_id for reading in readings):
        # The server kept the undecoded path: its first segment is the id, exactly.
        readings = [reading for reading in readings if reading.session_id == raw_id]
    existing = existing_session_ids(sorted({reading.session_id for reading in readings}))
    for reading in readings:
        if reading.session_id in existing:
            return _PAGES[reading.page](request, reading.session_id, **reading.kwargs)
    # Frame pages can outlive their session row (the runtime's own deletes
    # leave them); their views accept a missing session.
    for reading in readings:
        view = _PAGES[reading.page]
        if getattr(view, "allows_missing_session", False):
            return view(request, reading.session_id, **reading.kwargs)
    shown = readings[0].session_id if readings else rest
    raise Http404(f"No session with id {shown!r} in the store.")
