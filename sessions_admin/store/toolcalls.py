"""What a tool call is, and when it failed: one definition for every screen.

**A tool call** is a message whose ``tool_name`` is set (not NULL, not empty).
The runtime may write a call and its result as two rows sharing a
``tool_call_id`` within a session; those count once (:func:`call_key`).

**A failure** is a tool result whose text is valid JSON (RFC 8259, as
SQLite's ``json_valid`` reads it) holding an object where ``ok`` or
``success`` is ``false``, or where ``error`` is present and is none of
``null``, ``false``, ``0``, ``""``, ``{}`` or ``[]``.

The rule exists once, as the SQL expression :func:`reports_error_sql`. The
transcript evaluates it inside the store's query for values too large to
ship, and :func:`reports_error` evaluates the very same expression in an
in-memory SQLite for text already in Python (the transcript's other cards,
the rollups fed by the sync). So a red card, the tool pages and the overview
cannot disagree, even on JSON that Python and SQLite read differently
(duplicate keys, ``NaN``, a NUL byte).
"""

from __future__ import annotations

import sqlite3
import threading


def reports_error_sql(column: str) -> str:
    """An SQL expression, 1 when the JSON text in ``column`` (a column or a parameter)
    reports an error, else 0 (NULL, a number, broken JSON: 0).

    A BLOB is read as its UTF-8 text, as the sync's feed reads it. CASE
    evaluates in order, so the JSON functions only ever see valid JSON (on
    SQLite 3.40 they raise on anything else).
    """
    v = f"CAST({column} AS TEXT)"
    return (
        f"CASE WHEN typeof({column}) NOT IN ('text', 'blob') THEN 0 "
        f"WHEN NOT json_valid({v}) THEN 0 "
        f"WHEN json_type({v}) != 'object' THEN 0 ELSE coalesce(("
        f"json_type({v}, '$.ok') IS 'false' OR json_type({v}, '$.success') IS 'false' "
        f"OR (json_type({v}, '$.error') IN ('true', 'integer', 'real') "
        f"AND json_extract({v}, '$.error') != 0) "
        f"OR (json_type({v}, '$.error') = 'text' "
        f"AND json_extract({v}, '$.error') != '') "
        f"OR (json_type({v}, '$.error') IN ('array', 'object') "
        f"AND json_extract({v}, '$.error') NOT IN ('[]', '{{}}'))), 0) END"
    )


_REPORTS_ERROR = "SELECT " + reports_error_sql("?1")
_local = threading.local()


def _evaluator() -> sqlite3.Connection:
    conn = getattr(_local, "conn", None)
    if conn is None:
        # One tiny in-memory database per thread; it holds no data.
        conn = _local.conn = sqlite3.connect(":memory:", check_same_thread=True)
    return conn


def reports_error(text: str | None) -> bool:
    """Whether a tool result reports an error (:func:`reports_error_sql`, applied here)."""
    if not isinstance(text, str):
        return False
    if "{" not in text:
        # Only a JSON object can report an error: most results of a build need
        # no round trip through SQLite.
        return False
    try:
        return bool(_evaluator().execute(_REPORTS_ERROR, (text,)).fetchone()[0])
    except (sqlite3.Error, UnicodeEncodeError, OverflowError):
        # Text SQLite cannot take (a lone surrogate cannot be encoded as UTF-8)
        # is not JSON to SQLite either.
        return False


def is_tool_call(tool_name: object) -> bool:
    """A message is a tool call when its ``tool_name`` is set."""
    return isinstance(tool_name, str) and tool_name != ""


#: The same test in SQL, for a query over messages.
IS_TOOL_CALL_SQL = "(tool_name IS NOT NULL AND CAST(tool_name AS TEXT) != '')"


def call_key(message_id: int, tool_call_id: object) -> str:
    """What identifies a call within its session: its call id, or else its own message."""
    if isinstance(tool_call_id, str) and tool_call_id != "":
        return "c:" + tool_call_id
    return f"m:{message_id}"
