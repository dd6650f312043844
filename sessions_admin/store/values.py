"""Store values as the columns declare them, or a description of what they are.

SQLite's type affinity does not enforce declared types: ``turn_count`` can hold
``'many'``, ``content`` a BLOB, ``ts`` a REAL or an epoch past year 9999. The
store readers pass every value through one of the functions here, so views and
templates only ever see the declared type, ``None``, or an :class:`OddValue`:
a ``str`` that reads as what the value is ("not a number: 'many'", "binary
value, 12 bytes", "time out of range (99999999999999999)"). Being a ``str``,
it escapes, clips and joins like any text, so one odd cell never takes a page
down; ``isinstance(value, OddValue)`` tells the places that link or compute.

TEXT that is not valid UTF-8 (a writer that cut a multi-byte character) is
read as an :class:`Undecodable`: an :class:`OddValue` whose text is the value
with U+FFFD in place of each bad byte sequence, and whose ``raw`` is the bytes
as stored. It is shown marked "not valid UTF-8", searched for the rest of its
text, and bound back to SQL as exactly those bytes (``store.connection.run_sql``).

No Django import: the frames and demo packages, and plain tests, use it too.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime

#: How much of an odd value's own text its description quotes.
QUOTE_CHARS = 60
#: The epoch-millisecond range Python's datetime can show (years 1 to 9999).
MIN_EPOCH_MS = int((datetime(1, 1, 2, tzinfo=UTC).timestamp()) * 1000)
MAX_EPOCH_MS = int((datetime(9999, 12, 30, tzinfo=UTC).timestamp()) * 1000)
#: The range an INTEGER column can hold; a REAL outside it is no count we can show.
MIN_INT64, MAX_INT64 = -(2**63), 2**63 - 1


class Fields:
    """A row whose fields a Django template reads by subscript, without an exception.

    Django's template lookup of ``item.name`` tries ``item["name"]`` first and
    falls back to ``getattr`` after catching the error; on a plain dataclass
    that error is raised for every lookup. Answering the subscript saves about a
    seventh of the transcript's template time.
    """

    __slots__ = ()
    #: Not a sequence: without this, ``iter()`` would walk ``__getitem__`` with 0, 1, ...
    __iter__ = None

    def __getitem__(self, name: str) -> object:
        try:
            return getattr(self, name)
        except (AttributeError, TypeError):
            raise KeyError(name) from None


class OddValue(str):
    """Text describing a value that cannot be shown as its column intends."""

    __slots__ = ("raw",)
    raw: object

    def __new__(cls, description: str, raw: object = None) -> OddValue:
        value = super().__new__(cls, description)
        value.raw = raw
        return value

    #: Lets templates mark the cell ({% if value.is_odd %}) without a custom filter.
    is_odd = True


class Undecodable(OddValue):
    """TEXT whose bytes are not valid UTF-8: the text with U+FFFD for the bad bytes.

    ``raw`` holds the bytes as stored, so a delete or a lookup can name the
    row exactly (``CAST(? AS TEXT)`` over them). It equals only a value of the
    same bytes: ``b"a\\xff"`` and ``b"a\\xfe"`` read alike but are two ids, and
    neither is the valid text ``"a\\ufffd"``, so sets and dicts of ids keep them apart.
    """

    __slots__ = ()
    raw: bytes

    #: What the pages and the export say about such a value.
    MARK = "not valid UTF-8"

    def __new__(cls, raw: bytes) -> Undecodable:
        return super().__new__(cls, raw.decode("utf-8", "replace"), raw)  # type: ignore[return-value]

    def __reduce__(self) -> tuple:
        return (Undecodable, (self.raw,))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Undecodable) and self.raw == other.raw

    def __ne__(self, other: object) -> bool:
        return not self == other

    def __hash__(self) -> int:
        return hash((Undecodable, self.raw))


def exact_key(value: object) -> object:
    """A key that tells stored values apart, for code that holds them beside other
    types (an :class:`Undecodable` already equals only a value of its bytes)."""
    return (Undecodable, value.raw) if isinstance(value, Undecodable) else value


def decode_text(data: bytes) -> str:
    """A TEXT value's bytes as ``str``, or an :class:`Undecodable` when they are not UTF-8.

    The tolerant ``text_factory`` (see ``store.backend.tolerant``). Python is
    slower at this than sqlite3's built-in decoding, so only a row that failed
    the built-in one is read with it.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(data)


def quoted(text: str) -> str:
    """``repr`` of at most :data:`QUOTE_CHARS` characters of ``text``."""
    if len(text) > QUOTE_CHARS:
        return repr(text[:QUOTE_CHARS]) + "…"
    return repr(text)


def binary(value: bytes | bytearray | memoryview) -> OddValue:
    return OddValue(f"binary value, {len(value):,} bytes", bytes(value))


def describe(value: object) -> OddValue:
    """What a value is, for a column that expected something else."""
    if isinstance(value, bytes | bytearray | memoryview):
        return binary(value)
    if isinstance(value, Undecodable):
        return OddValue(f"not a number: {quoted(value)}, {Undecodable.MARK}", value.raw)
    if isinstance(value, str):
        return OddValue(f"not a number: {quoted(value)}", value)
    if value is None:
        return OddValue("no value (NULL)", None)
    return OddValue(f"unexpected value: {quoted(repr(value))}", value)


def as_text(value: object) -> str | None:
    """A TEXT column: text stays, NULL stays None, anything else is described."""
    if value is None or type(value) is str:
        return value  # type: ignore[return-value]
    if isinstance(value, str):  # an OddValue already, or another str subclass
        return value
    if isinstance(value, int | float):
        # Only an expression can hand a number back from a TEXT column; show it.
        return repr(value)
    return describe(value)


def as_id(value: object) -> str:
    """A key column (session id, state key): text, or a description that links nowhere."""
    if type(value) is str:
        return value  # type: ignore[return-value]
    if value is None:
        return OddValue("no id (NULL)", None)
    return as_text(value)  # type: ignore[return-value]


def as_int(value: object) -> int | None | OddValue:
    """An INTEGER column: a whole number, NULL, or a description."""
    if value is None or type(value) is int:
        return value  # type: ignore[return-value]
    if isinstance(value, float):
        if not (math.isfinite(value) and value.is_integer()):
            return OddValue(f"not a whole number: {value!r}", value)
        if not MIN_INT64 <= value <= MAX_INT64:
            # A REAL like 1e308 is "whole", but as an int it prints 309 digits.
            return OddValue(f"{value!r}, out of range", value)
        return int(value)
    if isinstance(value, OddValue) and not isinstance(value, Undecodable):
        return value
    return describe(value)


def as_time(value: object) -> int | None | OddValue:
    """An epoch-millisecond column: a time datetime can show, NULL, or a description.

    A REAL time is rounded to the millisecond (a writer that used floats still
    wrote a time); one outside years 1 to 9999 is described, not shown as "—".
    """
    if type(value) is int and MIN_EPOCH_MS <= value <= MAX_EPOCH_MS:
        return value  # type: ignore[return-value]
    if isinstance(value, float) and math.isfinite(value):
        rounded = round(value)
        if MIN_EPOCH_MS <= rounded <= MAX_EPOCH_MS:
            return rounded
        return OddValue(f"time out of range ({value!r})", value)
    if isinstance(value, int) and not isinstance(value, bool):
        return OddValue(f"time out of range ({value})", value)
    if value is None or (isinstance(value, OddValue) and not isinstance(value, Undecodable)):
        return value
    if isinstance(value, float):
        return OddValue(f"time out of range ({value!r})", value)
    return describe(value)


# --- The same rules in SQL, for loops over many rows (statistics) -------------------
# SQLite orders every number before every TEXT and BLOB, so one BETWEEN keeps the
# numbers in range and drops the rest without a typeof() per row.


def number_sql(column: str) -> str:
    """``column`` when it holds a finite number, else NULL (a TEXT, a BLOB, an infinity)."""
    return f"CASE WHEN {column} BETWEEN -1e308 AND 1e308 THEN {column} END"


def time_sql(column: str) -> str:
    """``column`` when it holds a time :func:`as_time` would show, else NULL."""
    return f"CASE WHEN {column} BETWEEN {MIN_EPOCH_MS} AND {MAX_EPOCH_MS} THEN {column} END"


def sqlite_order_key(value: object) -> tuple:
    """Python's order for mixed storage classes, matching SQLite's.

    SQLite sorts NULL first, then numbers, then TEXT, then BLOB; a Python
    comparison of an int with bytes raises instead. Keyset merges that meet
    such rows sort by this key.
    """
    if value is None:
        return (0, 0)
    if isinstance(value, int | float):
        return (1, value)
    if isinstance(value, Undecodable):
        # SQLite compares TEXT by its bytes (BINARY collation); so does this.
        return (2, value.raw.decode("utf-8", "surrogateescape"))
    if isinstance(value, str):
        return (2, value)
    return (3, bytes(value))  # type: ignore[arg-type]
