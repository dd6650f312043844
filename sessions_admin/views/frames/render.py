"""HTML of the frames table rows and of the SVG timeline, rendered in Python.

These are the hot loops of the frames pages (a hundred rows, a mark per frame), so they
are escaped f-strings rather than template loops; see the note above :func:`_e`. Every
value taken from a frame goes through :func:`_e`; the rest are numbers we made.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from sessions_admin.humanize import clock_ms, exact_time, signed_duration
from sessions_admin.ids import session_url
from sessions_admin.store import frames as store
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.templatetags.sessions_admin import duration_ms, filesize, short_id
from sessions_admin.views.frames.common import request_url

#: Timeline: most bars drawn, and the drawing's size in SVG user units.
TIMELINE_MAX_BARS = 80
TIMELINE_WIDTH = 1000
TIMELINE_MAX_HEIGHT = 360


# --- Rows ---------------------------------------------------------------------------------


def _chip(kind: str | None) -> int:
    """A colour per kind that is the same on every page (``hash()`` is salted)."""
    return sum((kind or "").encode("utf-8", "replace")) % 8


def _clock(ts_ms: int | None) -> tuple[str, str, str] | None:
    """(ISO, ``HH:MM:SS.mmm``, exact with date and zone) in the dashboard's zone."""
    moment = from_epoch_ms(ts_ms)
    if moment is None:
        return None
    local = timezone.localtime(moment)
    return moment.isoformat(), clock_ms(local), exact_time(local)


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
    return (
        f'<td class="num line"><span class="muted" title="byte offset">@{frame.offset:,}'
        "</span></td>"
    )


def _damaged_html(row: FrameRow) -> str:
    f = row.frame
    reason = f.error or ""
    if f.error == "line too long":
        reason += f": {filesize(f.length)} ({f.length:,} bytes), only its start is shown"
    note = ""
    if f.truncated:
        note = (
            f'<p class="truncated-note">Only the first {len(f.raw):,} characters of '
            f"{f.length:,} bytes are shown.</p>"
        )
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
        trace = (
            f'<a href="{_e(row.trace_frames_url)}" title="Only frames of trace {trace_id}">'
            f"<code>{_e(short_id(f.trace_id))}</code></a>"
        )
        if row.messages_url:
            trace += (
                f' <a class="pair" href="{_e(row.messages_url)}" title="Messages with '
                f'trace {trace_id}">msgs</a>'
            )
    span = _MUTED_DASH
    if f.span_id:
        span_id = _e(f.span_id)
        span = f'<code title="{span_id}">{_e(short_id(f.span_id))}</code>'
        if row.span_messages_url:
            span += (
                f' <a class="pair" href="{_e(row.span_messages_url)}" title="Messages with '
                f'span {span_id}">msgs</a>'
            )
    failed = '<span class="mark mark-error">error</span> ' if row.failed else ""
    took = (
        f' <span class="muted">· {duration_ms(f.duration_ms)}</span>'
        if f.duration_ms is not None
        else ""
    )
    cut = (
        f'<p class="truncated-note">Cut at {len(f.pretty):,} characters; the line is '
        f"{filesize(f.length)}.</p>"
        if f.pretty_truncated
        else ""
    )
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


def frame_rows(
    session_id: str,
    request_id: str,
    page_frames: list[store.FrameLine],
    *,
    has_session: bool,
    t0: int | None,
) -> list[FrameRow]:
    rows = []
    for frame in page_frames:
        row = FrameRow(
            frame=frame,
            dom_id=f"frame-{frame.offset}",
            clock=_clock(frame.ts_ms),
            since_ms=None if frame.ts_ms is None or t0 is None else frame.ts_ms - t0,
            chip=_chip(frame.kind),
            failed=frame.ok and _failed(frame),
        )
        if frame.trace_id:
            row.trace_frames_url = request_url(session_id, request_id, trace=frame.trace_id)
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
    r"closed)$",
    re.I,
)


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
                    f"{' rx="1"' if kind == 'tl-bar' else ''}><title>{_e(bar.label)}</title>"
                    "</rect></a>"
                )
        return mark_safe("".join(out))


def _span_label(frame: store.FrameLine, ms: float | None) -> str:
    parts = [p for p in (frame.kind, frame.name) if p]
    if ms is not None:
        parts.append(signed_duration(ms))
    return " · ".join(parts) or "frame"


def timeline_of(page_frames: list[store.FrameLine]) -> Timeline | None:
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
    row_h = min(10.0, max(3.0, (TIMELINE_MAX_HEIGHT - axis_h - event_h) / max(len(shown), 1) - gap))
    line = Timeline(
        width=TIMELINE_WIDTH,
        height=0.0,
        hidden_spans=len(spans) - len(shown),
        untimed=untimed,
        duration_ms=t1 - t0,
    )
    for fraction in (0, 0.25, 0.5, 0.75, 1):
        line.axis.append(
            (round(pad + fraction * inner, 2), "+" + signed_duration(fraction * total))
        )
    for t, frame in events:
        line.ticks.append(
            Bar(
                x_of(t) - 1,
                axis_h,
                2.0,
                event_h,
                _chip(frame.kind),
                frame.ok and _failed(frame),
                _span_label(frame, None),
                f"#frame-{frame.offset}",
            )
        )
    y = axis_h + event_h + gap * 2
    for start, end, frame in shown:
        x = x_of(start)
        line.bars.append(
            Bar(
                x,
                round(y, 2),
                max(round(x_of(end) - x, 2), 1.5),
                round(row_h, 2),
                _chip(frame.kind),
                frame.ok and _failed(frame),
                _span_label(frame, end - start),
                f"#frame-{frame.offset}",
            )
        )
        y += row_h + gap
    line.height = round(y + gap, 2)
    return line
