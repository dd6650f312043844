"""JSON from the store as HTML: highlighted pretty-printing and collapsible trees.

Why Python and not a template: this is a recursive walk over a value of any shape,
where a template would need a recursive include per node. Every piece of text that
came from the store goes through :func:`~sessions_admin.markup.esc` before it
is joined with our own tags, so the result can be marked safe: no value, key or
string inside a JSON document is ever read as markup. Highlighting happens here, on
the server, so the page needs no script for it and the CSP stays strict.
"""

from __future__ import annotations

import json
from json.encoder import encode_basestring
from typing import Any

from django.utils.safestring import SafeString

from sessions_admin.markup import esc, safe_html
from sessions_admin.masking import TOO_DEEP, mark_html

#: Trees open their first levels; deeper nodes start collapsed.
TREE_OPEN_DEPTH = 3


def _ascii_safe(text: str) -> str:
    # json.loads turns "\ud800" into a lone surrogate, which UTF-8 cannot
    # encode; show it as the escape it was instead of failing the response.
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _scalar(value: Any) -> str:
    """A JSON scalar as one escaped, classed span."""
    if value is None:
        return '<span class="j-null">null</span>'
    if value is True or value is False:
        return f'<span class="j-bool">{"true" if value else "false"}</span>'
    if isinstance(value, str):
        # encode_basestring is json.dumps(value, ensure_ascii=False) without its
        # encoder object: a page highlights a few thousand strings.
        return f'<span class="j-str">{esc(encode_basestring(value))}</span>'
    if type(value) is int:  # json.dumps writes an int as str() does
        return f'<span class="j-num">{value}</span>'
    if isinstance(value, int | float):
        return f'<span class="j-num">{esc(json.dumps(value))}</span>'
    return f'<span class="j-str">{esc(repr(value))}</span>'


def _key(key: str) -> str:
    return f'<span class="j-key">{esc(encode_basestring(key))}</span>'


def _pretty(value: Any, indent: str, out: list[str]) -> None:
    if isinstance(value, dict | list):
        opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
        if not value:
            out.append(f'<span class="j-punc">{opening}{closing}</span>')
            return
        # (key, item) pairs for an object, (None, item) for an array.
        entries = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        inner = indent + "  "
        out.append(f'<span class="j-punc">{opening}</span>\n')
        last = len(value) - 1
        for index, (key, item) in enumerate(entries):
            out.append(inner)
            if key is not None:
                out.append(_key(key))
                out.append('<span class="j-punc">:</span> ')
            _pretty(item, inner, out)
            out.append('<span class="j-punc">,</span>\n' if index < last else "\n")
        out.append(f'{indent}<span class="j-punc">{closing}</span>')
    else:
        out.append(_scalar(value))


def highlight(value: Any) -> SafeString | None:
    """``value`` pretty-printed like ``json.dumps(indent=2)``, in escaped, classed spans.

    ``None`` when the value is too deeply nested to walk (the caller shows it raw).
    """
    if value is TOO_DEEP:
        return None
    out: list[str] = []
    try:
        _pretty(value, "", out)
    except RecursionError:
        return None
    # Every store string went through esc(); masked values become their spans.
    return safe_html(mark_html(_ascii_safe("".join(out))))


def _count(value: Any) -> str:
    if isinstance(value, dict):
        return f"{{{len(value)} key{'s' if len(value) != 1 else ''}}}"
    return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"


def _tree(value: Any, depth: int, out: list[str]) -> None:
    items = value.items() if isinstance(value, dict) else enumerate(value)
    out.append('<ul class="jt">')
    for key, item in items:
        label = _key(key) if isinstance(value, dict) else f'<span class="j-index">{key}</span>'
        if isinstance(item, dict | list) and item:
            is_open = " open" if depth + 1 < TREE_OPEN_DEPTH else ""
            out.append(
                f'<li><details{is_open}><summary>{label}<span class="j-punc">:</span> '
                f'<span class="j-meta">{_count(item)}</span></summary>'
            )
            _tree(item, depth + 1, out)
            out.append("</details></li>")
        else:
            out.append(f'<li class="jt-leaf">{label}<span class="j-punc">:</span> ')
            out.append(
                _scalar(item)
                if not isinstance(item, dict | list)
                else f'<span class="j-punc">{"{}" if isinstance(item, dict) else "[]"}</span>'
            )
            out.append("</li>")
    out.append("</ul>")


def tree(value: Any) -> SafeString | None:
    """A collapsible tree of nested ``<details>`` for an object or array.

    Scalars get one highlighted span; ``None`` when too deep to walk.
    """
    if value is TOO_DEEP:
        return None
    if not isinstance(value, dict | list) or not value:
        return highlight(value)
    out: list[str] = [
        f'<details class="jt-root" open><summary><span class="j-meta">'
        f"{_count(value)}</span></summary>"
    ]
    try:
        _tree(value, 0, out)
    except RecursionError:
        return None
    out.append("</details>")
    return safe_html(mark_html(_ascii_safe("".join(out))))


def json_kind(value: Any) -> str:
    """The JSON type's name as people say it: object, array, string, number, …"""
    if isinstance(value, dict):
        return "object"
    if isinstance(value, list):
        return "array"
    if isinstance(value, str):
        return "string"
    if value is True or value is False:
        return "boolean"
    if value is None:
        return "null"
    return "number"
