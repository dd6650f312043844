"""``/sessions/<id>/frames/``: the session's ``activity-<requestId>.jsonl`` files.

With ``?trace=<id>`` (the transcript links here from a message's trace id) or ``?span=``
it also searches those files for the trace's frames, within a byte budget.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin.access import staff_view
from sessions_admin.ids import session_url
from sessions_admin.store import frames, queries
from sessions_admin.store.connection import frames_root
from sessions_admin.views.frames.common import (
    FRAMES_ERRORS,
    FrameQuery,
    frames_problem,
    request_url,
)
from sessions_admin.views.frames.render import FrameRow, frame_rows

REQUESTS_TEMPLATE = "sessions_admin/frames_requests.html"


#: Trace search on the requests page: files searched, bytes per file and in all.
TRACE_MAX_FILES = 50
TRACE_FILE_BUDGET = 4 * 1024 * 1024
TRACE_TOTAL_BUDGET = 32 * 1024 * 1024
TRACE_FRAMES_PER_FILE = 20


# --- Requests of a session ----------------------------------------------------------------


@dataclass
class TraceHit:
    request: frames.RequestFile
    rows: list[FrameRow]
    url: str
    searched_bytes: int
    complete: bool
    continue_url: str = ""


def _trace_search(
    session_id: str, requests: list[frames.RequestFile], query: FrameQuery, has_session: bool
) -> tuple[list[TraceHit], int]:
    """Frames of one trace/span across the session's requests, within a byte budget.

    Returns the files with matches (or not fully searched) and how many files were left
    unsearched. Every file is read from its start with the id as the scan's needle.
    """
    root = frames_root()
    hits: list[TraceHit] = []
    spent = 0
    unsearched = 0
    for number, request_file in enumerate(requests):
        if number >= TRACE_MAX_FILES or spent >= TRACE_TOTAL_BUDGET:
            unsearched += 1
            continue
        budget = min(TRACE_FILE_BUDGET, TRACE_TOTAL_BUDGET - spent)
        try:
            path = frames.request_file(root, session_id, request_file.request_id)
            page = frames.read_page(
                path,
                0,
                TRACE_FRAMES_PER_FILE,
                q=query.store_q,
                scan_budget=budget,
                first_line_number=1,
            )
        except FRAMES_ERRORS:
            continue  # listed a moment ago, gone or swapped since: the list shows it
        spent += page.scanned_bytes
        kept = [f for f in page.frames if query.keeps(f)]
        complete = page.eof
        if not kept and complete:
            continue
        url = request_url(session_id, request_file.request_id, **query.as_query())
        t0 = min((f.ts_ms for f in kept if f.ts_ms is not None), default=None)
        hit = TraceHit(
            request_file,
            frame_rows(session_id, request_file.request_id, kept, has_session=has_session, t0=t0),
            url,
            page.scanned_bytes,
            complete,
        )
        if not complete:
            hit.continue_url = request_url(
                session_id, request_file.request_id, offset=page.end_offset, **query.as_query()
            )
        hits.append(hit)
    return hits, unsearched


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def session_requests_page(request: HttpRequest, session_id: str) -> HttpResponse:
    query = FrameQuery.from_request(request)
    session = queries.get_session(session_id)
    root = frames_root()
    try:
        requests = frames.list_requests(root, session_id)
        has_dir = bool(requests) or frames.session_dir(root, session_id).is_dir()
    except FRAMES_ERRORS as exc:
        return frames_problem(request, exc)
    context: dict[str, Any] = {
        "session_id": session_id,
        "session": session,
        "has_dir": has_dir,
        "requests": [
            {
                "file": r,
                "url": request_url(session_id, r.request_id),
                "mtime_ms": int(r.mtime * 1000),
                "span_ms": None
                if r.first_ts_ms is None or r.last_ts_ms is None
                else r.last_ts_ms - r.first_ts_ms,
            }
            for r in requests
        ],
        "total_bytes": sum(r.size for r in requests),
        "query": query,
        "frames_url": session_url(session_id, "frames"),
        "trace_max_files": TRACE_MAX_FILES,
        "trace_total_budget": TRACE_TOTAL_BUDGET,
    }
    if query.trace or query.span:
        started = time.perf_counter()
        context["trace_hits"], context["trace_unsearched"] = _trace_search(
            session_id, requests, query, session is not None
        )
        context["trace_ms"] = (time.perf_counter() - started) * 1000
        if session is not None:
            context["trace_messages_url"] = session_url(
                session_id, trace=query.trace, span=query.span
            )
    return render(request, REQUESTS_TEMPLATE, context)
