"""The transcript outline's rows as HTML, built in Python rather than in ``session.html``.

The template spent about 7 ms placing 300 rows, a third of the page's budget;
these strings take about 0.3 ms (``bench/bench_transcript.py`` times the page).
Every value from the store (the tool name, the link before its
``#message-<id>``) goes through :func:`~sessions_admin.markup.esc`; the rest are
numbers, a duration and class names made by
:mod:`sessions_admin.views.transcript_items`.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.utils.safestring import SafeString

from sessions_admin.markup import esc, safe_html

#: The outline's bars are drawn in an SVG this many units wide (stretched to the column).
OUTLINE_WIDTH = 1000


@dataclass(slots=True)  # not frozen: a frozen __init__ costs ~2 µs more, 300 times a page
class OutlineBar:
    """One call of the outline: its row's label and its bar's place (SVG units)."""

    id: str
    name: str
    href: str
    duration: str
    classes: str
    x: str
    width: str
    #: Whether a bar is drawn (a call without a time or a duration has none).
    drawn: bool
    failed: bool


def _outline_row(bar: OutlineBar, names: dict[str, str], prefix: tuple[str, str]) -> str:
    # A session calls a few tools many times: each name is escaped once (``names``, a
    # cache of its own: a tool may be called anything, "prefix" included).
    name = names.get(bar.name)
    if name is None:
        name = names[bar.name] = esc(bar.name)
    # A link is "#message-<id>" or a permalink: one prefix for the page, then digits.
    raw, prefix_html = prefix
    if bar.href.startswith("#"):
        href = bar.href
    elif bar.href.startswith(raw):
        href = prefix_html + bar.href[len(raw) :]
    else:
        href = esc(bar.href)
    rect = f'<rect x="{bar.x}" width="{bar.width}" height="10"/>' if bar.drawn else ""
    failed = " ✗ failed" if bar.failed else ""
    return (
        f'<li class="{bar.classes}"><a href="{href}">'
        f'<span class="outline-name">{name}</span>'
        f'<svg class="outline-bar" viewBox="0 0 {OUTLINE_WIDTH} 10" preserveAspectRatio="none" '
        f'aria-hidden="true">{rect}</svg>'
        f'<span class="outline-duration">{bar.duration or "—"}{failed}</span></a></li>'
    )


def render_outline_rows(bars: list[OutlineBar], at_prefix: str = "") -> SafeString:
    """The outline's rows, every value escaped (see the module's docstring)."""
    names: dict[str, str] = {}
    prefix = (at_prefix or "\0", esc(at_prefix))
    return safe_html("".join(_outline_row(bar, names, prefix) for bar in bars))
