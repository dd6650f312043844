"""The frames table's rows and the SVG timeline, prepared for ``frames_request.html``.

Every value a row or a timeline mark shows is worked out here as plain text, URLs,
numbers and flags; the template's ``rows`` partial and ``timeline`` block place them
and escape each one: in a template the first page of a 1 GB file stays well within
its goal (``bench/bench_frames_views.py``), so no markup is built here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from django.utils import timezone

from sessions_admin.humanize import clock_ms, duration, exact_time, file_size, signed_duration
from sessions_admin.ids import session_url
from sessions_admin.store import frames
from sessions_admin.store.timeutil import from_epoch_ms, in_zone
from sessions_admin.templatetags.sessions_admin import short_id
from sessions_admin.views.frames.common import request_url

#: Timeline: most bars drawn, and the drawing's size in SVG user units. The SVG is
#: drawn at this size in CSS pixels (never scaled to its box, which shrank its text to
#: about 6 px on a 900 px page); a narrower page scrolls it sideways.
TIMELINE_MAX_BARS = 80
TIMELINE_WIDTH = 860
TIMELINE_MAX_HEIGHT = 360
#: A span's bar gets its words beside it from this row height up (px).
LABELLED_ROW_PX = 8


# --- Rows ---------------------------------------------------------------------------------


def _chip(kind: str | None) -> int:
    """A colour per kind that is the same on every page (``hash()`` is salted)."""
    return sum((kind or "").encode("utf-8", "replace")) % 8


def _clock(ts_ms: int | None) -> tuple[str, str, str] | None:
    """(ISO, ``HH:MM:SS.mmm``, exact with date and zone) in the dashboard's zone."""
    moment = from_epoch_ms(ts_ms)
    if moment is None:
        return None
    local = in_zone(moment, timezone.get_current_timezone())
    return moment.isoformat(), clock_ms(local), exact_time(local)


_FAILED = frozenset({"error", "failed", "failure", "fail"})


def _failed(frame: frames.FrameLine) -> bool:
    data = frame.data or {}
    status = data.get("status")
    return (
        data.get("ok") is False
        or bool(data.get("error"))
        or (isinstance(status, str) and status.casefold() in _FAILED)
    )


def _where(frame: frames.FrameLine) -> str:
    return f"line {frame.number:,}" if frame.number else f"at byte {frame.offset:,}"


def _damage(frame: frames.FrameLine) -> str:
    reason = frame.error or ""
    if frame.error == "line too long":
        size = file_size(frame.length)
        reason += f": {size} ({frame.length:,} bytes), only its start is shown"
    return reason


@dataclass
class FrameRow:
    """One row of the frames table (or of a trace search's hits)."""

    frame: frames.FrameLine
    dom_id: str
    clock: tuple[str, str, str] | None
    since_ms: float | None  # since the page's first timed frame
    chip: int
    failed: bool
    messages_url: str = ""
    span_messages_url: str = ""
    trace_frames_url: str = ""
    classes: str = "frame"
    # Text, not numbers: the template engine localizes every number it prints.
    chip_class: str = ""
    iso: str = ""
    clock_text: str = ""
    exact: str = ""
    #: The line number ("1,234"), or "" with the byte offset ("1,234") instead.
    line: str = ""
    offset: str = ""
    where: str = ""
    size: str = ""
    since: str = ""
    took: str = ""
    trace_short: str = ""
    span_short: str = ""
    damage: str = ""
    shown_chars: str = ""
    length: str = ""


def _prepared(row: FrameRow) -> FrameRow:
    f = row.frame
    row.line = f"{f.number:,}" if f.number else ""
    row.offset = f"{f.offset:,}"
    row.where = _where(f)
    row.size = file_size(f.length)
    row.length = f"{f.length:,}"
    if f.error:
        row.classes = "frame frame-damaged"
        row.damage = _damage(f)
        row.shown_chars = f"{len(f.raw):,}"
        return row
    row.classes = "frame frame-failed" if row.failed else "frame"
    row.chip_class = f"chip-{row.chip}"
    if row.clock:
        row.iso, row.clock_text, row.exact = row.clock
    row.since = duration(row.since_ms) if row.since_ms else ""
    row.took = duration(f.duration_ms) if f.duration_ms is not None else ""
    row.trace_short = short_id(f.trace_id) if f.trace_id else ""
    row.span_short = short_id(f.span_id) if f.span_id else ""
    row.shown_chars = f"{len(f.pretty):,}" if f.pretty_truncated else ""
    return row


def frame_rows(
    session_id: str,
    request_id: str,
    page_frames: list[frames.FrameLine],
    *,
    has_session: bool,
    t0: int | None,
) -> list[FrameRow]:
    """The rows of one page of frames, ready for the ``rows`` partial."""
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
        rows.append(_prepared(row))
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
    #: The words drawn beside a span's bar (empty: the rows are too thin to read).
    text: str = ""
    text_x: float = 0.0
    text_anchor: str = "start"


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
    #: The first drawn moment with date and zone ("2026-11-28 14:02:11.123 UTC"):
    #: the axis labels are offsets from it.
    starts_at: str = ""
    #: (colour index, kind) for each kind drawn, in first-drawn order: the legend.
    legend: list[tuple[int, str]] = field(default_factory=list)
    any_failed: bool = False


def _span_label(frame: frames.FrameLine, ms: float | None) -> str:
    parts = [p for p in (frame.kind, frame.name) if p]
    if ms is not None:
        parts.append(signed_duration(ms))
    return " · ".join(parts) or "frame"


def _spans_and_events(
    page_frames: list[frames.FrameLine],
) -> tuple[list[tuple[float, float, frames.FrameLine]], list[tuple[float, frames.FrameLine]], int]:
    """(start, end, frame) of each span, (time, frame) of each other timed frame, and
    how many readable frames have no time."""
    spans: list[tuple[float, float, frames.FrameLine]] = []
    events: list[tuple[float, frames.FrameLine]] = []
    open_spans: dict[str, frames.FrameLine] = {}
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
    return spans, events, untimed


def timeline_of(page_frames: list[frames.FrameLine]) -> Timeline | None:
    spans, events, untimed = _spans_and_events(page_frames)
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
        if row_h >= LABELLED_ROW_PX:
            line.bars[-1] = _with_text(line.bars[-1], frame, end - start)
        y += row_h + gap
    line.height = round(y + gap, 2)
    _label(line, t0, [f for _, f in events] + [f for _, _, f in shown])
    return line


def _with_text(bar: Bar, frame: frames.FrameLine, ms: float) -> Bar:
    """The bar with a span's name and duration beside it: after it, or before it when
    the bar ends near the right edge."""
    words = " · ".join(p for p in (frame.name or frame.kind, signed_duration(ms)) if p)
    text = words if len(words) <= 48 else words[:47] + "…"
    x, anchor = round(bar.x + bar.width + 3, 2), "start"
    if x + len(text) * 6 > TIMELINE_WIDTH:
        x, anchor = round(bar.x - 3, 2), "end"
        if x < 60:  # no room on either side: inside the bar, from its start
            x, anchor = round(bar.x + 3, 2), "start"
    return replace(bar, text=text, text_x=x, text_anchor=anchor)


def _label(line: Timeline, t0: float, drawn: list[frames.FrameLine]) -> None:
    """The start time with its zone, and a legend entry per colour drawn."""
    clock = _clock(round(t0))
    line.starts_at = clock[2] if clock else ""
    seen: set[str] = set()
    for frame in drawn:
        kind = frame.kind or ""
        if kind not in seen:
            seen.add(kind)
            line.legend.append((_chip(frame.kind), kind or "(no kind)"))
        line.any_failed = line.any_failed or (frame.ok and _failed(frame))
