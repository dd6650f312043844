"""The transcript's message items: what each message of a page shows, as plain values.

Everything a message item shows is worked out here, once, as plain values (texts,
URLs, CSS classes, flags); :mod:`sessions_admin.views.transcript_html` places them
in markup and escapes every one (a benchmark moved that markup out of the
template: its docstring has the figures). The one piece of markup made here is a
tool value's JSON highlighting (:func:`sessions_admin.views.json_html.highlight`),
which walks the value.

A page has 100 messages: what they share (URL prefixes, a trace's links, the
slow threshold's text) is made once a page (:class:`MessageItems`), and a time is
formatted by one ``isoformat`` (:func:`~sessions_admin.humanize.shown_and_exact_time`).
The outline above the messages adds 300 rows, built in Python
(:func:`render_outline_rows`, which says why).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from urllib.parse import quote

from django.conf import settings
from django.utils import timezone
from django.utils.safestring import SafeString

from sessions_admin.humanize import duration, file_size, shown_and_exact_time
from sessions_admin.ids import session_url
from sessions_admin.markup import safe_html
from sessions_admin.masking import OPEN, masker, shorten
from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.transcript import (
    OUTLINE_MESSAGES,
    MessagePage,
    MessageRow,
    OutlineCall,
    OutlineRows,
    Value,
)
from sessions_admin.store.values import Fields, OddValue, Undecodable
from sessions_admin.templatetags.sessions_admin import short_id
from sessions_admin.views import json_html
from sessions_admin.views.outline_html import OUTLINE_WIDTH, OutlineBar, render_outline_rows

#: Tool-call chips cycle through this many colours (CSS classes chip-0 … chip-7).
CHIP_COLOURS = 8
SUMMARY_CHARS = 140


@dataclass(frozen=True)
class Pair:
    """Another message carrying the same ``tool_call_id``."""

    id: int
    role: str
    above: bool
    on_page: bool


@dataclass(frozen=True)
class PairLink(Fields):
    id: str
    role: str
    href: str
    label: str


@dataclass(frozen=True)
class Moment(Fields):
    iso: str
    exact: str
    shown: str


@dataclass(frozen=True)
class Truncated(Fields):
    """The note under a value the page only has the head of."""

    dom_id: str
    full_url: str
    raw_url: str
    size: str


@dataclass
class JsonBlock(Fields):
    """A collapsible ``args``/``result`` block of a tool card."""

    label: str
    dom_id: str
    summary: str
    text: str
    html: SafeString | None = None
    mark: str = ""
    broken: bool = False
    error: bool = False
    truncated: Truncated | None = None
    raw_url: str = ""


@dataclass
class ToolCard(Fields):
    classes: str
    name: str | None
    target: str | None
    op: str | None
    duration: str
    slow: bool
    slow_threshold: str
    call_id: str | None
    call_short: str
    status: str  # "error", "ok" or ""
    blocks: list[JsonBlock] = field(default_factory=list)


@dataclass
class MessageItem(Fields):
    """One message as the page shows it (``row`` is kept for the notes beside it)."""

    row: MessageRow
    #: The message id as text (it is printed several times a message).
    id: str
    classes: str
    role_class: str
    role: str
    time: Moment | None
    #: The row's ``ts`` when it is no time at all (its description), else "".
    odd_time: str
    permalink: str
    model_id: str | None = None
    trace_id: str | None = None
    trace_short: str = ""
    trace_frames_url: str = ""
    trace_external_url: str = ""
    span_id: str | None = None
    span_short: str = ""
    call_id: str | None = None
    call_short: str = ""
    chip: str = ""
    pairs: list[PairLink] = field(default_factory=list)
    content_truncated: Truncated | None = None
    #: The content as shown: without a copy of the result, which has its own block.
    content: str = ""
    tool: ToolCard | None = None
    #: The message's columns whose text is not valid UTF-8 (shown with U+FFFD), joined.
    undecodable: str = ""
    #: Reviewers' notes on this message (markup, views.notes_html.notes_beside_messages), and
    #: the link that writes one ("" without "Can annotate"); set by the session view.
    notes_html: str = ""
    note_url: str = ""
    #: Some of its values are masked and the reader may reveal them (a reveal button).
    revealable: bool = False


def chip_for(call_id: str) -> int:
    """The colour of a tool call's chip, the same on every page (``hash()`` is salted)."""
    return zlib.crc32(call_id.encode("utf-8", "replace")) % CHIP_COLOURS


def permalink_prefix(session_id: str) -> str:
    """``session_url(session_id, at=N)`` without its N: built once for a page's hundreds of
    links (a message id is an int, so nothing in it needs quoting)."""
    return session_url(session_id, at=0).removesuffix("0")


def trace_urls(session_id: str, trace_id: str) -> tuple[str, str]:
    """The frames of this trace, and the external trace viewer's page (or "")."""
    frames = session_url(session_id, "frames", trace=trace_id)
    template = settings.TRACE_URL_TEMPLATE
    external = template.replace("{trace_id}", quote(trace_id, safe="")) if template else ""
    return frames, external


def pairs_by_message(page: MessagePage) -> dict[int, list[Pair]]:
    """For each message with a call id, the others that share it, in page order."""
    by_call: dict[str, list[MessageRow]] = {}
    for row in page.messages:
        if row.tool_call_id:
            by_call.setdefault(row.tool_call_id, []).append(row)
    pairs: dict[int, list[Pair]] = {}
    for call_id, rows in by_call.items():
        outside = page.neighbours.get(call_id, [])
        for index, row in enumerate(rows):
            pairs[row.id] = (
                [Pair(mid, role, True, False) for mid, role, above in outside if above]
                + [
                    Pair(other.id, other.role, position < index, True)
                    for position, other in enumerate(rows)
                    if other.id != row.id
                ]
                + [Pair(mid, role, False, False) for mid, role, above in outside if not above]
            )
    return pairs


def _moment(ts: int, zone: tzinfo) -> Moment | None:
    """None when there is no time to show; the template then shows an odd ``ts`` as it is."""
    if isinstance(ts, OddValue):
        return None
    try:
        moment = datetime.fromtimestamp(ts / 1000, tz=zone)
    except (OverflowError, OSError, ValueError, TypeError):
        return None
    # The zone is part of the time shown: a reader compares it with logs kept in UTC.
    shown, exact = shown_and_exact_time(moment)
    return Moment(moment.isoformat(), exact, shown)


def undecodable_columns(row: MessageRow) -> list[str]:
    """The columns of ``row`` read from bytes that are not UTF-8 (usually none)."""
    values = (
        ("role", row.role),
        ("content", row.content.text),
        ("tool", row.tool_name),
        ("call id", row.tool_call_id),
        ("target", row.tool_target),
        ("op", row.tool_op),
        ("args", row.tool_args.text if row.tool_args is not None else None),
        ("result", row.tool_result.text if row.tool_result is not None else None),
        ("trace", row.trace_id),
        ("span", row.span_id),
        ("model", row.model_id),
    )
    return [name for name, value in values if type(value) is Undecodable]


#: The shortest tail of a content that counts as a copy of the result
#: (a shorter one may agree by chance).
ECHO_MIN_CHARS = 16


def content_without_result(content: str, result: str) -> str:
    """A tool message's content without the copy of its result the runtime put in it.

    The runtime writes what the model was shown: often a summary line, then the
    start of the raw result (cut with "…"), or the result itself. The result is
    shown once, in its own block; the content keeps only what it adds. Anything
    else is returned as it is.
    """
    if type(content) is not str or type(result) is not str:
        return content  # an odd or undecodable value is shown as it is, never cut
    if content.strip() == result.strip():
        return ""
    head, _, tail = content.rpartition("\n")
    echo = tail.strip().removesuffix("…")
    if head and len(echo) >= ECHO_MIN_CHARS and result.lstrip().startswith(echo):
        return head.rstrip()
    return content


def _summary(text: str) -> str:
    # A masked value cut in two is left out whole (its tag would not read).
    return shorten(" ".join(text[: SUMMARY_CHARS * 2].split()), SUMMARY_CHARS)


def _masks_something(item: MessageItem) -> bool:
    """Whether a value of the message is shown masked (its tags are marked in the text)."""
    if OPEN in item.content:
        return True
    blocks = item.tool.blocks if item.tool is not None else []
    return any(OPEN in block.text or (block.html and OPEN in block.html) for block in blocks)


def _split_at(url: str, marker: str) -> tuple[str, str]:
    """``url`` around its last ``marker``: a URL made once, then filled per message."""
    head, _, tail = url.rpartition(marker)
    return head, tail


class MessageItems:
    """Prepares one page's messages; holds what every item shares.

    A page has 100 messages: what they share (URL prefixes, a trace's links,
    the slow threshold's text) is made once here, not per message.
    """

    def __init__(
        self,
        session_id: str,
        page: MessagePage,
        *,
        reveal: bool = False,
        can_reveal: bool = False,
    ) -> None:
        self.session_id = session_id
        self.page = page
        #: Hidden values masked for the page (None: revealed, or masking switched off).
        self.mask = None if reveal else masker()
        self.can_reveal = can_reveal and self.mask is not None
        self.slow_ms = settings.SLOW_TOOL_CALL_MS
        self.slow_threshold = duration(self.slow_ms)
        self.zone = timezone.get_current_timezone()
        self.pairs = pairs_by_message(page)
        self.at_prefix = permalink_prefix(session_id)
        # A value's raw download: session_url(id, "messages/<n>/<column>", raw=1) for n = 0,
        # cut where the message id goes (the id itself is quoted before it, never after).
        self.raw_urls = {
            column: _split_at(
                session_url(session_id, f"messages/0/{column}", raw=1), "/messages/0/"
            )
            for column in ("tool_args", "tool_result")
        }
        self.traces: dict[str, tuple[str, str, str, str]] = {}

    def items(self) -> list[MessageItem]:
        return [self.item(row) for row in self.page.messages]

    def item(self, row: MessageRow) -> MessageItem:
        role_class = row.role if row.role in KNOWN_ROLES else "other"
        classes = f"msg role-{role_class}" + (" anchored" if row.id == self.page.anchor else "")
        ts = row.ts
        item = MessageItem(
            row=row,
            id=str(row.id),
            classes=classes,
            role_class=role_class,
            role=row.role,
            time=_moment(ts, self.zone),
            odd_time=ts if isinstance(ts, OddValue) else "",
            permalink=f"{self.at_prefix}{row.id}#message-{row.id}",
        )
        if row.model_id:
            item.model_id = row.model_id
        if row.trace_id:
            item.trace_id, item.trace_short, item.trace_frames_url, item.trace_external_url = (
                self.trace(row.trace_id)
            )
        if row.span_id:
            item.span_id, item.span_short = row.span_id, short_id(row.span_id)
        call_short = ""
        if row.tool_call_id:
            call_short = short_id(row.tool_call_id)
            item.call_id, item.call_short = row.tool_call_id, call_short
            item.chip = f"chip-{chip_for(row.tool_call_id)}"
            item.pairs = [self.pair_link(pair) for pair in self.pairs.get(row.id, ())]
        if row.content.text and row.content.truncated:
            content = row.content.text
            item.content_truncated = self.truncated(row.id, "content", row.content)
        elif row.tool_result is not None and not row.tool_result.truncated:
            content = content_without_result(row.content.text, row.tool_result.text)
        else:
            content = row.content.text
        # Most messages hold nothing to mask: one test of all their text, not one a value.
        quiet = self.quiet(row, content)
        item.content = content if quiet else self.mask.text(content, html=True)
        has_tool = row.tool_name or row.tool_args is not None or row.tool_result is not None
        if row.role == "tool" or has_tool:
            item.tool = self.tool_card(row, call_short, quiet)
            if item.tool.status == "error":
                classes += " has-error"
        item.classes = classes
        undecodable = undecodable_columns(row)
        if undecodable:
            item.undecodable = ", ".join(undecodable)
        if self.can_reveal and not quiet:
            item.revealable = _masks_something(item)
        return item

    def trace(self, trace_id: str) -> tuple[str, str, str, str]:
        """A trace's id, short id, frames link and external link: a trace spans many
        messages."""
        found = self.traces.get(trace_id)
        if found is None:
            frames, external = trace_urls(self.session_id, trace_id)
            found = self.traces[trace_id] = (trace_id, short_id(trace_id), frames, external)
        return found

    def pair_link(self, pair: Pair) -> PairLink:
        anchor = f"#message-{pair.id}"
        # Off the page: a permalink without the filters, which might hide the partner.
        href = anchor if pair.on_page else f"{self.at_prefix}{pair.id}{anchor}"
        if pair.above:
            label = "call ↑" if pair.role != "tool" else "earlier result ↑"
        else:
            label = "result ↓" if pair.role == "tool" else "same call ↓"
        return PairLink(str(pair.id), pair.role, href, label)

    def quiet(self, row: MessageRow, content: str) -> bool:
        """Nothing in the message's shown text or tool values needs masking (True also
        when masking is off). Its tool values must be JSON text without escapes, so that
        the values they parse to are as quiet as their text (:meth:`Masker.quiet_json`)."""
        if self.mask is None:
            return True
        values = [v.text for v in (row.tool_args, row.tool_result) if v is not None]
        return type(content) is str and self.mask.quiet_texts([content], values)

    def tool_card(self, row: MessageRow, call_short: str, quiet: bool = False) -> ToolCard:
        blocks: list[JsonBlock] = []
        if row.tool_args is not None:
            blocks.append(self.json_block(row, "args", "tool_args", row.tool_args, quiet))
        error = False
        if row.tool_result is not None:
            result = self.json_block(row, "result", "tool_result", row.tool_result, quiet)
            blocks.append(result)
            error = result.error
        # An odd duration (text, a BLOB) is shown as what it is, never compared.
        slow = type(row.tool_duration_ms) is int and row.tool_duration_ms >= self.slow_ms
        classes = "tool-card" + (" tool-error" if error else "") + (" tool-slow" if slow else "")
        status = "error" if error else "ok" if row.tool_result is not None else ""
        return ToolCard(
            classes=classes,
            name=row.tool_name,
            target=row.tool_target,
            op=row.tool_op,
            duration="" if row.tool_duration_ms is None else duration(row.tool_duration_ms),
            slow=slow,
            slow_threshold=self.slow_threshold,
            call_id=row.tool_call_id,
            call_short=call_short,
            status=status,
            blocks=blocks,
        )

    def json_block(
        self, row: MessageRow, label: str, column: str, value: Value, quiet: bool = False
    ) -> JsonBlock:
        """A tool value: highlighted when it is a JSON object or array, else raw and marked
        (``quiet``: the message was found to hold nothing to mask)."""
        # Quiet JSON text holds nothing to mask, as text or as the value it parses to.
        quiet = quiet or self.mask is None or self.mask.quiet_json(value.text)
        text = value.text if quiet else self.mask.text(value.text, html=True)
        block = JsonBlock(
            label=label,
            dom_id=f"value-{row.id}-{column}",
            summary=_summary(text),
            text=text,
        )
        is_result = column == "tool_result"
        if value.truncated:
            block.mark = "truncated"
            block.error = bool(is_result and row.result_error)
            block.truncated = self.truncated(row.id, column, value)
            return block
        head, tail = self.raw_urls[column]
        block.raw_url = f"{head}/messages/{row.id}/{tail}"
        if isinstance(value.text, Undecodable):
            block.mark, block.broken = Undecodable.MARK, True
            return block
        if isinstance(value.text, OddValue):  # a BLOB or a number: its description is shown
            block.mark, block.broken = "not JSON text", True
            return block
        parsed = parse_json_text(value.text)
        if parsed is None or not parsed.valid:
            block.mark, block.broken = "not valid JSON", True
            return block
        if isinstance(parsed.value, dict | list):
            shown = parsed.value if quiet else self.mask.value(parsed.value, html=True)
            block.html = json_html.highlight(shown)
        else:
            block.mark = f"JSON {json_html.json_kind(parsed.value)}, not an object"
        block.error = is_result and parsed.reports_error
        return block

    def truncated(self, message_id: int, column: str, value: Value) -> Truncated:
        sub = f"messages/{message_id}/{column}"
        return Truncated(
            dom_id=f"value-{message_id}-{column}",
            full_url=session_url(self.session_id, sub),
            raw_url=session_url(self.session_id, sub, raw=1),
            size=file_size(value.size),
        )


def message_items(
    session_id: str, page: MessagePage, *, reveal: bool = False, can_reveal: bool = False
) -> list[MessageItem]:
    """The items of one page of the transcript, ready for the ``messages`` partial
    (hidden values masked unless ``reveal``; a reveal button where ``can_reveal``)."""
    return MessageItems(session_id, page, reveal=reveal, can_reveal=can_reveal).items()


# -- the outline of tool calls ---------------------------------------------------

#: A bar is never thinner than this, so an instant call still shows.
OUTLINE_MIN_BAR = 2.0


@dataclass
class Outline(Fields):
    bars: list[OutlineBar]
    failed: int
    slow: int
    #: Some calls ran at the same time: their bars start where they started (a waterfall).
    overlapping: bool
    cut: bool
    long_session: bool
    max_messages: int
    slow_threshold: str
    rows_html: SafeString = field(default_factory=lambda: safe_html(""))


def _intervals(calls: list[OutlineCall]) -> list[tuple[int, int] | None]:
    """(start, end) of each call in ms, the call ending when its row was written."""
    spans: list[tuple[int, int] | None] = []
    for call in calls:
        if type(call.ts) is int and call.duration_ms is not None:
            spans.append((call.ts - call.duration_ms, call.ts))
        else:
            spans.append(None)
    return spans


def _clusters(spans: list[tuple[int, int] | None]) -> list[tuple[int, int] | None]:
    """For each call, the (start, end) of the run of calls overlapping it in time.

    Calls are in the order they were written, so a run is consecutive calls
    each starting before the run so far has ended.
    """
    clusters: list[tuple[int, int] | None] = []
    run: list[int] = []
    run_start = run_end = 0

    def close() -> None:
        for index in run:
            clusters[index] = (run_start, run_end)

    for index, span in enumerate(spans):
        clusters.append(None)
        if span is None:
            continue
        start, end = span
        if run and start < run_end:
            run.append(index)
            run_start, run_end = min(run_start, start), max(run_end, end)
            continue
        close()
        run, run_start, run_end = [index], start, end
    close()
    return clusters


def tool_outline(session_id: str, rows: OutlineRows, on_page: set[int], slow_ms: int) -> Outline:
    """The outline above the messages: one bar a call, on one scale of time.

    A bar is as long as its call took; the longest run of overlapping calls
    (often one call alone) spans the full width. Calls that overlapped start
    where they started inside their run, so a run reads as a waterfall.
    """
    spans = _intervals(rows.calls)
    clusters = _clusters(spans)
    scale = max((c[1] - c[0] for c in clusters if c is not None), default=0) or 1
    at_prefix = permalink_prefix(session_id)
    bars: list[OutlineBar] = []
    failed = slow = 0
    overlapping = False
    for call, span, cluster in zip(rows.calls, spans, clusters, strict=True):
        is_slow = call.duration_ms is not None and call.duration_ms >= slow_ms
        failed += call.failed
        slow += is_slow
        x = width = 0.0
        if span is not None and cluster is not None:
            overlapping = overlapping or cluster != span
            x = (span[0] - cluster[0]) * OUTLINE_WIDTH / scale
            width = max((span[1] - span[0]) * OUTLINE_WIDTH / scale, OUTLINE_MIN_BAR)
            x = min(x, OUTLINE_WIDTH - width)
        anchor = f"#message-{call.message_id}"
        href = anchor if call.message_id in on_page else f"{at_prefix}{call.message_id}{anchor}"
        classes = (
            "outline-call" + (" is-error" if call.failed else "") + (" is-slow" if is_slow else "")
        )
        bars.append(
            OutlineBar(
                id=str(call.message_id),
                name=call.name,
                href=href,
                duration="" if call.duration_ms is None else duration(call.duration_ms),
                classes=classes,
                x=f"{x:.1f}",
                width=f"{width:.1f}",
                drawn=span is not None,
                failed=call.failed,
            )
        )
    return Outline(
        bars=bars,
        failed=failed,
        slow=slow,
        overlapping=overlapping,
        cut=rows.cut,
        long_session=rows.long_session,
        max_messages=OUTLINE_MESSAGES,
        slow_threshold=duration(slow_ms),
        rows_html=render_outline_rows(bars, at_prefix),
    )
