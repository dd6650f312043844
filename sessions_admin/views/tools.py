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
from sessions_admin.charts import Point, bar_chart
from sessions_admin.ourdata.rollups import calls, errors, failures, figures
from sessions_admin.ourdata.rollups.figures import Scope, parse_window
from sessions_admin.views.figures import (
    bucket_label,
    link_tools,
    permalink,
    sync_context,
    tool_sparkline,
    window_links,
)
from sessions_admin.views.listparams import time_control, time_range
from sessions_admin.views.toolcalls_html import render_call_rows

#: Shorter than ``params.MAX_TEXT_CHARS``: a target, a profile or a date is never this long.
MAX_PARAM = 500


def _text(query: Any, name: str) -> str | None:
    return params.text(query, name, max_chars=MAX_PARAM)


def scope_from(query: Any) -> Scope:
    return Scope(target=_text(query, "target"), profile=_text(query, "profile"))


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def tool_list(request: HttpRequest) -> HttpResponse:
    window = parse_window(request.GET.get("window"), clock.now_ms())
    scope = scope_from(request.GET)
    sort = _sort_key(request.GET.get("sort"))
    kept = {k: v for k, v in (("target", scope.target), ("profile", scope.profile)) if v}
    context: dict[str, Any] = {
        "window": window,
        "scope": scope,
        # The window links keep the sort; the sort links keep the window.
        "windows": window_links(
            window, {**kept, **({"sort": sort} if sort != DEFAULT_SORT else {})}
        ),
        "sort": sort,
        "sort_links": sort_links(sort, {**kept, "window": window.key}),
    }
    try:
        with figures.reading() as side:
            context.update(sync_context(side))
            if not context["not_computed"]:
                context.update(_tool_rows(side, window, scope, kept, sort))
    except figures.NotComputed:
        context["not_computed"] = True
    template = "sessions_admin/tools.html"
    if request.htmx and request.htmx.target == "tool-table":
        template += "#table"
    return render(request, template, context)


#: The tools table's columns by ``?sort=`` key: (heading, the row's value, numbers first high).
SORT_COLUMNS: dict[str, tuple[str, str, bool]] = {
    "tool": ("tool", "tool", False),
    "calls": ("calls", "calls", True),
    "errors": ("errors", "errors", True),
    "share": ("error share", "error_share", True),
    "p50": ("p50", "p50_ms", True),
    "p95": ("p95", "p95_ms", True),
    "max": ("max", "max_ms", True),
}
DEFAULT_SORT = "-calls"

#: Error shares shaded by size: (upper bound, CSS class), the last band open-ended.
SHARE_BANDS = (
    (0.0, "share-0"),
    (0.01, "share-1"),
    (0.05, "share-5"),
    (0.10, "share-10"),
    (0.15, "share-15"),
)


def share_class(share: float) -> str:
    """The shade of an error share: none, under 1 %, 5 %, 10 %, 15 %, or 15 % or more."""
    if share <= 0:
        return "share-0"
    for bound, css in SHARE_BANDS[1:]:
        if share < bound:
            return css
    return "share-high"


def _sort_key(raw: str | None) -> str:
    choices = [prefix + key for key in SORT_COLUMNS for prefix in ("", "-")]
    return params.choice({"sort": raw or ""}, "sort", choices, DEFAULT_SORT) or DEFAULT_SORT


def sort_rows(rows: list, sort: str) -> list:
    """Rows ordered by one column, ties by tool name; an empty figure (no timed call) last."""
    key = sort.removeprefix("-")
    attribute = SORT_COLUMNS[key][1]
    present = [r for r in rows if getattr(r, attribute) is not None]
    missing = [r for r in rows if getattr(r, attribute) is None]
    present.sort(key=lambda r: r.tool)
    present.sort(key=lambda r: getattr(r, attribute), reverse=sort.startswith("-"))
    return present + sorted(missing, key=lambda r: r.tool)


def sort_links(sort: str, kept: dict[str, str]) -> list[dict[str, str]]:
    """The table's headings, each a link to the table sorted by it (again: the other way)."""
    links = []
    for key, (label, _, high_first) in SORT_COLUMNS.items():
        natural = f"-{key}" if high_first else key
        current = sort.removeprefix("-") == key
        if current:
            target = key if sort.startswith("-") else f"-{key}"
            state = "descending" if sort.startswith("-") else "ascending"
        else:
            target, state = natural, ""
        links.append(
            {
                "key": key,
                "label": label,
                "url": "?" + urlencode({**kept, "sort": target}),
                "aria_sort": state,
            }
        )
    return links


def _tool_rows(
    side, window, scope: Scope, kept: dict[str, str], sort: str = DEFAULT_SORT
) -> dict[str, Any]:
    rows = sort_rows(figures.tool_rows(side, window, scope), sort)
    # A tool's link keeps the window (as its start, since=) and the target and profile.
    link_tools(rows, window, **kept)
    for row in rows:
        row.spark = tool_sparkline(row.series, window.grain)
        row.share_class = share_class(row.error_share)
    return {"rows": rows, "computed_at": figures.computed_at(side), **figures.scope_choices(side)}


def call_filter_from(tool: str, query: Any) -> calls.CallFilter:
    """The tool page's filter from its query parameters (review queues read it too)."""
    for name in ("since", "until"):
        _text(query, name)  # bounded like the other parameters
    since_ms, until_ms = time_range(query, start="since", end="until", preset="within")
    return calls.CallFilter(
        tool=tool,
        scope=scope_from(query),
        errors=query.get("errors") == "1",
        slow_ms=settings.SLOW_TOOL_CALL_MS if query.get("slow") == "1" else None,
        since_ms=since_ms,
        until_ms=until_ms,
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


def _calls_page(
    side, call_filter: calls.CallFilter, cursor: tuple[int, int] | None, kept: dict[str, str]
) -> dict[str, Any]:
    page = calls.with_heads(calls.tool_calls(side, call_filter, cursor))
    return {
        "rows": [(row, permalink(row.session_id, row.link_id)) for row in page.rows],
        "next_url": (
            "?" + urlencode({**kept, "cursor": page.next_cursor}) if page.next_cursor else None
        ),
        # Counted on the first page only: "More" pages are fragments without the total.
        "matched": calls.count_calls(side, call_filter) if cursor is None else None,
    }


def _group_calls(side, call_filter: calls.CallFilter, what: str) -> dict[str, Any]:
    """The latest failed calls of one group (``?what=``): one page, no "More"."""
    rows = calls.with_heads(
        calls.CallPage(calls.calls_in_group(side, call_filter, what), None)
    ).rows
    return {
        "rows": [(row, permalink(row.session_id, row.link_id)) for row in rows],
        "next_url": None,
        "matched": None,
        "group_limit": calls.PAGE_SIZE,
        "group_scan": calls.ERROR_SCAN,
    }


#: Error groups a tool's page lists; the smaller ones are counted below the table.
SHOWN_GROUPS = 25


def _error_groups(side, call_filter: calls.CallFilter, kept: dict[str, str]) -> dict[str, Any]:
    found = calls.error_groups(side, call_filter)
    base = {k: v for k, v in kept.items() if k not in ("errors", "what")}
    hidden = found.groups[SHOWN_GROUPS:]
    return {
        "groups": [
            (group, "?" + urlencode({**base, "errors": "1", "what": group.what}))
            for group in found.groups[:SHOWN_GROUPS]
        ],
        "hidden_groups": len(hidden),
        "hidden_calls": sum(g.count for g in hidden),
        "scanned": found.scanned,
        "cut": found.cut,
    }


#: The window of a tool page's failures chart.
CHART_WINDOW = "30d"


def _failure_chart(side, tool: str, scope: Scope):
    """Failed calls per day over the last 30 days, from the tool cells (every call)."""
    window = parse_window(CHART_WINDOW, clock.now_ms())
    series = failures.failures_per_bucket(side, tool, window, scope)
    points = [Point(bucket_label(bucket, window.grain), errors) for bucket, _, errors in series]
    return bar_chart(f"Failed calls per day, {window.label} (UTC)", "failed calls", points)


#: The query parameters that make up a shareable view of a tool's calls.
CALL_PARAMS = ("errors", "slow", "target", "profile", "within", "since", "until")


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def tool_detail(request: HttpRequest, name: str) -> HttpResponse:
    call_filter = call_filter_from(name, request.GET)
    cursor = calls.parse_cursor(request.GET.get("cursor"))
    what = params.text(request.GET, "what", max_chars=errors.WHAT_CHARS * 2)
    kept = {k: request.GET[k] for k in CALL_PARAMS if request.GET.get(k)}
    context: dict[str, Any] = {
        "tool": name,
        "filter": call_filter,
        "params": kept,
        "slow_ms": settings.SLOW_TOOL_CALL_MS,
        "toggle": {flag: _toggled(kept, flag) for flag in ("errors", "slow")},
        "when": time_control(request.GET, "Call time", start="since", end="until", preset="within"),
        "what": what,
        "rows": [],
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
            if what is not None:
                context.update(_group_calls(side, call_filter, what))
            else:
                context.update(_calls_page(side, call_filter, cursor, kept))
            # The whole page, not a page of rows (the form's htmx request swaps #main).
            if cursor is None and (not request.htmx or request.htmx.target == "main"):
                context["error_groups"] = _error_groups(side, call_filter, kept)
                context["failure_chart"] = _failure_chart(side, name, call_filter.scope)
            context.update(
                known=bool(context["rows"]) or calls.known_tool(side, name),
                count_cap=sqlhelpers.COUNT_CAP,
                computed_at=figures.computed_at(side),
                **figures.scope_choices(side),
            )
    except figures.NotComputed:
        context["not_computed"] = True
    context["rows_html"] = render_call_rows(context["rows"], settings.SLOW_TOOL_CALL_MS)
    template = "sessions_admin/tool_calls.html"
    if request.htmx and cursor is not None:
        template += "#rows"
    return render(request, template, context)
