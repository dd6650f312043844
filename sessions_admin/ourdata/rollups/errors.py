"""What a failed tool call failed with, normalised so that alike failures group together.

A failure's **text** is read from the head of its result (the rollups keep
the first characters of each, ``schema.HEAD_CHARS``): the ``error`` member
when the head parses as a JSON object (``code: message`` when ``error`` is an
object with those, else its text), or the ``code`` and ``message`` found in
a head cut short, else the head itself.

**Normalised** means the parts that differ between two calls failing the
same way are replaced: UUIDs, and tokens that look like ids (a run of
letters and digits with a digit in it, of 6 or more characters, such as
``call_9f3ab2c4``, ``sess_01J8…``, ``0x7ffe12``) become ``<id>``, except a
code in capitals (``HTTP_503``, ``E2BIG``; not hex digits alone); any other
number (``5000``, ``3.5``, ``-1``, ``1,000``, ``10.0.0.7``: digits with the dots
and commas between them) becomes ``<n>``; quotes around them stay;
runs of white space become one space. Letters, codes and words stay as
they are: ``ETIMEDOUT: request timed out after 5000 ms`` and ``... after
30000 ms`` are one group, ``ETIMEDOUT`` and ``ENOTFOUND`` are two.
"""

from __future__ import annotations

import functools
import json
import re

#: A group's text is cut to this many characters.
WHAT_CHARS = 200

_UUID = re.compile(
    r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b"
)
# An id-like token: letters, digits, "_" or "-", 6 or more, holding a digit.
_ID = re.compile(r"\b(?=[\w-]*\d)[A-Za-z0-9][\w-]{5,}\b")
_NUMBER = re.compile(r"-?\b\d+(?:[.,]\d+)*\b")
_SPACE = re.compile(r"\s+")
_CODE = re.compile(r'"code"\s*:\s*"([^"]{1,80})"')
_MESSAGE = re.compile(r'"message"\s*:\s*"([^"]{1,200})')


def _from_error(error: object) -> str:
    if isinstance(error, dict):
        code, message = error.get("code"), error.get("message")
        if code is not None and message is not None:
            return f"{code}: {message}"
        if message is not None or code is not None:
            return str(message if message is not None else code)
        return json.dumps(error, ensure_ascii=False, sort_keys=True)
    if isinstance(error, str):
        return error
    return json.dumps(error, ensure_ascii=False)


def error_text(result_head: str | None) -> str:
    """What the failure says, from the head of its result (see the module's docstring)."""
    if not result_head:
        return "(no result)"
    try:
        value = json.loads(result_head)
    except (ValueError, RecursionError):
        value = None
    if isinstance(value, dict):
        if value.get("error") not in (None, False, 0, "", {}, []):
            return _from_error(value["error"])
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    code, message = _CODE.search(result_head), _MESSAGE.search(result_head)
    if code and message:
        return f"{code.group(1)}: {message.group(1)}"
    if code or message:
        return (code or message).group(1)  # type: ignore[union-attr]
    return result_head


def normalise(text: str) -> str:
    """``text`` with ids and numbers replaced, white space collapsed, cut to WHAT_CHARS."""
    text = _UUID.sub("<id>", text)
    text = _ID.sub(lambda m: m.group(0) if _is_word_code(m.group(0)) else "<id>", text)
    text = _NUMBER.sub("<n>", text)
    text = _SPACE.sub(" ", text).strip()
    return text if len(text) <= WHAT_CHARS else text[: WHAT_CHARS - 1] + "…"


_HEXISH = re.compile(r"[0-9A-F_-]+")


def _is_word_code(token: str) -> bool:
    """An error code with a digit in it (``HTTP_503``, ``E2BIG``: capitals, not hex alone)
    is kept: it says what failed."""
    return token == token.upper() and not _HEXISH.fullmatch(token)


@functools.lru_cache(maxsize=16_384)
def what_failed(result_head: str | None) -> str:
    """The group a failed call belongs to: its error text, normalised (remembered: the
    same heads come back on every page of groups)."""
    return normalise(error_text(result_head))
