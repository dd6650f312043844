"""The one escaping rule for the HTML still built in Python.

Five places build markup in Python, each for a reason given in its docstring: JSON
highlighting (:mod:`sessions_admin.views.jsonhtml`, a walk over the value), the
session list's rows (:mod:`sessions_admin.views.sessionrows`, a benchmark), the
transcript's messages (:mod:`sessions_admin.views.transcript_html`, a benchmark),
the transcript outline's rows
(:func:`sessions_admin.views.transcript_items.render_outline_rows`, a benchmark) and
the notes beside a transcript's messages (:mod:`sessions_admin.views.notes`, a
benchmark); the
``<time>`` tags of :mod:`sessions_admin.templatetags` hold no store text. Each passes
every value through :func:`esc` and only then marks the joined result safe with
:func:`safe_html`. Everything else is markup in templates, escaped by Django.
:func:`linked_text` (a reviewer's note, its web addresses made links) follows the same rule.
"""

from __future__ import annotations

import html
import re

from django.utils.safestring import SafeString, mark_safe


def esc(value: object) -> str:
    """``value`` as text for HTML, safe in element content and in quoted attributes
    (the same characters Django's ``escape`` replaces, quotes included)."""
    return html.escape(str(value), quote=True)


def safe_html(markup: str) -> SafeString:
    """Mark Python-built markup safe: only for strings whose every value went through
    :func:`esc` (or is a number or class name we made)."""
    return mark_safe(markup)  # noqa: S308 - the callers' contract, above


#: A web address in free text: http or https only (never ``javascript:``, ``data:``…),
#: up to the first space, quote or angle bracket.
_WEB_ADDRESS = re.compile(r"https?://[^\s<>\"']+", re.IGNORECASE)
#: Punctuation that ends a sentence rather than the address ("see https://x.example.").
_TRAILING = ".,;:!?)]}"


def linked_text(text: str) -> SafeString:
    """Plain text escaped, its http(s) addresses turned into links (line breaks are kept
    by the page's ``white-space: pre-wrap``)."""
    if "://" not in text:  # no address to link (most notes): one escape
        return safe_html(esc(text))
    parts: list[str] = []
    position = 0
    for match in _WEB_ADDRESS.finditer(text):
        address = match.group(0).rstrip(_TRAILING)
        end = match.start() + len(address)
        parts.append(esc(text[position : match.start()]))
        shown = esc(address)
        parts.append(
            f'<a href="{shown}" rel="noopener noreferrer nofollow" target="_blank">{shown}</a>'
        )
        position = end
    parts.append(esc(text[position:]))
    return safe_html("".join(parts))
