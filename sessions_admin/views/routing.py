"""``/sessions/<id>/…``: find which session (and which subpage) a path means.

The pages themselves are listed in :data:`sessions_admin.urls.SESSION_PAGES`;
this module only reads a path against that table. The path arrives
percent-decoded, so an id holding ``/`` cannot be told from a subpage by
shape alone; :func:`sessions_admin.ids.split_session_path` lists the readings
and the first whose session exists wins (the whole path as an id first).
Each subpage view takes ``(request, session_id, **kwargs)`` and carries its
own guard: the dispatcher checks staff too (it asks the store which ids
exist), but it is never the only check.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

from django.http import Http404, HttpRequest, HttpResponse

from sessions_admin.access import staff_view
from sessions_admin.ids import (
    QUERY_FORM_MARKER,
    SESSIONS_PREFIX,
    PathReading,
    compile_subpages,
    split_session_path,
)
from sessions_admin.store.queries import existing_session_ids

SessionPageView = Callable[..., HttpResponse]


@dataclass(frozen=True)
class SessionPage:
    """One page under ``/sessions/<id>/``.

    ``pattern`` matches what follows ``<id>/`` (no trailing slash; ``""`` is
    the session page itself); named groups become the view's keyword
    arguments. ``allows_missing_session`` lets the view answer for an id with
    no session row (frame files outlive their session).
    """

    name: str
    pattern: str
    view: SessionPageView
    allows_missing_session: bool = False


class SessionPages:
    """The table of session pages, compiled once for :func:`session_dispatch`."""

    def __init__(self, *pages: SessionPage) -> None:
        self.pages = {page.name: page for page in pages}
        self.subpages = compile_subpages(
            {page.name: page.pattern for page in pages if page.pattern}
        )

    def __iter__(self):
        return iter(self.pages.values())

    def serve(self, request: HttpRequest, reading: PathReading) -> HttpResponse:
        return self.pages[reading.page].view(request, reading.session_id, **reading.kwargs)

    def allows_missing(self, reading: PathReading) -> bool:
        return self.pages[reading.page].allows_missing_session


def raw_session_segment(request: HttpRequest) -> str | None:
    """The id as sent, from the undecoded path when the server passes it on.

    gunicorn (``RAW_URI``) and most front servers (``REQUEST_URI``) keep the
    path as the browser sent it, where ``%2F`` inside the id is still encoded:
    that settles which reading is meant. Django's development server and test
    client don't, and the store-backed guess below applies.
    """
    found = raw_path_after(request, SESSIONS_PREFIX)
    return None if found is None else found[0]


def raw_path_after(request: HttpRequest, prefix: str) -> tuple[str, str] | None:
    """The first segment after ``prefix`` in the undecoded path (decoded now, exactly),
    and the rest of that path; None when the server does not pass the raw path on, or
    the segment is the query form's marker (the id is then in ``?id=``)."""
    raw = request.META.get("RAW_URI") or request.META.get("REQUEST_URI")
    if not raw:
        return None
    path = urlsplit(raw).path
    if not path.startswith(prefix):
        return None
    segment, _, rest = path[len(prefix) :].partition("/")
    if segment == QUERY_FORM_MARKER:
        return None
    return unquote(segment), rest


@staff_view()
def session_dispatch(request: HttpRequest, rest: str, pages: SessionPages) -> HttpResponse:
    readings = [
        reading
        for reading in split_session_path(rest, request.GET.get("id"), pages.subpages)
        if reading.page in pages.pages
    ]
    raw_id = raw_session_segment(request)
    if raw_id is not None and any(reading.session_id == raw_id for reading in readings):
        # The server kept the undecoded path: its first segment is the id, exactly.
        readings = [reading for reading in readings if reading.session_id == raw_id]
    existing = existing_session_ids(sorted({reading.session_id for reading in readings}))
    for reading in readings:
        if reading.session_id in existing:
            return pages.serve(request, reading)
    # Frame pages can outlive their session row (the runtime's own deletes
    # leave them); their table entries say so.
    for reading in readings:
        if pages.allows_missing(reading):
            return pages.serve(request, reading)
    shown = readings[0].session_id if readings else rest
    raise Http404(f"No session with id {shown!r} in the store.")
