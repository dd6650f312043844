"""The sessions a dashboard URL lists, in its order, every page of it: what a review
queue is made of.

A source is a path of this dashboard with its query: ``/sessions/?…`` (every
list filter, ``label`` and ``sort`` included), ``/search/?…``, ``/tools/<name>/?…``
(the sessions of those calls, first call first seen), ``/failures/?…`` (the
sessions of every tool's failed calls in its window, newest first), or ``/principals/<id>/``
(the sessions naming exactly that principal, newest first). A queue holds what a
text id names and the store holds: an odd id the list shows by its description
is counted as skipped, never stored as that description. Pages are read with the screens' own
readers until :data:`QUEUE_MAX_ITEMS` + 1 sessions are found, so the caller can
say the source held more.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from urllib.parse import unquote, urlsplit

from django.http import QueryDict

from sessions_admin import clock
from sessions_admin.ids import PRINCIPALS_PREFIX, QUERY_FORM_MARKER
from sessions_admin.lists.labelled import labelled_page
from sessions_admin.lists.sessions import page_among
from sessions_admin.ourdata.index import search as index_search
from sessions_admin.ourdata.review.models import QUEUE_MAX_ITEMS
from sessions_admin.ourdata.rollups import calls, failures, figures
from sessions_admin.ourdata.rollups.figures import parse_window
from sessions_admin.params import BadParameter, quoted
from sessions_admin.store import queries
from sessions_admin.views import listparams
from sessions_admin.views.review_labels import label_param
from sessions_admin.views.search import search_query
from sessions_admin.views.tools import call_filter_from, scope_from

#: Rows read a page while walking a source (the screens show 50).
WALK_PAGE = 1000
SOURCES = "/sessions/?…, /search/?…, /failures/?…, /tools/<name>/?… or /principals/<id>/"


@dataclass
class SourceSessions:
    ids: list[str]
    #: The source listed more than QUEUE_MAX_ITEMS sessions (``ids`` holds the first ones).
    capped: bool
    #: Sessions listed that no text id names (NULL, a BLOB, TEXT that is not UTF-8: the
    #: list shows their descriptions), or that the store no longer holds.
    skipped: int = 0


def _bad(raw: str, why: str) -> BadParameter:
    return BadParameter(f"source {why}; got {quoted(raw)}. It takes {SOURCES}.", name="source")


def sessions_of_source(raw: str, host: str) -> SourceSessions:
    """Every session ``raw`` lists (a 400 naming ``source`` when it names no list)."""
    parts = urlsplit(raw.strip())
    if parts.scheme not in ("", "http", "https") or (parts.netloc and parts.netloc != host):
        raise _bad(raw, "must be a page of this dashboard")
    query = QueryDict(parts.query)
    path = parts.path
    if path == "/sessions/":
        walk = _list_sessions(query)
    elif path == "/search/":
        walk = _search_sessions(query)
    elif path == "/failures/":
        walk = _failure_sessions(query)
    elif path.startswith("/tools/") and len(path) > len("/tools/") and path.endswith("/"):
        walk = _tool_sessions(unquote(path[len("/tools/") : -1]), query)
    elif path.startswith(PRINCIPALS_PREFIX) and len(path) > len(PRINCIPALS_PREFIX):
        segment = path[len(PRINCIPALS_PREFIX) :].removesuffix("/")
        # The principal page's own forms: the id percent-encoded, or ~/?id= for odd ones.
        principal = query.get("id", "") if segment == QUERY_FORM_MARKER else unquote(segment)
        # Exactly the sessions the principal's page counts ("" too, unlike ?principal=).
        walk = (row.id for row in queries.walk_principal_sessions(principal))
    else:
        raise _bad(raw, "is not a list of sessions")
    return _taken(walk)


def _taken(walk: Iterator[object]) -> SourceSessions:
    """The first QUEUE_MAX_ITEMS sessions of ``walk`` that a text id names and the store
    holds; an odd id (an ``OddValue``: its description, not an id) is counted, never kept."""
    found: dict[str, None] = {}
    odd = 0
    for session_id in walk:
        if type(session_id) is str:
            found.setdefault(session_id)
        else:
            odd += 1
        if len(found) > QUEUE_MAX_ITEMS:
            break
    listed = list(found)
    capped = len(listed) > QUEUE_MAX_ITEMS
    listed = listed[:QUEUE_MAX_ITEMS]
    # The search and tool sources read our side index, which may lag the store or
    # hold a replaced text: keep what the store holds under exactly that text.
    present = {sid for sid in queries.existing_session_ids(listed) if type(sid) is str}
    ids = [sid for sid in listed if sid in present]
    return SourceSessions(ids=ids, capped=capped, skipped=odd + len(listed) - len(ids))


def _list_sessions(query: QueryDict) -> Iterator[str]:
    session_filter = listparams.parse_filter(query)
    sort = listparams.parse_sort(query.get("sort"))
    label = label_param(query)
    failed = listparams.failed_filter(query, label)
    if label is None and failed is None:
        yield from (row.id for row in queries.walk_sessions(session_filter, sort))
        return
    cursor = None
    while True:
        if failed is not None:
            page = page_among(
                failed.ids(), session_filter, sort, cursor, strategy="failed", limit=WALK_PAGE
            )
        else:
            page = labelled_page(label, session_filter, sort, cursor, limit=WALK_PAGE)
        yield from (row.id for row in page.rows)
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def _search_sessions(query: QueryDict) -> Iterator[str]:
    search = search_query(query)
    if not search.q:
        raise BadParameter("source: a /search/ source needs its q.", name="source")
    while True:
        page = index_search.search(search)
        for group in page.groups:
            yield group.session_id
        if page.next_before_id is None:
            return
        search = replace(search, before_id=page.next_before_id)


def _tool_sessions(name: str, query: QueryDict) -> Iterator[str]:
    call_filter = call_filter_from(name, query)
    try:
        with figures.reading() as side:
            cursor = None
            while True:
                page = calls.tool_calls(side, call_filter, cursor, limit=WALK_PAGE)
                yield from (row.session_id for row in page.rows)
                if page.next_cursor is None:
                    return
                cursor = calls.parse_cursor(page.next_cursor)
    except figures.NotComputed:
        raise BadParameter(
            "source: the tool figures are not computed yet (run sync_index).", name="source"
        ) from None


def _failure_sessions(query: QueryDict) -> Iterator[str]:
    window = parse_window(query.get("window"), clock.now_ms())
    try:
        with figures.reading() as side:
            yield from failures.failed_call_sessions(side, window, scope_from(query))
    except figures.NotComputed:
        raise BadParameter(
            "source: the tool figures are not computed yet (run sync_index).", name="source"
        ) from None
