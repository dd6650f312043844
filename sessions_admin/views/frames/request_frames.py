"""``/sessions/<id>/frames/<request_id>/``: one request's frames, and its live tail.

Frames are read a page at a time from a byte ``offset`` (``?n=`` carries the line number
of that offset as a display hint), filtered by ``kind``, ``q`` (text), ``trace`` and
``span``; ``?end=1`` opens the last stretch of the file. At the end of a file that is
still being written, an htmx poll (``?tail=1``) appends new rows until it stops changing.
"""

from __future__ import annotations

import time
from pathlib import Path
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
    REQUEST_TEMPLATE,
    FrameQuery,
    frames_problem,
    hint_param,
    request_url,
    seconds_param,
    whole_param,
)
from sessions_admin.views.frames.render import frame_rows, timeline_of
from sessions_admin.views.frames_html import render_frame_rows

#: Frames per page: enough to read a request at a glance, small enough to render fast.
PAGE_FRAMES = 100
#: ``?end=1`` starts this many bytes before the end (then realigns to a line start).
END_WINDOW_BYTES = 128 * 1024
END_MAX_READS = 20
#: The live tail polls while the file changed within this many seconds.
TAIL_IDLE_SECONDS = 30


# --- Frames of one request ----------------------------------------------------------------


def _tail_state(page: frames.FramePage, now: float) -> dict[str, Any]:
    """Whether a viewer at the end of the file should keep polling."""
    quiet_for = max(0.0, now - page.mtime)
    return {"live": quiet_for < TAIL_IDLE_SECONDS, "quiet_for": quiet_for}


def _tail_url(
    session_id: str, request_id: str, page: frames.FramePage, query: FrameQuery, number: int | None
) -> str:
    return request_url(
        session_id,
        request_id,
        tail=1,
        offset=page.end_offset,
        size=page.size,
        mtime=repr(page.mtime),
        n=number,
        **query.as_query(),
    )


def _read(path: Path, offset: int, query: FrameQuery, number: int | None) -> frames.FramePage:
    return frames.read_page(
        path, offset, PAGE_FRAMES, kind=query.kind, q=query.store_q, first_line_number=number
    )


def _last_page(path: Path, query: FrameQuery) -> tuple[int, frames.FramePage]:
    """The last page of the file: lines can only be found reading forward, so read from
    a window before the end and keep the last page that has frames (bounded reads)."""
    size = path.stat().st_size
    start = max(0, size - END_WINDOW_BYTES)
    page = _read(path, start, query, 1 if start == 0 else None)
    for _ in range(END_MAX_READS):
        if page.next_offset is None:
            break
        following = _read(path, page.next_offset, query, page.next_line_number)
        if not following.frames and following.pending is None:
            break
        page = following
    return start, page


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def request_frames_page(request: HttpRequest, session_id: str, request_id: str) -> HttpResponse:
    query = FrameQuery.from_request(request)
    offset = whole_param(request, "offset", "a byte offset")
    number = whole_param(request, "n", "a line number")
    tailing = request.GET.get("tail") == "1" and bool(request.htmx)
    try:
        path = frames.request_file(frames_root(), session_id, request_id)
        if tailing:
            return _tail(request, session_id, request_id, path, query, offset or 0, number)
        at_end = request.GET.get("end") == "1" and offset is None
        started = time.perf_counter()
        if at_end:
            offset, page = _last_page(path, query)
        else:
            offset = offset or 0
            if offset == 0 and number is None:
                number = 1
            page = _read(path, offset, query, number)
        read_ms = (time.perf_counter() - started) * 1000
    except FRAMES_ERRORS as exc:
        back = (session_url(session_id, "frames"), "Back to this session's requests")
        return frames_problem(request, exc, back)

    session = queries.get_session(session_id)
    prompt, status, duration_ms = frames.request_summary(path)
    kept = [f for f in page.frames if query.keeps(f)] if query.active else page.frames
    t0 = min((f.ts_ms for f in kept if f.ts_ms is not None), default=None)
    rows = frame_rows(session_id, request_id, kept, has_session=session is not None, t0=t0)
    context: dict[str, Any] = {
        "session_id": session_id,
        "session": session,
        "request_id": request_id,
        "about": {
            "prompt": prompt,
            "status": status,
            "duration_ms": duration_ms,
            "tokens": frames.request_tokens(path),
        },
        "page": page,
        "rows": rows,
        "rows_html": render_frame_rows(rows),
        "query": query,
        "kinds": sorted({f.kind for f in page.frames if f.kind}, key=str.casefold),
        "at_end_request": at_end,
        "requested_offset": offset,
        "read_ms": read_ms,
        "timeline": timeline_of(kept),
        "request_url": request_url(session_id, request_id),
        "frames_url": session_url(session_id, "frames"),
        "start_url": request_url(session_id, request_id, **query.as_query()),
        "end_url": request_url(session_id, request_id, end=1, **query.as_query()),
        "next_url": request_url(
            session_id,
            request_id,
            offset=page.next_offset,
            n=page.next_line_number,
            **query.as_query(),
        )
        if page.next_offset is not None
        else "",
        "tail_url": _tail_url(session_id, request_id, page, query, page.next_line_number)
        if page.eof
        else "",
        "check_url": request_url(
            session_id,
            request_id,
            offset=page.end_offset,
            n=page.next_line_number,
            **query.as_query(),
        ),
        "messages_url": session_url(session_id, trace=query.trace, span=query.span)
        if session is not None and (query.trace or query.span)
        else "",
        "mtime_ms": int(page.mtime * 1000),
        **_tail_state(page, time.time()),
    }
    if request.htmx and request.htmx.target == "frames-panel":
        return render(request, f"{REQUEST_TEMPLATE}#panel", context)
    return render(request, REQUEST_TEMPLATE, context)


def _tail(
    request: HttpRequest,
    session_id: str,
    request_id: str,
    path: Path,
    query: FrameQuery,
    offset: int,
    number: int | None,
) -> HttpResponse:
    """One live-tail poll: the new rows (appended to the table) and, out of band, the
    poll element again (or a note that the tail stopped)."""
    result = frames.tail(
        path,
        offset,
        # A hand-edited poll URL reads as "changed": the read is the same.
        last_size=hint_param(request, "size"),
        last_mtime=seconds_param(request, "mtime"),
        limit=PAGE_FRAMES,
        kind=query.kind,
        q=query.store_q,
        first_line_number=number,
    )
    page = result.page
    session = queries.get_session(session_id)
    kept = [f for f in page.frames if query.keeps(f)] if query.active else page.frames
    context: dict[str, Any] = {
        "session_id": session_id,
        "request_id": request_id,
        "page": page,
        "rows_html": render_frame_rows(
            frame_rows(session_id, request_id, kept, has_session=session is not None, t0=None)
        ),
        "shrunk": result.shrunk,
        "tail_url": _tail_url(session_id, request_id, page, query, page.next_line_number),
        "check_url": request_url(
            session_id,
            request_id,
            offset=page.end_offset,
            n=page.next_line_number,
            **query.as_query(),
        ),
        "start_url": request_url(session_id, request_id, **query.as_query()),
        "oob": True,
        **_tail_state(page, time.time()),
    }
    if not page.eof:
        # More than a page arrived at once: keep polling right away from where we are.
        context["live"] = True
    return render(request, f"{REQUEST_TEMPLATE}#tail_poll", context)
