"""``/tools/`` (every tool's calls, errors and durations) and ``/tools/<name>/`` (its calls).

Both read the rollups only. Filters live in the URL (``window``, ``target``,
``profile``; on a tool's page ``errors=1``, ``slow=1``, ``since``, ``until``),
so every view is a link staff can share.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import clock, params, sqlhelpers
from sessions_admin.access import staff_view
from sessions_admin.ourdata.rollups import calls, figures
from sessions_admin.ourdata.rollups.figures import Scope, parse_window
from sessions_admin.store.queries import parse_datetime_param
from sessions_admin.views.figures import (
    link_tools,
    permalink,
    sync_context,
    tool_sparkline,
    window_links,
)

#: Shorter than ``params.MAX_TEXT_CHARS``: a target, a profile or a date is never this long.
MAX_PARAM = 500


def _text(query: Any, name: str) -> str | None:
    return params.text(query, name, max_chars=MAX_PARAM)


def _scope(query: Any) -> Scope:
    return Scope(target=_text(query, "target"), profile=_text(query, "profile"))


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def tool_list(request: HttpRequest) -> HttpResponse:
    window = parse_window(request.GET.get("window"), clock.now_ms())
    scope = _scope(request.GET)
    kept = {k: v for k, v in (("target", scope.target), ("profile", scope.profile)) if v}
    context: dict[str, Any] = {
        "window": window,
        "scope": scope,
        "windows": window_links(window, kept),
    }
    try:
        with figures.reading() as side:
            context.update(sync_context(side))
            if not context["not_computed"]:
                context.update(_tool_rows(side, window, scope, kept))
    except figures.NotComputed:
        context["not_computed"] = True
    template = "sessions_admin/tools.html"
    if request.htmx and request.htmx.target == "tool-table":
        template += "#table"
    return render(request, template, context)


def _tool_rows(side, window, scope: Scope, kept: dict[str, str]) -> dict[str, Any]:
    rows = figures.tool_rows(side, window, scope)
    # A tool's link keeps the window (as its start, since=) and the target and profile.
    link_tools(rows, window, **kept)
    for row in rows:
        row.spark = tool_sparkline(row.series, window.grain)
    return {"rows": rows, "computed_at": figures.computed_at(side), **figures.scope_choices(side)}


def call_filter_from(tool: str, query: Any) -> calls.CallFilter:
    """The tool page's filter from its query parameters (review queues read it too)."""
    since = _text(query, "since")
    until = _text(query, "until")
    return calls.CallFilter(
        tool=tool,
        scope=_scope(query),
        errors=query.get("errors") == "1",
        slow_ms=settings.SLOW_TOOL_CALL_MS if query.get("slow") == "1" else None,
        since_ms=parse_datetime_param("since", since) if since else None,
        until_ms=parse_datetime_param("until", until) if until else None,
    )


def _tool_by_key(side, key: str) -> str:
    tool = calls.tool_by_key(side, key)
    if tool is None:
        raise Http404("No tool in the figures has this key: open it again from /tools/.")
    return tool


def _toggled(kept: dict[str, str], flag: str) -> str:
    """The same view with ``flag=1`` switched on or off."""
    query = {k: v for k, v in kept.items() if k != flag}
    if not kept.get(flag):
        query[flag] = "1"
    return "?" + urlencode(query)


#: The query parameters that make up a shareable view of a tool's calls.
CALL_PARAMS = ("errors", "slow", "target", "profile", "since", "until")


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def tool_detail(request: HttpRequest, name: str) -> HttpResponse:
    call_filter = call_filter_from(name, request.GET)
    cursor = calls.parse_cursor(request.GET.get("cursor"))
    kept = {k: request.GET[k] for k in CALL_PARAMS if request.GET.get(k)}
    context: dict[str, Any] = {
        "tool": name,
        "filter": call_filter,
        "params": kept,
        "slow_ms": settings.SLOW_TOOL_CALL_MS,
        "toggle": {flag: _toggled(kept, flag) for flag in ("errors", "slow")},
    }
    try:
        with figures.reading() as side:
            context.update(sync_context(side))
            if context["not_computed"]:
                raise figures.NotComputed()
            if name.startswith(calls.KEYED_PREFIX):  # a name too long for a URL
                name = _tool_by_key(side, name.removeprefix(calls.KEYED_PREFIX))
                call_filter = replace(call_filter, tool=name)
                context.update(tool=name, filter=call_filter)
            page = calls.tool_calls(side, call_filter, cursor)
            context.update(
                rows=[(row, permalink(row.session_id, row.link_id)) for row in page.rows],
                next_url=(
                    "?" + urlencode({**kept, "cursor": page.next_cursor})
                    if page.next_cursor
                    else None
                ),
                known=bool(page.rows) or calls.known_tool(side, name),
                # Counted on the first page only: "More" pages are fragments without the total.
                matched=calls.count_calls(side, call_filter) if cursor is None else None,
                count_cap=sqlhelpers.COUNT_CAP,
                computed_at=figures.computed_at(side),
                **figures.scope_choices(side),
            )
    except figures.NotComputed:
        context["not_computed"] = True
    template = "sessions_admin/tool_calls.html"
    if request.htmx and cursor is not None:
        template += "#rows"
    return render(request, template, context)
