"""Path converters for the parameters Django's own converters get wrong for us.

* ``<id64:…>``: Django's ``<int:…>`` accepts any run of digits, and thirty of
  them overflow SQLite's 64-bit INTEGER when bound (a 500). This matches at most
  18 digits (always below 2**63), so a longer value is a plain 404.
* ``<anypath:…>``: Django's ``<path:…>`` is ``.+``, which stops at a newline, so
  a session whose id holds one could not be opened. This takes every character.

Registered when this module is imported; users name them through :data:`ID64`
and :data:`ANY_PATH`, so the import is never a bare side effect.
"""

from __future__ import annotations

from django.urls import register_converter


class Id64Converter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(int(value))


class AnyPathConverter:
    regex = r"[\s\S]+"

    def to_python(self, value: str) -> str:
        return value

    def to_url(self, value: str) -> str:
        return value


ID64 = "id64"
ANY_PATH = "anypath"
register_converter(Id64Converter, ID64)
register_converter(AnyPathConverter, ANY_PATH)
