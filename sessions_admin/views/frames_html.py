"""The frames table's rows, drawn in Python.

A page holds up to a hundred frames of a dozen values each, and the template
engine's lookups and filters were most of its time (a 1 GB file's page: 23 ms,
4 to 5 ms more than before the masking, ``docs/benchmarks-history.md``). Each
value goes through Django's own ``conditional_escape`` as ``{{ value }}`` would,
and masked text through the ``masked`` filters the template used, so a row is
the markup the template drew (``tests/test_frames_html.py`` compares them).
"""

from __future__ import annotations

from collections.abc import Iterable

from django.utils.html import conditional_escape
from django.utils.safestring import SafeString

from sessions_admin.markup import safe_html
from sessions_admin.templatetags.sessions_admin import masked, masked_clipped
from sessions_admin.views.frames.render import FrameRow

MUTED_DASH = '<span class="muted">—</span>'


def _v(value: object) -> str:
    """``value`` as ``{{ value }}`` renders it (escaped unless already safe)."""
    return str(conditional_escape(value))


def render_frame_rows(rows: Iterable[FrameRow]) -> SafeString:
    """Every row of the table, in order."""
    return safe_html("".join(_row(row) for row in rows))


def _row(row: FrameRow) -> str:
    f = row.frame
    if row.line:
        line = f'<td class="num line">{_v(row.line)}</td>'
    else:
        line = (
            '<td class="num line"><span class="muted" title="byte offset">'
            f"@{_v(row.offset)}</span></td>"
        )
    cells = _damaged(row) if f.error else _cells(row)
    return f'<tr class="{_v(row.classes)}" id="{_v(row.dom_id)}">{line}{cells}</tr>'


def _damaged(row: FrameRow) -> str:
    f = row.frame
    note = ""
    if f.truncated:
        note = (
            f'<p class="truncated-note">Only the first {_v(row.shown_chars)} characters of '
            f"{_v(row.length)} bytes are shown.</p>"
        )
    return (
        '<td colspan="5"><details class="frame-json"><summary><span class="mark mark-broken">'
        f'unreadable {_v(row.where)}</span> <span class="reason">{_v(row.damage)}</span>'
        f'</summary><pre class="json raw">{_v(masked_clipped(f.raw, f.truncated))}</pre>'
        f"{note}</details></td>"
    )


def _cells(row: FrameRow) -> str:
    return _time(row) + _kind(row) + _trace(row) + _span(row) + _summary(row)


def _time(row: FrameRow) -> str:
    if not row.clock:
        return f'<td class="time">{MUTED_DASH}</td>'
    since = f' <span class="muted">+{_v(row.since)}</span>' if row.since else ""
    return (
        f'<td class="time"><time datetime="{_v(row.iso)}" title="{_v(row.exact)}">'
        f"{_v(row.clock_text)}</time>{since}</td>"
    )


def _kind(row: FrameRow) -> str:
    kind = row.frame.kind
    if not kind:
        return f"<td>{MUTED_DASH}</td>"
    return f'<td><span class="chip {_v(row.chip_class)}">{_v(kind)}</span></td>'


def _trace(row: FrameRow) -> str:
    trace = row.frame.trace_id
    if not trace:
        return f'<td class="id">{MUTED_DASH}</td>'
    return (
        f'<td class="id"><a href="{_v(row.trace_frames_url)}" '
        f'title="Only frames of trace {_v(trace)}"><code>{_v(row.trace_short)}</code></a>'
        f"{_messages_link(row.messages_url, 'trace', trace)}</td>"
    )


def _span(row: FrameRow) -> str:
    span = row.frame.span_id
    if not span:
        return f'<td class="id">{MUTED_DASH}</td>'
    pair = _messages_link(row.span_messages_url, "span", span)
    return f'<td class="id"><code title="{_v(span)}">{_v(row.span_short)}</code>{pair}</td>'


def _messages_link(url: str, noun: str, ident: str) -> str:
    """The link to the session's messages of this trace or span ("" without one)."""
    if not url:
        return ""
    return f' <a class="pair" href="{_v(url)}" title="Messages with {noun} {_v(ident)}">msgs</a>'


def _summary(row: FrameRow) -> str:
    f = row.frame
    error = '<span class="mark mark-error">error</span> ' if row.failed else ""
    took = f' <span class="muted">· {_v(row.took)}</span>' if row.took else ""
    cut = ""
    if f.pretty_truncated:
        cut = (
            f'<p class="truncated-note">Cut at {_v(row.shown_chars)} characters; '
            f"the line is {_v(row.size)}.</p>"
        )
    parent = f" · parent span <code>{_v(f.parent_span_id)}</code>" if f.parent_span_id else ""
    trace = f" · trace <code>{_v(f.trace_id)}</code>" if f.trace_id else ""
    return (
        f'<td class="frame-summary"><details class="frame-json"><summary>{error}'
        f"{_v(masked(f.summary))}{took}</summary>"
        f'<pre class="json">{_v(masked_clipped(f.pretty, f.pretty_truncated))}</pre>{cut}'
        f'<p class="value-actions muted">{_v(row.where)} · {_v(row.size)}{parent}{trace}</p>'
        "</details></td>"
    )
