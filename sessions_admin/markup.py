"""The one escaping rule for the HTML still built in Python.

Two places build markup in Python, each for a reason given in its docstring: JSON
highlighting (:mod:`sessions_admin.views.jsonhtml`, a walk over the value) and the
session list's rows (:mod:`sessions_admin.views.sessionrows`, a benchmark) and the
transcript outline's rows (:func:`sessions_admin.views.transcript_items.render_outline_rows`,
a benchmark); the
``<time>`` tags of :mod:`sessions_admin.templatetags` hold no store text. Each passes
every value through :func:`esc` and only then marks the joined result safe with
:func:`safe_html`. Everything else is markup in templates, escaped by Django.
"""

from __future__ import annotations

import html

from django.utils.safestring import SafeString, mark_safe


def esc(value: object) -> str:
    """``value`` as text for HTML, safe in element content and in quoted attributes
    (the same characters Django's ``escape`` replaces, quotes included)."""
    return html.escape(str(value), quote=True)


def safe_html(markup: str) -> SafeString:
    """Mark Python-built markup safe: only for strings whose every value went through
    :func:`esc` (or is a number or class name we made)."""
    return mark_safe(markup)  # noqa: S308 - the callers' contract, above
