"""Activity frames: the requests of a session, the frames of one request, and orphans.

* ``/sessions/<id>/frames/``: the session's ``activity-<requestId>.jsonl`` files.
  With ``?trace=<id>`` (the transcript links here from a message's trace id) it
  also searches those files for the trace's frames, within a byte budget.
* ``/sessions/<id>/frames/<request_id>/``: one request's frames, read a page at a
  time from a byte ``offset`` (``?n=`` carries the line number of that offset as a
  display hint), filtered by ``kind``, ``q`` (text), ``trace`` and ``span``;
  ``?end=1`` opens the last stretch of the file. At the end of a file that is still
  being written, an htmx poll (``?tail=1``) appends new rows until it stops changing.
* ``/frames/orphans/``: frame directories left without a session row, disk use, and
  their removal through :func:`sessions_admin.store.deletion.remove_orphan_frames`.

Both session subpages accept a session id with no row in the store (orphans stay
readable). Every path is checked by :mod:`sessions_admin.store.frames`; what it
refuses becomes a 400 page saying why, a missing file a 404, never a traceback.
"""

from __future__ import annotations

import html
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe
from django.views.decorators.http import require_http_methods, require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin.access import DELETE_SESSIONS, staff_view
from sessions_admin.ids import session_url
from sessions_admin.store import deletion, queries
from sessions_admin.store import frames as store
from sessions_admin.store.connection import frames_root, is_read_only
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.templatetags.sessions_admin import duration_ms, filesize, short_id
from sessions_admin.views.routing import register

REQUESTS_TEMPLATE = "sessions_admin/frames_requests.html"
REQUEST_TEMPLATE = "sessions_admin/frames_request.html"
ORPHANS_TEMPLATE = "sessions_admin/frames_orphans.html"

#: Frames per page: enough to read a request at a glance, small enough to render fast.
PAGE_FRAMES = 100
#: ``?end=1`` starts this many bytes before the end (then realigns to a line start).
END_WINDOW_BYTES = 128 * 1024
END_MAX_READS = 20
#: The live tail polls while the file changed within this many seconds.
TAIL_IDLE_SECONDS = 30
#: Trace search on the requests page: files searched, bytes per file and in all.
TRACE_MAX_FILES = 50
TRACE_FILE_BUDGET = 4 * 1024 * 1024
TRACE_TOTAL_BUDGET = 32 * 1024 * 1024
TRACE_FRAMES_PER_FILE = 20
#: Timeline: most bars drawn, and the drawing's size in SVG user units.
TIMELINE_MAX_BARS = 80
TIMELINE_WIDTH = 1000
TIMELINE_MAX_HEIGHT = 360
#: Orphans page: rows listed (removal of "all" is not limited by this).
ORPHANS_SHOWN = 300
#: Sessions checked for a missing frames directory ("for information").
RECENT_SESSIONS_CHECKED = 50
MAX_PARAM_CHARS = 1000


class BadParam(ValueError):
    pass


class HttpResponseSeeOther(HttpResponseRedirect):
    status_code = 303


# --- Problems: refused, missing, unreadable ---------------------------------------------


def _problem(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    """A page (or, for htmx, a banner in ``#flash``) that says what went wrong."""
    context = {"status": status, "title": title, "message": message}
    if getattr(request, "htmx", False):
        response = render(request, f"{REQUEST_TEMPLATE}#problem", context, status=status)
        # Not into the table the poll or link targets: into the page's flash area.
        response["HX-Retarget"] = "#flash"
        response["HX-Reswap"] = "innerHTML"
        return response
    return render(request, "sessions_admin/http_error.html", context, status=status)


def _frames_problem(request: HttpRequest, exc: Exception) -> HttpResponse:
    if isinstance(exc, store.FramesRefused):
        return _problem(request, 400, "Refused", f"{exc} Only files inside the frames root "
                        "are ever opened.")
    if isinstance(exc, store.FramesNotFound):
        return _problem(request, 404, "Not found", str(exc))
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        return _problem(request, 503, "Cannot read the frames",
                        f"The frames could not be read: {reason}.")
    return _problem(request, 400, "Refused", str(exc))


_FRAMES_ERRORS = (store.FramesError, OSError)


# --- Parameters ---------------------------------------------------------------------------


def _text(request: HttpRequest, name: str) -> str | None:
    value = request.GET.get(name, "").strip()
    if len(value) > MAX_PARAM_CHARS:
        raise BadParam(f"{name} is too long (over {MAX_PARAM_CHARS:,} characters).")
    return value or None


def _whole(request: HttpRequest, name: str, what: str) -> int | None:
    raw = request.GET.get(name, "").strip()
    if not raw:
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 18:
        raise BadParam(f"{name} must be {what} (a whole number); got {raw[:40]!r}.")
    return int(raw)


def _seconds(request: HttpRequest, name: str) -> float | None:
    raw = request.GET.get(name, "").strip()
    try:
        value = float(raw) if raw and len(raw) < 32 else None
    except ValueError:
        value = None
    return value if value is not None and value == value and abs(value) < 1e12 else None


@dataclass(frozen=True)
class FrameQuery:
    kind: str | None = None
    q: str | None = None
    trace: str | None = None
    span: str | None = None

    @classmethod
    def from_request(cls, request: HttpRequest) -> FrameQuery:
        return cls(kind=_text(request, "kind"), q=_text(request, "q"),
                   trace=_text(request, "trace"), span=_text(request, "span"))

    @property
    def active(self) -> bool:
        return bool(self.kind or self.q or self.trace or self.span)

    @property
    def store_q(self) -> str | None:
        """What the store scans for: an id is far more selective than free text."""
        return self.trace or self.span or self.q

    def keeps(self, frame: store.FrameLine) -> bool:
        """Checks the store's substring scan cannot make. Damaged lines that matched the
        scan stay: they may well belong to the trace, and hiding damage misleads."""
        if frame.error is not None:
            return True
        if self.trace and frame.trace_id != self.trace:
            return False
        if self.span and self.span not in (frame.span_id, frame.parent_span_id):
            return False
        if self.q and self.q != self.store_q:
            return self.q.casefold() in frame.raw.casefold()
        return True

    def as_query(self) -> dict[str, str]:
        pairs = (("kind", self.kind), ("q", self.q), ("trace", self.trace), ("span", self.span))
        return {k: v for k, v in pairs if v}


# --- Rows ---------------------------------------------------------------------------------


def _request_url(session_id: str, request_id: str, **query: Any) -> str:
    return session_url(session_id, f"frames/{quote(request_id, safe='')}", **query)


def _chip(kind: str | None) -> int:
    """A colour per kind that is the same on every page (``hash()`` is salted)."""
    return sum((kind or "").encode("utf-8", "replace")) % 8


def _clock(ts_ms: int | None) -> tuple[str, str, str] | None:
    """(ISO, ``HH:MM:SS.mmm``, exact with date and zone) in the dashboard's zone."""
    moment = from_epoch_ms(ts_ms)
    if moment is None:
        return None
    local = timezone.localtime(moment)
    clock = local.strftime("%H:%M:%S.") + f"{local.microsecond // 1000:03d}"
    exact = f"{local.strftime('%Y-%m-%d')} {clock} {local.tzname()}"
    return moment.isoformat(), clock, exact


_FAILED = frozenset({"error", "failed", "failure", "fail"})


def _failed(frame: store.FrameLine) -> bool:
    data = frame.data or {}
    status = data.get("status")
    return (
        data.get("ok") is False
        or bool(data.get("error"))
        or (isinstance(status, str) and status.casefold() in _FAILED)
    )


@dataclass
class FrameRow:
    frame: store.FrameLine
    dom_id: str
    clock: tuple[str, str, str] | None
    since_ms: float | None  # since the page's first timed frame
    chip: int
    failed: bool
    messages_url: str = ""
    span_messages_url: str = ""
    trace_frames_url: str = ""


    @property
    def html(self) -> SafeString:
        return _row_html(self)


# The table body and the timeline are the hot loops of the page: a hundred rows through
# the template engine (or even format_html, whose lazy-string checks dominate) cost
# 10-20 ms; plain f-strings cost ~2 ms, which keeps the first page of a 1 GB file well
# under 50 ms of server time. Every interpolated value goes through _e (the stdlib's
# html.escape with quotes, which is what Django's escape does) or is a number we made.
_MUTED_DASH = '<span class="muted">—</span>'


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _where(frame: store.FrameLine) -> str:
    return f"line {frame.number:,}" if frame.number else f"at byte {frame.offset:,}"


def _line_cell(frame: store.FrameLine) -> str:
    if frame.number:
        return f'<td class="num line">{frame.number:,}</td>'
    return (f'<td class="num line"><span class="muted" title="byte offset">@{frame.offset:,}'
            "</span></td>")


def _damaged_html(row: FrameRow) -> str:
    f = row.frame
    reason = f.error or ""
    if f.error == "line too long":
        reason += f": {filesize(f.length)} ({f.length:,} bytes), only its start is shown"
    note = ""
    if f.truncated:
        note = (f'<p class="truncated-note">Only the first {len(f.raw):,} characters of '
                f"{f.length:,} bytes are shown.</p>")
    return (
        f'<tr class="frame frame-damaged" id="{row.dom_id}">{_line_cell(f)}<td colspan="5">'
        '<details class="frame-json"><summary><span class="mark mark-broken">unreadable '
        f'{_where(f)}</span> <span class="reason">{_e(reason)}</span></summary>'
        f'<pre class="json raw">{_e(f.raw)}</pre>{note}</details></td></tr>\n'
    )


def _row_html(row: FrameRow) -> SafeString:
    f = row.frame
    if f.error:
        return mark_safe(_damaged_html(row))
    if row.clock:
        since = f' <span class="muted">+{duration_ms(row.since_ms)}</span>' if row.since_ms else ""
        iso, clock, exact = row.clock
        time_cell = f'<time datetime="{_e(iso)}" title="{_e(exact)}">{_e(clock)}</time>{since}'
    else:
        time_cell = _MUTED_DASH
    kind = f'<span class="chip chip-{row.chip}">{_e(f.kind)}</span>' if f.kind else _MUTED_DASH
    trace = _MUTED_DASH
    if f.trace_id:
        trace_id = _e(f.trace_id)
        trace = (f'<a href="{_e(row.trace_frames_url)}" title="Only frames of trace {trace_id}">'
                 f"<code>{_e(short_id(f.trace_id))}</code></a>")
        if row.messages_url:
            trace += (f' <a class="pair" href="{_e(row.messages_url)}" title="Messages with '
                      f'trace {trace_id}">msgs</a>')
    span = _MUTED_DASH
    if f.span_id:
        span_id = _e(f.span_id)
        span = f'<code title="{span_id}">{_e(short_id(f.span_id))}</code>'
        if row.span_messages_url:
            span += (f' <a class="pair" href="{_e(row.span_messages_url)}" title="Messages with '
                     f'span {span_id}">msgs</a>')
    failed = '<span class="mark mark-error">error</span> ' if row.failed else ""
    took = (f' <span class="muted">· {duration_ms(f.duration_ms)}</span>'
            if f.duration_ms is not None else "")
    cut = (f'<p class="truncated-note">Cut at {len(f.pretty):,} characters; the line is '
           f"{filesize(f.length)}.</p>" if f.pretty_truncated else "")
    about = f"{_where(f)} · {filesize(f.length)}"
    if f.parent_span_id:
        about += f" · parent span <code>{_e(f.parent_span_id)}</code>"
    if f.trace_id:
        about += f" · trace <code>{_e(f.trace_id)}</code>"
    return mark_safe(
        f'<tr class="frame{" frame-failed" if row.failed else ""}" id="{row.dom_id}">'
        f'{_line_cell(f)}<td class="time">{time_cell}</td><td>{kind}</td>'
        f'<td class="id">{trace}</td><td class="id">{span}</td><td class="frame-summary">'
        f'<details class="frame-json"><summary>{failed}{_e(f.summary)}{took}</summary>'
        f'<pre class="json">{_e(f.pretty)}</pre>{cut}'
        f'<p class="value-actions muted">{about}</p></details></td></tr>\n'
    )


def _rows(session_id: str, request_id: str, page_frames: list[store.FrameLine],
          *, has_session: bool, t0: int | None) -> list[FrameRow]:
    rows = []
    for frame in page_frames:
        row = FrameRow(
            frame=frame, dom_id=f"frame-{frame.offset}", clock=_clock(frame.ts_ms),
            since_ms=None if frame.ts_ms is None or t0 is None else frame.ts_ms - t0,
            chip=_chip(frame.kind), failed=frame.ok and _failed(frame),
        )
        if frame.trace_id:
            row.trace_frames_url = _request_url(session_id, request_id, trace=frame.trace_id)
            if has_session:
                row.messages_url = session_url(session_id, trace=frame.trace_id)
        if frame.span_id and has_session:
            row.span_messages_url = session_url(session_id, span=frame.span_id)
        rows.append(row)
    return rows


# --- Timeline -----------------------------------------------------------------------------

_START_RE = re.compile(r"(?:^|[._:\- /])(start|started|begin|begins|open|opened)$", re.I)
_END_RE = re.compile(
    r"(?:^|[._:\- /])(end|ended|finish|finished|done|complete|completed|stop|stopped|close|"
    r"closed)$", re.I)


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    chip: int
    failed: bool
    label: str
    href: str


@dataclass
class Timeline:
    """An SVG waterfall of one page of frames (SVG attributes are allowed by the CSP,
    ``style=`` is not). Spans come from a frame's duration (its time taken as the start,
    as in OpenTelemetry) or from a start/end pair sharing a span id; other timed frames
    are ticks on the top row."""

    width: int
    height: float
    bars: list[Bar] = field(default_factory=list)
    ticks: list[Bar] = field(default_factory=list)
    axis: list[tuple[float, str]] = field(default_factory=list)
    hidden_spans: int = 0
    untimed: int = 0
    duration_ms: float = 0.0

    @property
    def marks_html(self) -> SafeString:
        """The ticks and bars as SVG (one per frame: a hot loop, see _row_html)."""
        out = []
        for kind, bars in (("tl-tick", self.ticks), ("tl-bar", self.bars)):
            for bar in bars:
                failed = " tl-failed" if bar.failed else ""
                out.append(
                    f'<a href="{_e(bar.href)}"><rect class="{kind} chip-{bar.chip}{failed}" '
                    f'x="{bar.x}" y="{bar.y}" width="{bar.width}" height="{bar.height}"'
                    f'{" rx=\"1\"" if kind == "tl-bar" else ""}><title>{_e(bar.label)}</title>'
                    "</rect></a>")
        return mark_safe("".join(out))


def _span_label(frame: store.FrameLine, ms: float | None) -> str:
    parts = [p for p in (frame.kind, frame.name) if p]
    if ms is not None:
        parts.append(_ms_text(ms))
    return " · ".join(parts) or "frame"


def _ms_text(ms: float) -> str:
    if abs(ms) < 1000:
        return f"{ms:.0f} ms"
    if abs(ms) < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{ms / 60_000:.1f} min"


def _timeline(page_frames: list[store.FrameLine]) -> Timeline | None:
    spans: list[tuple[float, float, store.FrameLine]] = []
    events: list[tuple[float, store.FrameLine]] = []
    open_spans: dict[str, store.FrameLine] = {}
    untimed = 0
    for frame in page_frames:
        if frame.ts_ms is None:
            untimed += frame.ok
            continue
        kind = frame.kind or ""
        if frame.span_id and _START_RE.search(kind) and frame.duration_ms is None:
            open_spans[frame.span_id] = frame
            continue
        started = open_spans.pop(frame.span_id, None) if frame.span_id else None
        if started is not None and _END_RE.search(kind) and started.ts_ms is not None:
            spans.append((float(started.ts_ms), float(frame.ts_ms), started))
        elif frame.duration_ms is not None and frame.duration_ms > 0:
            spans.append((float(frame.ts_ms), frame.ts_ms + frame.duration_ms, frame))
        else:
            if started is not None:
                events.append((float(started.ts_ms or frame.ts_ms), started))
            events.append((float(frame.ts_ms), frame))
    events.extend((float(f.ts_ms), f) for f in open_spans.values() if f.ts_ms is not None)
    if not spans and len(events) < 2:
        return None
    points = [s for s, _, _ in spans] + [e for _, e, _ in spans] + [t for t, _ in events]
    t0, t1 = min(points), max(points)
    total = max(t1 - t0, 1.0)
    pad, inner = 8.0, TIMELINE_WIDTH - 16.0

    def x_of(t: float) -> float:
        return round(pad + (t - t0) / total * inner, 2)

    spans.sort(key=lambda s: (s[0], s[1]))
    shown = spans[:TIMELINE_MAX_BARS]
    axis_h, event_h, gap = 14.0, 10.0, 2.0
    row_h = min(10.0, max(3.0, (TIMELINE_MAX_HEIGHT - axis_h - event_h) / max(len(shown), 1)
                          - gap))
    line = Timeline(width=TIMELINE_WIDTH, height=0.0, hidden_spans=len(spans) - len(shown),
                    untimed=untimed, duration_ms=t1 - t0)
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        line.axis.append((round(pad + fraction * inner, 2), "+" + _ms_text(fraction * total)))
    for t, frame in events:
        line.ticks.append(Bar(x_of(t) - 1, axis_h, 2.0, event_h, _chip(frame.kind),
                              frame.ok and _failed(frame), _span_label(frame, None),
                              f"#frame-{frame.offset}"))
    y = axis_h + event_h + gap * 2
    for start, end, frame in shown:
        x = x_of(start)
        line.bars.append(Bar(x, round(y, 2), max(round(x_of(end) - x, 2), 1.5), round(row_h, 2),
                             _chip(frame.kind), frame.ok and _failed(frame),
                             _span_label(frame, end - start), f"#frame-{frame.offset}"))
        y += row_h + gap
    line.height = round(y + gap, 2)
    return line


# --- Requests of a session ----------------------------------------------------------------


@dataclass
class TraceHit:
    request: store.RequestFile
    rows: list[FrameRow]
    url: str
    searched_bytes: int
    complete: bool
    continue_url: str = ""


def _trace_search(session_id: str, requests: list[store.RequestFile], query: FrameQuery,
                  has_session: bool) -> tuple[list[TraceHit], int]:
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
            path = store.request_file(root, session_id, request_file.request_id)
            page = store.read_page(path, 0, TRACE_FRAMES_PER_FILE, q=query.store_q,
                                   scan_budget=budget, first_line_number=1)
        except _FRAMES_ERRORS:
            continue  # listed a moment ago, gone or swapped since: the list shows it
        spent += page.scanned_bytes
        kept = [f for f in page.frames if query.keeps(f)]
        complete = page.eof
        if not kept and complete:
            continue
        url = _request_url(session_id, request_file.request_id, **query.as_query())
        t0 = min((f.ts_ms for f in kept if f.ts_ms is not None), default=None)
        hit = TraceHit(request_file, _rows(session_id, request_file.request_id, kept,
                                           has_session=has_session, t0=t0),
                       url, page.scanned_bytes, complete)
        if not complete:
            hit.continue_url = _request_url(session_id, request_file.request_id,
                                            offset=page.end_offset, **query.as_query())
        hits.append(hit)
    return hits, unsearched


@register("frames")
@require_safe
@vary_on_headers("HX-Request")
def requests_page(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        query = FrameQuery.from_request(request)
    except BadParam as exc:
        return _problem(request, 400, "Bad request", str(exc))
    session = queries.get_session(session_id)
    root = frames_root()
    try:
        requests = store.list_requests(root, session_id)
        has_dir = bool(requests) or store.session_dir(root, session_id).is_dir()
    except _FRAMES_ERRORS as exc:
        return _frames_problem(request, exc)
    context: dict[str, Any] = {
        "session_id": session_id,
        "session": session,
        "has_dir": has_dir,
        "requests": [
            {"file": r, "url": _request_url(session_id, r.request_id),
             "mtime_ms": int(r.mtime * 1000),
             "span_ms": None if r.first_ts_ms is None or r.last_ts_ms is None
             else r.last_ts_ms - r.first_ts_ms}
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
            session_id, requests, query, session is not None)
        context["trace_ms"] = (time.perf_counter() - started) * 1000
        if session is not None:
            context["trace_messages_url"] = session_url(session_id, trace=query.trace,
                                                        span=query.span)
    return render(request, REQUESTS_TEMPLATE, context)


requests_page.allows_missing_session = True  # type: ignore[attr-defined]


# --- Frames of one request ----------------------------------------------------------------


def _tail_state(page: store.FramePage, now: float) -> dict[str, Any]:
    """Whether a viewer at the end of the file should keep polling."""
    quiet_for = max(0.0, now - page.mtime)
    return {"live": quiet_for < TAIL_IDLE_SECONDS, "quiet_for": quiet_for}


def _tail_url(session_id: str, request_id: str, page: store.FramePage, query: FrameQuery,
              number: int | None) -> str:
    return _request_url(session_id, request_id, tail=1, offset=page.end_offset,
                        size=page.size, mtime=repr(page.mtime), n=number,
                        **query.as_query())


def _read(path: Path, offset: int, query: FrameQuery, number: int | None) -> store.FramePage:
    return store.read_page(path, offset, PAGE_FRAMES, kind=query.kind, q=query.store_q,
                           first_line_number=number)


def _last_page(path: Path, query: FrameQuery) -> tuple[int, store.FramePage]:
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


@register("frames_request")
@require_safe
@vary_on_headers("HX-Request")
def request_page(request: HttpRequest, session_id: str, request_id: str) -> HttpResponse:
    try:
        query = FrameQuery.from_request(request)
        offset = _whole(request, "offset", "a byte offset")
        number = _whole(request, "n", "a line number")
    except BadParam as exc:
        return _problem(request, 400, "Bad request", str(exc))
    tailing = request.GET.get("tail") == "1" and bool(request.htmx)
    try:
        path = store.request_file(frames_root(), session_id, request_id)
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
    except _FRAMES_ERRORS as exc:
        return _frames_problem(request, exc)

    session = queries.get_session(session_id)
    kept = [f for f in page.frames if query.keeps(f)] if query.active else page.frames
    t0 = min((f.ts_ms for f in kept if f.ts_ms is not None), default=None)
    rows = _rows(session_id, request_id, kept, has_session=session is not None, t0=t0)
    context: dict[str, Any] = {
        "session_id": session_id,
        "session": session,
        "request_id": request_id,
        "page": page,
        "rows": rows,
        "query": query,
        "kinds": sorted({f.kind for f in page.frames if f.kind}, key=str.casefold),
        "at_end_request": at_end,
        "requested_offset": offset,
        "read_ms": read_ms,
        "timeline": _timeline(kept),
        "request_url": _request_url(session_id, request_id),
        "frames_url": session_url(session_id, "frames"),
        "start_url": _request_url(session_id, request_id, **query.as_query()),
        "end_url": _request_url(session_id, request_id, end=1, **query.as_query()),
        "next_url": _request_url(session_id, request_id, offset=page.next_offset,
                                 n=page.next_line_number, **query.as_query())
        if page.next_offset is not None else "",
        "tail_url": _tail_url(session_id, request_id, page, query, page.next_line_number)
        if page.eof else "",
        "check_url": _request_url(session_id, request_id, offset=page.end_offset,
                                  n=page.next_line_number, **query.as_query()),
        "messages_url": session_url(session_id, trace=query.trace, span=query.span)
        if session is not None and (query.trace or query.span) else "",
        "mtime_ms": int(page.mtime * 1000),
        **_tail_state(page, time.time()),
    }
    if request.htmx and request.htmx.target == "frames-panel":
        return render(request, f"{REQUEST_TEMPLATE}#panel", context)
    return render(request, REQUEST_TEMPLATE, context)


request_page.allows_missing_session = True  # type: ignore[attr-defined]


def _tail(request: HttpRequest, session_id: str, request_id: str, path: Path,
          query: FrameQuery, offset: int, number: int | None) -> HttpResponse:
    """One live-tail poll: the new rows (appended to the table) and, out of band, the
    poll element again (or a note that the tail stopped)."""
    try:
        last_size = _whole(request, "size", "a size")
    except BadParam:  # a hand-edited poll URL: treat as "changed", the read is the same
        last_size = None
    result = store.tail(path, offset, last_size=last_size,
                        last_mtime=_seconds(request, "mtime"), limit=PAGE_FRAMES,
                        kind=query.kind, q=query.store_q, first_line_number=number)
    page = result.page
    session = queries.get_session(session_id)
    kept = [f for f in page.frames if query.keeps(f)] if query.active else page.frames
    context: dict[str, Any] = {
        "session_id": session_id,
        "request_id": request_id,
        "page": page,
        "rows": _rows(session_id, request_id, kept, has_session=session is not None, t0=None),
        "shrunk": result.shrunk,
        "tail_url": _tail_url(session_id, request_id, page, query, page.next_line_number),
        "check_url": _request_url(session_id, request_id, offset=page.end_offset,
                                  n=page.next_line_number, **query.as_query()),
        "start_url": _request_url(session_id, request_id, **query.as_query()),
        "oob": True,
        **_tail_state(page, time.time()),
    }
    if not page.eof:
        # More than a page arrived at once: keep polling right away from where we are.
        context["live"] = True
    return render(request, f"{REQUEST_TEMPLATE}#tail_poll", context)


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
            {"dir": d, "mtime_ms": int(d.mtime * 1000),
             "url": session_url(d.session_id, "frames")}
            for d in orphans[:ORPHANS_SHOWN]
        ],
        "orphans_hidden": max(0, len(orphans) - ORPHANS_SHOWN),
        "recent_checked": len(recent),
        "recent_without_dir": [s for s in recent if s.id not in known],
        "read_only": is_read_only(),
    }


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view()
def orphans_page(request: HttpRequest) -> HttpResponse:
    if request.method == "POST":
        return _remove_orphans(request)
    try:
        context = _orphans_context()
    except _FRAMES_ERRORS as exc:
        return _frames_problem(request, exc)
    return render(request, ORPHANS_TEMPLATE, context)


def _remove_orphans(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(DELETE_SESSIONS):
        raise PermissionDenied(f"You need the permission {DELETE_SESSIONS!r}.")
    back = reverse("frames_orphans")
    every = request.POST.get("all") == "1"
    selected = [sid for sid in request.POST.getlist("session_id") if sid != ""]
    if every and request.POST.get("confirm") != "1":
        messages.warning(request, "Tick the confirmation box to remove every orphan.")
        return HttpResponseSeeOther(back)
    if not every and not selected:
        messages.warning(request, "Select at least one directory to remove.")
        return HttpResponseSeeOther(back)
    result = deletion.remove_orphan_frames(None if every else selected,
                                           actor=deletion.Actor.of(request.user))
    report = result.frames or deletion.FramesReport()
    text = (f"Removed {report.dirs_removed:,} orphan frame "
            f"director{'ies' if report.dirs_removed != 1 else 'y'} "
            f"({filesize(report.bytes_removed)}, {report.files_removed:,} "
            f"file{'s' if report.files_removed != 1 else ''}).")
    if result.skipped:
        text += f" {result.skipped:,} now have a session row and were left alone."
    if report.missing:
        text += f" {report.missing:,} were already gone or empty."
    if report.refused:
        sid, why = report.refused[0]
        text += (f" {len(report.refused):,} refused, e.g. {short_id(sid)}: {why}")
    level = messages.WARNING if report.refused or result.skipped else messages.SUCCESS
    messages.add_message(request, level, text)
    return HttpResponseSeeOther(back)
