"""Path converters for numeric route parameters that SQLite can hold.

Django's ``<int:…>`` accepts any run of digits; thirty of them overflow
SQLite's 64-bit INTEGER when bound, which is a 500. ``<id64:…>`` matches at
most 18 digits (always below 2**63), so a longer value is a plain 404.
"""

from __future__ import annotations

from django.urls import register_converter


class Id64Converter:
    regex = "[0-9]{1,18}"

    def to_python(self, value: str) -> int:
        return int(value)

    def to_url(self, value: int) -> str:
        return str(int(value))


register_converter(Id64Converter, "id64")
