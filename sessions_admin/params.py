"""Query parameters parsed one way: a value, None when absent, or a 400 naming it.

Any parameter can hold any string: ``²`` (``"²".isdigit()`` is true, ``int()``
refuses it), thirty digits, ``NaN``, ``1e308``, NUL bytes, 5,000 characters,
or the same name twice (the last one counts, as ``QueryDict.get`` has it).
Every numeric, date and choice parameter goes through here, so each ends as a
bounded value or as :class:`BadParameter`, the one exception for a bad
parameter: views let it through and
:class:`sessions_admin.middleware.BadParameterMiddleware` turns it into the
400 page (or the htmx banner) with the parameter's name in the first words.

No Django or store import: the store's query parsers use it too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import datetime, tzinfo
from typing import Any

#: SQLite's INTEGER is 64-bit: anything past this would overflow a bound parameter.
MAX_SQLITE_INT = 2**63 - 1
#: More than any real value; the message quotes at most this much of what came.
QUOTE_CHARS = 40
MAX_TEXT_CHARS = 1000
_WHOLE = re.compile(r"-?[0-9]{1,19}")


class BadParameter(ValueError):
    """A query parameter that cannot mean anything; ``str()`` names it first."""

    status_code = 400

    def __init__(self, message: str, *, name: str = "") -> None:
        super().__init__(message)
        self.name = name


def quoted(raw: str) -> str:
    return repr(raw[:QUOTE_CHARS]) + ("…" if len(raw) > QUOTE_CHARS else "")


def _raw(params: Mapping[str, Any], name: str) -> str:
    value = params.get(name, "")
    return value.strip() if isinstance(value, str) else ""


def whole(
    params: Mapping[str, Any],
    name: str,
    *,
    minimum: int = 0,
    maximum: int = MAX_SQLITE_INT,
    what: str = "a whole number",
) -> int | None:
    """An integer in ``[minimum, maximum]`` written in ASCII digits, or None if absent."""
    raw = _raw(params, name)
    if not raw:
        return None
    number = int(raw) if _WHOLE.fullmatch(raw) else None
    if number is None or not minimum <= number <= maximum:
        raise BadParameter(
            f"{name} must be {what} from {minimum:,} to {maximum:,}; got {quoted(raw)}.",
            name=name,
        )
    return number


def whole_or_none(params: Mapping[str, Any], name: str, **limits: Any) -> int | None:
    """:func:`whole` for a value that is only a hint (a poll's last file size, the
    count a confirmation form showed): what :func:`whole` refuses reads as None."""
    try:
        return whole(params, name, **limits)
    except BadParameter:
        return None


def choice(
    params: Mapping[str, Any], name: str, choices: Iterable[str], default: str | None = None
) -> str | None:
    """One of ``choices``; ``default`` when absent or empty."""
    raw = _raw(params, name)
    if not raw:
        return default
    allowed = list(choices)
    if raw not in allowed:
        raise BadParameter(
            f"{name} must be one of {', '.join(allowed)}; got {quoted(raw)}.", name=name
        )
    return raw


def flag(params: Mapping[str, Any], name: str) -> bool:
    """A switch: ``1`` on; absent, empty or ``0`` off; anything else refused."""
    return choice(params, name, ("0", "1"), "0") == "1"


def text(params: Mapping[str, Any], name: str, *, max_chars: int = MAX_TEXT_CHARS) -> str | None:
    """Free text, stripped; None when absent or empty; refused when too long or when it
    holds NUL (which no text column of PostgreSQL can keep)."""
    raw = _raw(params, name)
    if "\x00" in raw:
        raise BadParameter(f"{name} cannot contain a NUL character.", name=name)
    if len(raw) > max_chars:
        raise BadParameter(f"{name} is too long (over {max_chars:,} characters).", name=name)
    return raw or None


def iso_datetime(params: Mapping[str, Any], name: str, zone: tzinfo) -> datetime | None:
    """An ISO date or date-time (naive ones in ``zone``), or None when absent."""
    raw = _raw(params, name)
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        moment.timestamp()  # years 1 and 9999 in a far zone overflow here
    except (ValueError, OverflowError, OSError):
        raise BadParameter(
            f"{name} must be an ISO date or date-time such as 2026-11-28 or "
            f"2026-11-28T14:00; got {quoted(raw)}.",
            name=name,
        ) from None
    return moment
