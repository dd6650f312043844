"""``/``: the host at a glance (health and size, activity, targets, tools, principals).

Everything but the health check and the file sizes comes from the rollups in
the side database (:mod:`sessions_admin.ourdata.rollups`), as of their last
sync; row counts and frames use are fetched after the page (``?part=counts``).
"""

from __future__ import annotations

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import clock
from sessions_admin.access import staff_view
from sessions_admin.ourdata.review import queues
from sessions_admin.ourdata.rollups import figures
from sessions_admin.ourdata.rollups.figures import Window, parse_window
from sessions_admin.ourdata.rollups.schema import DAY_MS
from sessions_admin.store import size
from sessions_admin.store.connection import StoreError, describe_database_error, store_status
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.views.figures import (
    LIST_PRESET,
    activity_charts,
    link_tools,
    list_url,
    sync_context,
    window_links,
)
from sessions_admin.views.sessions import LIST_PARAMS

TEMPLATE = "sessions_admin/overview.html"
TOOLS_SHOWN = 10
#: One colour per profile, the same on every target's bar (an SVG fill attribute, not a style,
#: so CSP is untouched); past eight profiles the hues are spread by the golden angle.
PROFILE_COLOURS = (
    "#2f6feb",
    "#e07b00",
    "#2da44e",
    "#a371f7",
    "#cf222e",
    "#1b9aaa",
    "#9a6700",
    "#6e7681",
)


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def overview(request: HttpRequest) -> HttpResponse:
    wants_counts = request.GET.get("part") == "counts"
    if wants_counts and request.htmx:
        return render(request, TEMPLATE + "#counts", _counts(request))
    if any(name in request.GET for name in (*LIST_PARAMS, "cursor")):
        # The list lived at / before the overview: its old links still land on it.
        return HttpResponseRedirect(reverse("sessions") + "?" + request.GET.urlencode())
    window = parse_window(request.GET.get("window"), clock.now_ms())
    status = store_status()
    context = {
        "status": status,
        "checked_at_ms": int(status.checked_at * 1000),
        "sizes": size.store_file_sizes(),
        "window": window,
        "windows": window_links(window, {}),
        "sessions_url": list_url(),
        "open_queues": queues.open_queues(),
        # Without JavaScript the "count" link reloads the whole page with the counts.
        **(_counts(request) if wants_counts else _count_links(request)),
    }
    try:
        with figures.reading() as side:
            context.update(sync_context(side))
            if not context["not_computed"]:
                context.update(_rollup_context(side, window))
    except figures.NotComputed:
        context["not_computed"] = True
    return render(request, TEMPLATE, context)


def profile_colours(profiles: list[str]) -> dict[str, str]:
    """A colour per profile, in name order: the same profile has the same colour on every bar."""
    colours = {}
    for i, profile in enumerate(sorted(set(profiles))):
        if i < len(PROFILE_COLOURS):
            colours[profile] = PROFILE_COLOURS[i]
        else:
            colours[profile] = f"hsl({round(i * 137.508) % 360} 55% 45%)"
    return colours


def _target_bars(
    targets: list[figures.TargetFigures], preset: str | None, colours: dict[str, str]
) -> list[dict]:
    """One stacked bar per target, a segment per profile, each a link to the list."""
    widest = max((t.sessions for t in targets), default=0) or 1
    bars = []
    for t in targets:
        x, segments = 0.0, []
        for profile, (sessions, messages) in t.profiles.items():
            width = 300 * sessions / widest
            segments.append(
                {
                    "profile": profile,
                    "sessions": sessions,
                    "messages": messages,
                    "x": round(x, 2),
                    "width": round(width, 2),
                    "colour": colours[profile],
                    "url": list_url(target=t.target, profile=profile, active=preset),
                }
            )
            x += width
        bars.append(
            {
                "target": t.target,
                "sessions": t.sessions,
                "messages": t.messages,
                "url": list_url(target=t.target, active=preset),
                "segments": segments,
            }
        )
    return bars


def _rollup_context(side: figures.SideConnection, window: Window) -> dict:
    now = window.now_ms
    preset = LIST_PRESET[window.key]
    by_target = figures.by_target(side, window)
    colours = profile_colours([p for t in by_target for p in t.profiles])
    targets = _target_bars(by_target, preset, colours)
    tools = figures.tool_rows(side, window, series=False)[:TOOLS_SHOWN]
    link_tools(tools, window)
    principals = figures.busiest_principals(side, window)
    links = [
        list_url(principal=p.principal, active=preset) if p.principal else None for p in principals
    ]
    return {
        "computed_at": figures.computed_at(side),
        "totals": figures.totals(side),
        "charts": activity_charts(
            figures.activity(side, "hour", 24, now), figures.activity(side, "day", 90, now)
        ),
        "targets": targets,
        "profile_legend": list(colours.items()),
        "tools": tools,
        "tools_url": reverse("tools") + f"?window={window.key}",
        "principals": list(zip(principals, links, strict=True)),
        "principals_since": _utc_day(window.start_day),
    }


def _utc_day(day: int | None) -> dict[str, str] | None:
    """The UTC day the busiest principals are counted from (``rollup_principal_day``
    counts whole UTC days): its date, and its midnight as ISO 8601."""
    midnight = None if day is None else from_epoch_ms(day * DAY_MS)
    if midnight is None:
        return None
    return {"day": midnight.date().isoformat(), "iso": midnight.isoformat()}


def _count_links(request: HttpRequest) -> dict:
    """The "count" and "count again" links: this page's query plus ``part=counts``.

    Built from the request so that, without JavaScript, reloading with the
    counts keeps the window (and anything else the page was opened with).
    """
    query = request.GET.copy()
    query.pop("fresh", None)
    query["part"] = "counts"
    count_url = "?" + query.urlencode()
    query["fresh"] = "1"
    return {"count_url": count_url, "recount_url": "?" + query.urlencode()}


def _counts(request: HttpRequest) -> dict:
    try:
        counts = size.store_counts(fresh=request.GET.get("fresh") == "1")
        problem = None
    except StoreError as exc:
        counts, problem = None, exc
    except DatabaseError as exc:
        counts, problem = None, describe_database_error(exc)
    return {
        "counts": counts,
        "problem": problem,
        "status": store_status(),
        **_count_links(request),
    }
