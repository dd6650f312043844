"""The transcript's message items, rendered to HTML in Python.

Why not a template: the message list is the hot path (100 messages a page,
a 50 ms budget for the whole page on a 50,000-message session), and Django's
template engine spent about 190 µs per message resolving the ~40 variables
and conditions of one item; this module does the same work in about a tenth
of that. The rest of the page stays in ``session.html``.

The rule that makes this safe: every value from the store passes through
:func:`html.escape` (quotes included, so it is safe inside attributes too)
before it is joined with our own tags; URLs are built by
:func:`sessions_admin.ids.session_url` and escaped as well. Only then is the
joined string marked safe.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from datetime import datetime
from html import escape
from urllib.parse import quote

from django.conf import settings
from django.utils import timezone
from django.utils.safestring import SafeString, mark_safe

from sessions_admin.humanize import exact_time
from sessions_admin.ids import session_url
from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.spec import KNOWN_ROLES
from sessions_admin.store.transcript import MessagePage, MessageRow, Value
from sessions_admin.store.values import OddValue
from sessions_admin.templatetags.sessions_admin import duration_ms, filesize, odd_html, short_id
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


def chip_for(call_id: str) -> int:
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


class MessageRenderer:
    """Renders one page's messages; holds what every item shares."""

    def __init__(self, session_id: str, page: MessagePage) -> None:
        self.session_id = session_id
        self.page = page
        self.slow_ms = settings.SLOW_TOOL_CALL_MS
        self.zone = timezone.get_current_timezone()
        self.pairs = pairs_by_message(page)

    def render(self) -> SafeString:
        return mark_safe("".join(self.item(row) for row in self.page.messages))  # all escaped

    # -- one message -------------------------------------------------------------

    def item(self, row: MessageRow) -> str:
        role_class = row.role if row.role in KNOWN_ROLES else "other"
        classes = f"msg role-{role_class}"
        if row.id == self.page.anchor:
            classes += " anchored"
        parts = [f'<li id="message-{row.id}" class="{classes}">', self.head(row, role_class)]
        if row.content.text:
            parts.append(
                f'<div class="msg-body" id="value-{row.id}-content">'
                f'<pre class="content">{escape(row.content.text)}</pre>'
            )
            if row.content.truncated:
                parts.append(self.truncated(row.id, "content", row.content))
            parts.append("</div>")
        if (
            row.role == "tool"
            or row.tool_name
            or row.tool_args is not None
            or row.tool_result is not None
        ):
            parts.append(self.tool_card(row))
        parts.append("</li>")
        return "".join(parts)

    def head(self, row: MessageRow, role_class: str) -> str:
        sid = self.session_id
        parts = [
            '<div class="msg-head">',
            f'<span class="role role-{role_class}">{escape(row.role)}</span>',
            self.time(row.ts),
        ]
        if row.model_id:
            parts.append(f'<span class="meta">model <code>{escape(row.model_id)}</code></span>')
        if row.trace_id:
            frames, external = trace_urls(sid, row.trace_id)
            trace = escape(row.trace_id)
            parts.append(
                f'<span class="meta">trace <a href="{escape(frames)}" '
                f'title="Activity frames of trace {trace}"><code>{escape(short_id(row.trace_id))}'
                f"</code></a>"
            )
            if external:
                parts.append(
                    f' <a href="{escape(external)}" rel="noopener noreferrer" '
                    f'target="_blank" title="Open trace {trace} in the trace viewer">'
                    f"trace viewer ↗</a>"
                )
            parts.append("</span>")
        if row.span_id:
            parts.append(
                f'<span class="meta">span <code title="{escape(row.span_id)}">'
                f"{escape(short_id(row.span_id))}</code></span>"
            )
        if row.tool_call_id:
            chip = chip_for(row.tool_call_id)
            parts.append(
                f'<span class="chip chip-{chip}" title="tool call id '
                f'{escape(row.tool_call_id)}">{escape(short_id(row.tool_call_id))}</span>'
            )
            for pair in self.pairs.get(row.id, ()):
                parts.append(self.pair_link(pair, chip))
        permalink = session_url(sid, at=row.id) + f"#message-{row.id}"
        parts.append(
            f'<a class="permalink" href="{escape(permalink)}" '
            f'title="Permalink to this message">#{row.id}</a></div>'
        )
        return "".join(parts)

    def time(self, ts: int | OddValue) -> str:
        if isinstance(ts, OddValue):
            return odd_html(ts)
        try:
            moment = datetime.fromtimestamp(ts / 1000, tz=self.zone)
        except (OverflowError, OSError, ValueError, TypeError):
            return '<span class="muted">—</span>'
        exact = exact_time(moment)
        return (
            f'<time datetime="{moment.isoformat()}" title="{escape(exact)}">'
            f"{moment.strftime('%Y-%m-%d %H:%M:%S')}</time>"
        )

    def pair_link(self, pair: Pair, chip: int) -> str:
        anchor = f"#message-{pair.id}"
        # Off the page: a permalink without the filters, which might hide the partner.
        href = anchor if pair.on_page else session_url(self.session_id, at=pair.id) + anchor
        if pair.above:
            label = "call ↑" if pair.role != "tool" else "earlier result ↑"
        else:
            label = "result ↓" if pair.role == "tool" else "same call ↓"
        return (
            f' <a class="pair chip-{chip}" href="{escape(href)}" title="message {pair.id} '
            f'({escape(pair.role)}) has the same call id">{label}</a>'
        )

    # -- tool calls -------------------------------------------------------------

    def tool_card(self, row: MessageRow) -> str:
        blocks: list[str] = []
        error = False
        if row.tool_args is not None:
            html, _ = self.json_block(row, "args", "tool_args", row.tool_args)
            blocks.append(html)
        if row.tool_result is not None:
            html, error = self.json_block(row, "result", "tool_result", row.tool_result)
            blocks.append(html)
        # An odd duration (text, a BLOB) is shown as what it is, never compared.
        slow = type(row.tool_duration_ms) is int and row.tool_duration_ms >= self.slow_ms
        classes = "tool-card" + (" tool-error" if error else "") + (" tool-slow" if slow else "")
        name = (
            f'<span class="tool-name">{escape(row.tool_name)}</span>'
            if row.tool_name
            else '<span class="tool-name muted">(no tool name)</span>'
        )
        head = [f'<div class="{classes}"><div class="tool-head">', name]
        if row.tool_target:
            head.append(f' → <span class="tool-target">{escape(row.tool_target)}</span>')
        if row.tool_op:
            head.append(f' · <span class="tool-op">{escape(row.tool_op)}</span>')
        if row.tool_duration_ms is not None:
            label = escape(duration_ms(row.tool_duration_ms))
            if slow:
                head.append(
                    f' · <span class="duration slow" title="slower than '
                    f'{escape(duration_ms(self.slow_ms))}">{label} · slow</span>'
                )
            else:
                head.append(f' · <span class="duration">{label}</span>')
        if row.tool_call_id:
            call = escape(row.tool_call_id)
            head.append(
                f' · call <span class="id"><code title="{call}">'
                f'{escape(short_id(row.tool_call_id))}</code><button type="button" '
                f'class="copy" data-copy="{call}" aria-label="Copy id {call}">copy'
                f"</button></span>"
            )
        if error:
            head.append('<span class="status status-error">✗ error</span>')
        elif row.tool_result is not None:
            head.append('<span class="status status-ok">✓ ok</span>')
        head.append("</div>")
        return "".join(head) + "".join(blocks) + "</div>"

    def json_block(
        self, row: MessageRow, label: str, column: str, value: Value
    ) -> tuple[str, bool]:
        """A collapsible ``args``/``result`` block, and whether it reports an error."""
        is_result = column == "tool_result"
        mark = ""
        broken = error = False
        body = ""
        if value.truncated:
            mark = "truncated"
            error = bool(is_result and row.result_error)
        elif isinstance(value.text, OddValue):
            mark, broken = "not JSON text", True
        else:
            parsed = parse_json_text(value.text)
            if parsed is None or not parsed.valid:
                mark, broken = "not valid JSON", True
            else:
                if isinstance(parsed.value, dict | list):
                    highlighted = jsonhtml.highlight(parsed.value)
                    if highlighted is not None:
                        body = f'<pre class="json">{highlighted}</pre>'
                else:
                    mark = f"JSON {jsonhtml.json_kind(parsed.value)}, not an object"
                error = is_result and parsed.reports_error
        if not body:
            body = f'<pre class="json raw">{escape(value.text)}</pre>'
        marks = ""
        if mark:
            marks += f' <span class="mark{" mark-broken" if broken else ""}">{escape(mark)}</span>'
        if error:
            marks += ' <span class="mark mark-error">reports an error</span>'
        if value.truncated:
            actions = self.truncated(row.id, column, value)
        else:
            raw = session_url(self.session_id, f"messages/{row.id}/{column}", raw=1)
            actions = f'<p class="value-actions"><a href="{escape(raw)}" download>raw</a></p>'
        html = (
            f'<details class="json-block{" is-error" if error else ""}"><summary>'
            f'<span class="json-label">{label}</span> '
            f'<code class="json-summary">{escape(_summary(value.text))}</code>{marks}</summary>'
            f'<div id="value-{row.id}-{column}">{body}{actions}</div></details>'
        )
        return html, error

    def truncated(self, message_id: int, column: str, value: Value) -> str:
        sub = f"messages/{message_id}/{column}"
        full = escape(session_url(self.session_id, sub))
        raw = escape(session_url(self.session_id, sub, raw=1))
        size = escape(filesize(value.size))
        return (
            f'<p class="truncated-note">Only the start is shown ({size} in full). '
            f'<a class="button" href="{full}" hx-get="{full}" '
            f'hx-target="#value-{message_id}-{column}" hx-swap="innerHTML">show full ({size})</a> '
            f'<a class="button" href="{raw}" download>raw</a></p>'
        )


def _summary(text: str) -> str:
    line = " ".join(text[: SUMMARY_CHARS * 2].split())
    return line if len(line) <= SUMMARY_CHARS else line[: SUMMARY_CHARS - 1] + "…"


def render_messages(session_id: str, page: MessagePage) -> SafeString:
    return MessageRenderer(session_id, page).render()
