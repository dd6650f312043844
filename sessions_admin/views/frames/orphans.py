"""``/frames/orphans/``: frame directories left without a session row, and their removal.

The page lists the orphans (capped) with their disk use, and which recent sessions have
no frames directory (for information). Removal goes through
:func:`sessions_admin.deletion.remove_orphan_frames`, which re-checks every
directory against the store and audits the run.
"""

from __future__ import annotations

import time
from typing import Any

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from sessions_admin import deletion
from sessions_admin.access import DELETE_SESSIONS, staff_view
from sessions_admin.ids import session_url
from sessions_admin.store import queries
from sessions_admin.store.connection import is_read_only
from sessions_admin.templatetags.sessions_admin import filesize, short_id
from sessions_admin.views.frames.common import FRAMES_ERRORS, frames_problem
from sessions_admin.views.responses import HttpResponseSeeOther

ORPHANS_TEMPLATE = "sessions_admin/frames_orphans.html"


#: Orphans page: rows listed (removal of "all" is not limited by this).
ORPHANS_SHOWN = 300
#: Sessions checked for a missing frames directory ("for information").
RECENT_SESSIONS_CHECKED = 50


# --- Orphans ------------------------------------------------------------------------------


def _orphans_context() -> dict[str, Any]:
    started = time.perf_counter()
    report = deletion.find_orphan_frames()
    scan_ms = (time.perf_counter() - started) * 1000
    orphans = sorted(report.orphans, key=lambda d: (-d.mtime, d.session_id))
    known = {d.session_id for d in report.known}
    recent = queries.list_sessions(queries.SessionFilter(), limit=RECENT_SESSIONS_CHECKED).rows
    return {
        "report": report,
        "dir_count": len(report.known) + len(report.orphans),
        "scan_ms": scan_ms,
        "orphans": [
            {"dir": d, "mtime_ms": int(d.mtime * 1000), "url": session_url(d.session_id, "frames")}
            for d in orphans[:ORPHANS_SHOWN]
        ],
        "orphans_hidden": max(0, len(orphans) - ORPHANS_SHOWN),
        "recent_checked": len(recent),
        "recent_without_dir": [s for s in recent if s.linkable and s.id not in known],
        "read_only": is_read_only(),
    }


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view()
def orphans_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return remove_orphans(request)
    try:
        context = _orphans_context()
    except FRAMES_ERRORS as exc:
        return frames_problem(request, exc)
    return render(request, ORPHANS_TEMPLATE, context)


@require_POST
@staff_view(DELETE_SESSIONS)
def remove_orphans(request: HttpRequest) -> HttpResponse:
    """The orphans page's form (same URL): removal needs the delete permission."""
    back = reverse("frames_orphans")
    every = request.POST.get("all") == "1"
    selected = [sid for sid in request.POST.getlist("session_id") if sid != ""]
    if every and request.POST.get("confirm") != "1":
        messages.warning(request, "Tick the confirmation box to remove every orphan.")
        return HttpResponseSeeOther(back)
    if not every and not selected:
        messages.warning(request, "Select at least one directory to remove.")
        return HttpResponseSeeOther(back)
    result = deletion.remove_orphan_frames(
        None if every else selected, actor=deletion.Actor.of(request.user)
    )
    report = result.frames or deletion.FramesReport()
    text = (
        f"Removed {report.dirs_removed:,} orphan frame "
        f"director{'ies' if report.dirs_removed != 1 else 'y'} "
        f"({filesize(report.bytes_removed)}, {report.files_removed:,} "
        f"file{'s' if report.files_removed != 1 else ''}"
    )
    if others := report.describe_others():
        text += f", and {others}, unlinked without following"
    text += ")."
    if result.skipped:
        text += f" {result.skipped:,} now have a session row and were left alone."
    if report.missing:
        text += f" {report.missing:,} were already gone."
    if report.refused:
        sid, why = report.refused[0]
        text += f" {len(report.refused):,} refused, e.g. {short_id(sid)}: {why}"
    level = messages.WARNING if report.refused or result.skipped else messages.SUCCESS
    messages.add_message(request, level, text)
    return HttpResponseSeeOther(back)
