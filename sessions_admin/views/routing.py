"""``/sessions/<id>/…``: find which session (and which subpage) a path means.

The path arrives percent-decoded, so an id holding ``/`` cannot be told from
a subpage by shape alone; :func:`sessions_admin.ids.split_session_path` lists
the readings and the first whose session exists wins (the whole path as an id
first). Each subpage view takes ``(request, session_id, **kwargs)``.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import Http404, HttpRequest, HttpResponse

from sessions_admin.access import staff_view
from sessions_admin.ids import split_session_path
from sessions_admin.store.queries import existing_session_ids

SessionPageView = Callable[..., HttpResponse]
_PAGES: dict[str, SessionPageView] = {}


def register(page: str) -> Callable[[SessionPageView], SessionPageView]:
    """Register a view for a subpage name from ``sessions_admin.ids.SUBPAGES``."""

    def decorator(view: SessionPageView) -> SessionPageView:
        _PAGES[page] = view
        return view

    return decorator


@staff_view()
def session_dispatch(request: HttpRequest, rest: str) -> HttpResponse:
    readings = [
        reading
        for reading in split_session_path(rest, request.GET.get("id"))
        if reading.page in _PAGES
    ]
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
