"""The transcript's message items, prepared for ``session.html``'s ``messages`` partial.

Everything a message item shows is worked out here, once, as plain values (texts,
URLs, CSS classes, flags); the template only places them, and escapes every one.
The one piece of markup made in Python is a tool value's JSON highlighting
(:func:`sessions_admin.views.jsonhtml.highlight`), which walks the value.

The template costs more than the Python strings it replaced, within the page's goal:
``bench/bench_transcript.py`` puts the first render of a 50,000-message session at
20.5 ms median (9.2 ms as Python strings; goal 50 ms), 2026-12-01 on the shared
2-core machine.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from datetime import datetime, tzinfo
from urllib.parse import quote

from django.conf import settings
from django.utils import timezone
from django.utils.safestring import SafeString

from sessions_admin.humanize import duration, exact_time, file_size
from sessions_admin.ids import session_url
from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.transcript import MessagePage, MessageRow, Value
from sessions_admin.store.values import OddValue, Undecodable
from sessions_admin.templatetags.sessions_admin import short_id
from sessions_admin.views import jsonhtml

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
class PairLink:
    id: str
    role: str
    href: str
    label: str


@dataclass(frozen=True)
class Moment:
    iso: str
    exact: str
    shown: str


@dataclass(frozen=True)
class Truncated:
    """The note under a value the page only has the head of."""

    dom_id: str
    full_url: str
    raw_url: str
    size: str


@dataclass
class JsonBlock:
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
class ToolCard:
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
class MessageItem:
    row: MessageRow
    #: The message id as text: the template engine localizes every number it prints.
    id: str
    classes: str
    role_class: str
    time: Moment | None
    permalink: str
    trace_short: str = ""
    trace_frames_url: str = ""
    trace_external_url: str = ""
    span_short: str = ""
    call_short: str = ""
    chip: str = ""
    pairs: list[PairLink] = field(default_factory=list)
    content_truncated: Truncated | None = None
    tool: ToolCard | None = None
    #: The message's columns whose text is not valid UTF-8 (shown with U+FFFD).
    undecodable: list[str] = field(default_factory=list)
    #: Reviewers' notes on this message (markup, views.notes.message_notes_html), and
    #: the link that writes one ("" without "Can annotate"); set by the session view.
    notes_html: str = ""
    note_url: str = ""


def chip_for(call_id: str) -> int:
    """The colour of a tool call's chip, the same on every page (``hash()`` is salted)."""
    return zlib.crc32(call_id.encode("utf-8", "replace")) % CHIP_COLOURS


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
    return Moment(moment.isoformat(), exact_time(moment), f"{moment:%Y-%m-%d %H:%M:%S}")


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


def _summary(text: str) -> str:
    line = " ".join(text[: SUMMARY_CHARS * 2].split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


class MessageItems:
    """Prepares one page's messages; holds what every item shares."""

    def __init__(self, session_id: str, page: MessagePage) -> None:
        self.session_id = session_id
        self.page = page
        self.slow_ms = settings.SLOW_TOOL_CALL_MS
        self.zone = timezone.get_current_timezone()
        self.pairs = pairs_by_message(page)

    def items(self) -> list[MessageItem]:
        return [self.item(row) for row in self.page.messages]

    def item(self, row: MessageRow) -> MessageItem:
        sid = self.session_id
        role_class = row.role if row.role in KNOWN_ROLES else "other"
        classes = f"msg role-{role_class}" + (" anchored" if row.id == self.page.anchor else "")
        item = MessageItem(
            row=row,
            id=str(row.id),
            classes=classes,
            role_class=role_class,
            time=_moment(row.ts, self.zone),
            permalink=session_url(sid, at=row.id) + f"#message-{row.id}",
            undecodable=undecodable_columns(row),
        )
        if row.trace_id:
            item.trace_short = short_id(row.trace_id)
            item.trace_frames_url, item.trace_external_url = trace_urls(sid, row.trace_id)
        if row.span_id:
            item.span_short = short_id(row.span_id)
        if row.tool_call_id:
            item.call_short = short_id(row.tool_call_id)
            item.chip = f"chip-{chip_for(row.tool_call_id)}"
            item.pairs = [self.pair_link(pair) for pair in self.pairs.get(row.id, ())]
        if row.content.text and row.content.truncated:
            item.content_truncated = self.truncated(row.id, "content", row.content)
        has_tool = row.tool_name or row.tool_args is not None or row.tool_result is not None
        if row.role == "tool" or has_tool:
            item.tool = self.tool_card(row)
        return item

    def pair_link(self, pair: Pair) -> PairLink:
        anchor = f"#message-{pair.id}"
        # Off the page: a permalink without the filters, which might hide the partner.
        href = anchor if pair.on_page else session_url(self.session_id, at=pair.id) + anchor
        if pair.above:
            label = "call ↑" if pair.role != "tool" else "earlier result ↑"
        else:
            label = "result ↓" if pair.role == "tool" else "same call ↓"
        return PairLink(str(pair.id), pair.role, href, label)

    def tool_card(self, row: MessageRow) -> ToolCard:
        blocks: list[JsonBlock] = []
        if row.tool_args is not None:
            blocks.append(self.json_block(row, "args", "tool_args", row.tool_args))
        error = False
        if row.tool_result is not None:
            result = self.json_block(row, "result", "tool_result", row.tool_result)
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
            slow_threshold=duration(self.slow_ms),
            call_id=row.tool_call_id,
            call_short=short_id(row.tool_call_id) if row.tool_call_id else "",
            status=status,
            blocks=blocks,
        )

    def json_block(self, row: MessageRow, label: str, column: str, value: Value) -> JsonBlock:
        """A tool value: highlighted when it is a JSON object or array, else raw and marked."""
        block = JsonBlock(
            label=label,
            dom_id=f"value-{row.id}-{column}",
            summary=_summary(value.text),
            text=value.text,
        )
        is_result = column == "tool_result"
        if value.truncated:
            block.mark = "truncated"
            block.error = bool(is_result and row.result_error)
            block.truncated = self.truncated(row.id, column, value)
            return block
        block.raw_url = session_url(self.session_id, f"messages/{row.id}/{column}", raw=1)
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
            block.html = jsonhtml.highlight(parsed.value)
        else:
            block.mark = f"JSON {jsonhtml.json_kind(parsed.value)}, not an object"
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


def message_items(session_id: str, page: MessagePage) -> list[MessageItem]:
    """The items of one page of the transcript, ready for the ``messages`` partial."""
    return MessageItems(session_id, page).items()
