"""``/failures/``: what failed across every tool, grouped, the biggest group first.

Read from the rollups only (:mod:`sessions_admin.ourdata.rollups.failures`);
the window, target and profile live in the URL like the tools page's, and each
group links to its calls on its tool's page.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import clock, params
from sessions_admin.access import staff_view
from sessions_admin.charts import failure_sparkline
from sessions_admin.ourdata.rollups import failures, figures
from sessions_admin.ourdata.rollups.figures import parse_window
from sessions_admin.views.figures import (
    bucket_label,
    sync_context,
    tool_url,
    window_links,
    window_since,
)
from sessions_admin.views.tools import scope_from

#: Groups a page shows; the rest are counted below the table.
SHOWN_GROUPS = 100


@require_safe
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def failure_list(request: HttpRequest) -> HttpResponse:
    window = parse_window(request.GET.get("window"), clock.now_ms())
    scope = scope_from(request.GET)
    kept = {k: v for k, v in (("target", scope.target), ("profile", scope.profile)) if v}
    refresh = params.flag(request.GET, "refresh")
    context: dict[str, Any] = {
        "window": window,
        "scope": scope,
        "windows": window_links(window, {**kept, **({"refresh": "1"} if refresh else {})}),
        "review_query": urlencode({**kept, "window": window.key}),
        "refresh": refresh,
    }
    try:
        with figures.reading() as side:
            context.update(sync_context(side))
            if not context["not_computed"]:
                found = failures.failure_groups(side, window, scope)
                context.update(
                    _groups(found, window, kept),
                    computed_at=figures.computed_at(side),
                    **figures.scope_choices(side),
                )
    except figures.NotComputed:
        context["not_computed"] = True
    template = "sessions_admin/failures.html"
    if request.htmx and request.htmx.target == "failure-table":
        template += "#table"
    return render(request, template, context)


def _groups(found: failures.Failures, window, kept: dict[str, str]) -> dict[str, Any]:
    since = window_since(window)
    shown = found.groups[:SHOWN_GROUPS]
    labels = [(b, bucket_label(b, window.grain)) for b in found.buckets]
    for group in shown:
        group.tool_url = tool_url(group.tool, since=since, **kept)
        group.calls_url = tool_url(group.tool, errors="1", what=group.what, since=since, **kept)
        counts = group.by_bucket
        group.spark = failure_sparkline([(label, counts.get(b, 0)) for b, label in labels])
    hidden = found.groups[SHOWN_GROUPS:]
    return {
        "groups": shown,
        "scanned": found.scanned,
        "cut": found.cut,
        "hidden_groups": len(hidden),
        "hidden_calls": sum(g.count for g in hidden),
        "failed_calls": sum(g.count for g in found.groups),
    }
