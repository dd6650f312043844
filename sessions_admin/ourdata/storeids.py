"""The store's ids in our own columns: any value the store holds, kept exactly by either database.

The runtime's ``id`` and ``principal_id`` columns can hold TEXT with NUL (which
PostgreSQL's text and jsonb refuse), TEXT that is not UTF-8, a BLOB or a number.
Two encodings keep them:

- :func:`encode_id`, a tagged form (``t:`` plain text, ``x:`` text with NUL or lone
  surrogates, ``u:`` TEXT that is not UTF-8, ``b:`` a BLOB, ``i:``, ``r:``, ``n:``),
  for a job's own columns, where every id is encoded;
- :func:`to_column`, for the review records' ``session_id`` (:class:`StoreIdField`)
  and the store ids inside our JSON (:class:`ExactJSONField`): plain text is written
  as itself, so rows, admin filters and old data read as before, and any other value
  as ``ESC`` followed by its :func:`encode_id` form.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import models

from sessions_admin.store.feed import Undecodable

#: Starts a value written in :func:`encode_id` form (a text id that starts with it is
#: encoded too, so reading back is never ambiguous).
ESC = "\x01"


def encode_id(value: object) -> str:
    """A store value as text that round-trips exactly through :func:`decode_id`."""
    if isinstance(value, Undecodable):
        return "u:" + value.raw.hex()
    if isinstance(value, str):
        if not plain(value):
            return "x:" + value.encode("utf-8", "surrogatepass").hex()
        return "t:" + value
    if isinstance(value, bytes | bytearray | memoryview):
        return "b:" + bytes(value).hex()
    if isinstance(value, bool | int):
        return f"i:{int(value)}"
    if isinstance(value, float):
        return f"r:{value!r}"
    if value is None:
        return "n:"
    raise TypeError(f"not a store value: {type(value).__name__}")


def decode_id(text: str) -> object:
    """The store value :func:`encode_id` wrote."""
    kind, _, rest = text.partition(":")
    if kind == "t":
        return rest
    if kind == "x":
        return bytes.fromhex(rest).decode("utf-8", "surrogatepass")
    if kind == "u":
        return Undecodable(bytes.fromhex(rest))
    if kind == "b":
        return bytes.fromhex(rest)
    if kind == "i":
        return int(rest)
    if kind == "r":
        return float(rest)
    if kind == "n":
        return None
    raise ValueError(f"not an encoded id: {text[:40]!r}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def plain(value: str) -> bool:
    """Text every database keeps as it is: no NUL, no lone surrogate."""
    return "\x00" not in value and (value.isascii() or not _SURROGATE.search(value))


def to_column(value: object) -> object:
    """A store id as our text columns keep it (see the module's docstring)."""
    if type(value) is str and plain(value) and not value.startswith(ESC):
        return value
    if value is None:
        return None
    return ESC + encode_id(value)


def from_column(text: object) -> object:
    """The store id :func:`to_column` wrote."""
    if isinstance(text, str) and text.startswith(ESC):
        try:
            return decode_id(text[len(ESC) :])
        except ValueError:
            return text
    return text


class StoreIdField(models.TextField):
    """A store's session id, exactly (:func:`to_column`); lookups encode their values too."""

    def get_prep_value(self, value: Any) -> Any:
        return to_column(value)

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return from_column(value)

    def to_python(self, value: Any) -> Any:
        return from_column(value)


def _walk(value: Any, leaf) -> Any:
    if isinstance(value, dict):
        return {key: _walk(item, leaf) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item, leaf) for item in value]
    if isinstance(value, str | bytes):
        return leaf(value)
    return value


class ExactJSONField(models.JSONField):
    """JSON that may hold store ids: a string PostgreSQL's jsonb cannot hold (NUL, a
    lone surrogate) or one that only reads like the id (TEXT that is not UTF-8) is
    kept as :func:`to_column` writes it, and read back as the value."""

    def get_prep_value(self, value: Any) -> Any:
        return super().get_prep_value(_walk(value, to_column))

    def from_db_value(self, value: Any, expression: Any, connection: Any) -> Any:
        return _walk(super().from_db_value(value, expression, connection), from_column)
