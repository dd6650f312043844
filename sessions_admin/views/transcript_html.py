"""The transcript's messages rendered to HTML in Python, from their prepared items.

Why not the template: issue 19 asks for the first page of a 50,000-message
session, its outline included, in under 25 ms, and two thirds of the page's time
went to placing some 4,800 template variables and conditions (100 messages of
about 50 values each); these functions write the same markup, byte for byte, in
a fraction of it (``bench/bench_transcript.py``). ``format_html`` would escape
each argument through Django's lazy-text wrapper, so the
rule here is the one of :mod:`sessions_admin.markup`: every value from the store
goes through :func:`~sessions_admin.markup.esc` where it is joined with our
tags; only the joined string is marked safe.

What each item shows (texts, URLs, classes, flags) is still worked out in
:mod:`sessions_admin.views.transcript_items`; this module only places it.
"""

from __future__ import annotations

from django.utils.safestring import SafeString

from sessions_admin.markup import esc, safe_html
from sessions_admin.masking import mark_html
from sessions_admin.templatetags.sessions_admin import odd_html
from sessions_admin.views.transcript_items import (
    JsonBlock,
    MessageItem,
    PairLink,
    ToolCard,
    Truncated,
)

#: The head's parts sit on lines of their own, as the template had them: the
#: line break between two inline parts reads as the space between them.
_HEAD_BREAK = "\n      "


def messages_html(items: list[MessageItem], has_frames: bool) -> SafeString:
    """The ``<li>`` of every message of a page, for the ``messages`` partial."""
    return safe_html("".join([f"\n    {message_html(m, has_frames)}\n    " for m in items]))


def message_html(m: MessageItem, has_frames: bool) -> str:
    """One message: its head (role, time, ids, links, buttons), notes, content, tool card."""
    mid = esc(m.id)
    head = _HEAD_BREAK.join(
        (
            f'<li id="message-{mid}" class="{esc(m.classes)}"><div class="msg-head">'
            f'<span class="role role-{esc(m.role_class)}">{esc(m.role)}</span>{_time(m)}',
            f'<span class="meta">model <code>{esc(m.model_id)}</code></span>' if m.model_id else "",
            _trace(m, has_frames) if m.trace_id else "",
            f'<span class="meta">span <code title="{esc(m.span_id)}">{esc(m.span_short)}</code>'
            "</span>"
            if m.span_id
            else "",
            _chip(m) if m.call_id else "",
            '<span class="mark mark-broken" title="Bytes that are not UTF-8 are shown as �">'
            f"not valid UTF-8: {esc(m.undecodable)}</span>"
            if m.undecodable
            else "",
            _copy_text(m) if m.content else "",
            f'<a class="permalink" href="{esc(m.permalink)}" title="Permalink to this message">'
            f'#{mid}</a><button type="button" class="copy" data-copy-link>copy link</button>'
            f"{_note_link(m.note_url, mid)}{_reveal_button(mid) if m.revealable else ''}</div>",
        )
    )
    # Notes are markup already (views.notes_html.notes_beside_messages escapes their values).
    body = _body(m, mid) if m.content else ""
    tool = _tool_card(m.tool) if m.tool is not None else ""
    return f"{head}{_HEAD_BREAK}{m.notes_html}{_HEAD_BREAK}{body}{_HEAD_BREAK}{tool}\n    </li>"


def _reveal_button(mid: str) -> str:
    """Opens the page's one reveal form for this message (review.js), asking a reason."""
    return (
        f'<button type="button" class="reveal-button" data-reveal-message="{mid}" '
        f'aria-controls="reveal-form">reveal…</button>'
    )


def _time(m: MessageItem) -> str:
    if m.time is not None:
        t = m.time
        return f'<time datetime="{esc(t.iso)}" title="{esc(t.exact)}">{esc(t.shown)}</time>'
    if m.odd_time:
        return odd_html(m.odd_time)  # escaped in odd_html
    return '<span class="muted">—</span>'


def _trace(m: MessageItem, has_frames: bool) -> str:
    trace, short = esc(m.trace_id), esc(m.trace_short)
    if has_frames:
        link = (
            f'<a href="{esc(m.trace_frames_url)}" title="Activity frames of trace {trace}">'
            f"<code>{short}</code></a>"
        )
    else:  # trace links to frames that are not on disk would lead nowhere
        link = f'<code title="trace {trace} (no activity frames on disk)">{short}</code>'
    external = (
        f' <a href="{esc(m.trace_external_url)}" rel="noopener noreferrer" target="_blank" '
        f'title="Open trace {trace} in the trace viewer">trace viewer ↗</a>'
        if m.trace_external_url
        else ""
    )
    return f'<span class="meta">trace {link}{external}</span>'


def _chip(m: MessageItem) -> str:
    chip = esc(m.chip)
    pairs = "".join([_pair(pair, chip) for pair in m.pairs])
    return (
        f'<span class="chip {chip}" title="tool call id {esc(m.call_id)}">'
        f"{esc(m.call_short)}</span>{pairs}"
    )


def _pair(pair: PairLink, chip: str) -> str:
    return (
        f' <a class="pair {chip}" href="{esc(pair.href)}" title="message {esc(pair.id)} '
        f'({esc(pair.role)}) has the same call id">{esc(pair.label)}</a>'
    )


def _copy_text(m: MessageItem) -> str:
    # The copy buttons find what they copy from where they are (app.js): no id to repeat.
    what = (
        f'data-copy-url="{esc(m.content_truncated.raw_url)}"'
        if m.content_truncated is not None
        else "data-copy-message"
    )
    return f'<button type="button" class="copy" {what}>copy text</button>'


def _note_link(note_url: str, mid: str) -> str:
    if not note_url:  # the reader may not annotate
        return ""
    return (
        f' <a class="note-link" href="{esc(note_url)}" data-note-message="{mid}" '
        'title="Write a note on this message (n)">note</a>'
    )


def _body(m: MessageItem, mid: str) -> str:
    note = _truncated_note(m.content_truncated) if m.content_truncated is not None else ""
    return (
        f'<div class="msg-body" id="value-{mid}-content"><pre class="content">'
        f"{mark_html(esc(m.content))}</pre>{note}</div>"
    )


def _truncated_note(t: Truncated) -> str:
    """Under a value the page has only the head of: its size, the whole of it, raw, copy."""
    size, full, raw = esc(t.size), esc(t.full_url), esc(t.raw_url)
    return (
        f'<p class="truncated-note">Only the start is shown ({size} in full). '
        f'<a class="button" href="{full}" hx-get="{full}" hx-target="#{esc(t.dom_id)}" '
        f'hx-swap="innerHTML">show full ({size})</a> '
        f'<a class="button" href="{raw}" download>raw</a> '
        f'<button type="button" class="copy" data-copy-url="{raw}" '
        f'aria-label="Copy the whole value ({size})">copy all</button></p>'
    )


def _tool_card(c: ToolCard) -> str:
    parts = [
        f'<div class="{esc(c.classes)}"><div class="tool-head">',
        f'<span class="tool-name">{esc(c.name)}</span>'
        if c.name
        else '<span class="tool-name muted">(no tool name)</span>',
    ]
    if c.target:
        parts.append(f' → <span class="tool-target">{esc(c.target)}</span>')
    if c.op:
        parts.append(f' · <span class="tool-op">{esc(c.op)}</span>')
    if c.duration and c.slow:
        parts.append(
            f' · <span class="duration slow" title="slower than {esc(c.slow_threshold)}">'
            f"{esc(c.duration)} · slow</span>"
        )
    elif c.duration:
        parts.append(f' · <span class="duration">{esc(c.duration)}</span>')
    if c.call_id:
        call = esc(c.call_id)
        parts.append(
            f' · call <span class="id"><code title="{call}">{esc(c.call_short)}</code>'
            f'<button type="button" class="copy" data-copy="{call}" aria-label="Copy id {call}">'
            "copy</button></span>"
        )
    if c.status == "error":
        parts.append('<span class="status status-error">✗ error</span>')
    elif c.status == "ok":
        parts.append('<span class="status status-ok">✓ ok</span>')
    parts.append("</div>\n        ")
    parts.extend([_json_block(b) for b in c.blocks])
    parts.append("</div>")
    return "".join(parts)


def _json_block(b: JsonBlock) -> str:
    """An ``args``/``result`` value, collapsed: its one-line summary, then the value."""
    label = esc(b.label)
    mark = (
        f' <span class="mark{" mark-broken" if b.broken else ""}">{esc(b.mark)}</span>'
        if b.mark
        else ""
    )
    error = ' <span class="mark mark-error">reports an error</span>' if b.error else ""
    # The highlighted JSON is markup already (views.json_html.highlight escapes its values).
    value = (
        f'<pre class="json">{b.html}</pre>'
        if b.html
        else f'<pre class="json raw">{mark_html(esc(b.text))}</pre>'
    )
    actions = (
        _truncated_note(b.truncated)
        if b.truncated is not None
        else f'<p class="value-actions"><a href="{esc(b.raw_url)}" download>raw</a> '
        f'<button type="button" class="copy" data-copy-value>copy {label}</button></p>'
    )
    return (
        f'<details class="json-block{" is-error" if b.error else ""}"><summary>'
        f'<span class="json-label">{label}</span> '
        f'<code class="json-summary">{mark_html(esc(b.summary))}</code>{mark}{error}</summary>'
        f'<div id="{esc(b.dom_id)}">{value}{actions}</div></details>'
    )
