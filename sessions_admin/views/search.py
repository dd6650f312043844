"""Search every transcript: ``/search/?q=…`` (the header's box submits here)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.safestring import SafeString
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin.access import staff_view
from sessions_admin.ids import looks_like_session_id, session_url
from sessions_admin.markup import esc, safe_html
from sessions_admin.masking import Masker, mark_html, masker
from sessions_admin.ourdata.index import search as index_search
from sessions_admin.ourdata.index.search import SearchPage, SearchQuery
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.params import BadParameter
from sessions_admin.store import queries
from sessions_admin.store.feed import FeedMessage
from sessions_admin.store.spec import KNOWN_ROLES, PROFILES
from sessions_admin.store.values import Undecodable
from sessions_admin.views import listparams, review_labels
from sessions_admin.views.progress import build_sentence

#: Query parameters that make up a shareable search (the cursor excluded).
SEARCH_PARAMS = (
    "q",
    "target",
    "profile",
    "principal",
    "role",
    "tool",
    "within",
    "since",
    "until",
    "label",
    "failed",
)
MAX_QUERY_CHARS = 1000


def _text(params: Any, name: str) -> str | None:
    value = params.get(name, "")
    if not isinstance(value, str):
        return None
    if "\x00" in value:
        raise BadParameter(f"{name} cannot contain a NUL character.", name=name)
    if len(value) > MAX_QUERY_CHARS:
        raise BadParameter(f"{name} is too long (over {MAX_QUERY_CHARS:,} characters).", name=name)
    return value


def parse_query(params: Any) -> SearchQuery:
    """The search from query parameters (the query itself kept exactly, spaces included)."""
    q = _text(params, "q") or ""
    filters = {name: (_text(params, name) or "").strip() or None for name in SEARCH_PARAMS[1:6]}
    for name in ("since", "until"):
        _text(params, name)  # bounded like every other parameter
    since_ms, until_ms = listparams.time_range(params, start="since", end="until", preset="within")
    before = (_text(params, "before") or "").strip()
    if before and not (before.isascii() and before.isdigit() and len(before) < 19):
        raise BadParameter("before: the page position must be a message id.", name="before")
    return SearchQuery(
        q=q,
        since_ms=since_ms,
        until_ms=until_ms,
        before_id=int(before) if before else None,
        **filters,
    )


def with_label(query: SearchQuery, label: Label | None) -> SearchQuery:
    """The search kept to ``label``'s sessions: the search reads on past other sessions'
    hits until its page is full, as without a label."""
    if label is None:
        return query
    return replace(query, sessions=frozenset(labels.session_ids_with(label)))


def narrowed(
    query: SearchQuery, label: Label | None, failed: listparams.FailedFilter | None
) -> SearchQuery:
    """The search kept to the label's sessions, and to those with failed calls when
    ``failed`` is on (tested in the side index, as it walks)."""
    query = with_label(query, label)
    return query if failed is None else replace(query, failed=True)


def search_query(params: Any) -> SearchQuery:
    """The whole search a URL's parameters ask for, its label and ``failed`` included."""
    query = parse_query(params)
    label = review_labels.label_param(params)
    failed = listparams.failed_filter(params, label) if query.q else None
    return narrowed(query, label, failed)


@dataclass
class ResultRow:
    """One snippet as the template shows it."""

    message_id: int
    role: str
    tool: str | None
    url: str
    snippet: index_search.Snippet | None
    #: Searched fields whose stored text is not valid UTF-8 (shown with U+FFFD).
    undecodable: list[str]
    #: The snippet masked whole, when it holds a hidden value (None: shown as found).
    masked: SafeString | None = None


def _masked_snippet(snippet: index_search.Snippet | None, active: Masker | None):
    """The snippet masked as a whole when anything in it is hidden, the hit included
    (staff find a customer by their address, and never read it here); else None."""
    if snippet is None or active is None:
        return None
    text = str.__str__(snippet.text)  # undecodable text is masked as it reads
    shown = active.window(text, snippet.left, snippet.right, html=True)
    if shown is None:
        return None
    masked, left, right = shown
    return safe_html(
        ("…" if left > 0 else "") + mark_html(esc(masked)) + ("…" if right < len(text) else "")
    )


def _undecodable(message: FeedMessage) -> list[str]:
    fields = (
        ("role", message.role),
        ("content", message.content),
        ("tool", message.tool_name),
        ("args", message.tool_args),
        ("result", message.tool_result),
    )
    return [name for name, value in fields if type(value) is Undecodable]


def _url(session_id: str, fragment: str = "", **query: Any) -> str:
    """The session's page, or "" for an id a URL cannot name exactly (not UTF-8)."""
    if isinstance(session_id, Undecodable):
        return ""
    return session_url(session_id, **query) + (f"#{fragment}" if fragment else "")


def _groups(page: SearchPage) -> list[dict[str, Any]]:
    active = masker()
    return [
        {
            "session_id": group.session_id,
            "session": group.session,
            "url": _url(group.session_id),
            "rows": [
                ResultRow(
                    hit.message.id,
                    hit.message.role,
                    hit.message.tool_name,
                    _url(group.session_id, at=hit.message.id, fragment=f"message-{hit.message.id}"),
                    hit.snippet,
                    _undecodable(hit.message),
                    _masked_snippet(hit.snippet, active),
                )
                for hit in group.hits
            ],
            "more": group.more,
            "unchecked": group.unchecked,
            "search_url": _url(group.session_id, q=page.query.q),
        }
        for group in page.groups
    ]


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def search(request: HttpRequest) -> HttpResponse:
    query = parse_query(request.GET)
    stripped = query.q.strip()
    if stripped and query.before_id is None and queries.get_session(stripped):
        # The header's box also takes a session id: an exact one opens it.
        return HttpResponseRedirect(session_url(stripped))
    kept = {name: request.GET[name] for name in SEARCH_PARAMS if request.GET.get(name)}
    label = review_labels.label_param(request.GET)
    failed = listparams.failed_filter(request.GET, label) if query.q else None
    query = narrowed(query, label, failed)
    page = index_search.search(query) if query.q else None
    groups = _groups(page) if page else []
    marks = review_labels.marks_of([group["session_id"] for group in groups])
    for group in groups:
        group["marks"] = marks.get(group["session_id"])
    next_url = None
    if page is not None and page.next_before_id is not None:
        next_url = "?" + urlencode({**kept, "before": page.next_before_id})
    context = {
        "query": query,
        "params": kept,
        "page": page,
        "groups": groups,
        "labels": review_labels.label_choices(),
        "label": label,
        "failed": failed,
        "next_url": next_url,
        "roles": KNOWN_ROLES,
        "profiles": PROFILES,
        "targets": listparams.menu_targets(queries.distinct_targets()),
        "when": listparams.time_control(
            request.GET, "Message time", start="since", end="until", preset="within"
        ),
        "first_page": query.before_id is None,
        # Until the index has every message: how far a running build is.
        "build": build_sentence() if page is not None and not page.freshness.fresh else None,
        # Reached only when no session has this id (an exact one was opened above).
        "missing_id": stripped if looks_like_session_id(stripped) else "",
    }
    template = "sessions_admin/search.html"
    if request.htmx and query.before_id is not None:
        template += "#groups"
    elif request.htmx and request.htmx.target == "results":
        template += "#results"
    return render(request, template, context)
