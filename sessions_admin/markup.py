"""The one escaping rule for the HTML still built in Python.

Five places build markup in Python, each a ``views/*_html.py`` module that says why
in its docstring and has its property test (``tests/test_html_builders.py``,
``tests/test_transcript_html.py``): JSON highlighting (:mod:`sessions_admin.views.json_html`, a
walk over the value), the session list's rows (:mod:`sessions_admin.views.sessionrows_html`), the
transcript's messages (:mod:`sessions_admin.views.transcript_html`), the transcript outline's rows
(:mod:`sessions_admin.views.outline_html`) and the notes beside a transcript's messages
(:mod:`sessions_admin.views.notes_html`), the last four for a benchmark; the
``<time>`` tags of :mod:`sessions_admin.templatetags` hold no store text. Each passes
every value through :func:`esc` and only then marks the joined result safe with
:func:`safe_html`. Everything else is markup in templates, escaped by Django.
:func:`linked_text` (a reviewer's note, its web addresses made links) follows the same rule.
"""

from __future__ import annotations

import html
import re

from django.utils.safestring import SafeString


def esc(value: object) -> str:
    """``value`` as text for HTML, safe in element content and in quoted attributes
    (the same characters Django's ``escape`` replaces, quotes included)."""
    return html.escape(str(value), quote=True)


def safe_html(markup: str) -> SafeString:
    """Mark Python-built markup safe: only for strings whose every value went through
    :func:`esc` (or is a number or class name we made)."""
    # SafeString itself, not mark_safe: mark_safe's wrapper (it accepts lazy strings
    # too) cost more than the markup of a note or a short message (bench_review.py).
    return SafeString(markup)


#: A web address in free text: http or https only (never ``javascript:``, ``data:``…),
#: up to the first space, quote or angle bracket, less the punctuation that ends a
#: sentence rather than the address ("see https://x.example."). It is found in the
#: *escaped* text, where those characters are entities (``&quot;``, ``&lt;``…) and
#: ``&`` is ``&amp;``: an address runs on through ``&amp;`` and stops at any other
#: ``&``; its last character is no sentence punctuation (the ";" of ``&amp;`` is not).
_WEB_ADDRESS = re.compile(
    # The look-ahead: an address has a character after "://", as the raw rule reads.
    # Runs of plain characters and whole "&amp;" (no alternation per character: twice
    # as fast), then the last one may be no sentence punctuation unless it ends "&amp;".
    r"https?://(?=[^\s&<>\"']|&amp;)[^\s&<>\"']*(?:&amp;[^\s&<>\"']*)*"
    r"(?:(?<=[^\s&<>\"'.,;:!?)\]}])|(?<=&amp;))",
    re.IGNORECASE,
)
_LINK = r'<a href="\g<0>" rel="noopener noreferrer nofollow" target="_blank">\g<0></a>'


def linked_text(text: str) -> SafeString:
    """Plain text escaped, its http(s) addresses turned into links (line breaks are kept
    by the page's ``white-space: pre-wrap``): :func:`linked_markup`, marked safe."""
    return safe_html(linked_markup(text))


def linked_markup(text: str) -> str:
    """What :func:`linked_text` shows, not yet marked safe: for markup built further in
    Python, marked once when whole (a ``SafeString`` is a copy of its text).

    The text is escaped once, and addresses are found in the escaped text by one
    substitution: a page shows hundreds of notes (issue 20), and escaping each piece
    around each address was a third of a note's cost. Escaping maps each character
    on its own, so an address in the escaped text is exactly the escaped address.
    """
    escaped = esc(text)
    if "://" not in text:  # no address to link (most notes)
        return escaped
    return _WEB_ADDRESS.sub(_LINK, escaped)
