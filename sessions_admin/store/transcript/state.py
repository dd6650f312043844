"""A session's state rows: their keys, a page of them, one full value on demand."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.transcript.messages import UnknownMessage, Value, value_of, value_sql
from sessions_admin.store.values import (
    as_id,
    as_text,
    as_time,
)


def state_keys(session_id: str) -> list[str]:
    """The keys as pages show them (a BLOB key is described)."""
    return [
        as_id(row[0])
        for row in run_sql(
            f"SELECT {clipped_sql('key')} FROM session_state WHERE session_id = ? ORDER BY key",
            [session_id],
        )
    ]


@dataclass(frozen=True)
class StateRow:
    key: str
    value: Value
    updated_at: int


def state_rows(session_id: str) -> list[StateRow]:
    """Every state key with its value (truncated like message columns)."""
    with time_limit():
        rows = run_sql(
            f"SELECT {clipped_sql('key')}, {value_sql('value')}, updated_at FROM session_state "
            "WHERE session_id = ? ORDER BY key",
            [session_id],
        )
    return [
        StateRow(as_id(key), value_of(text, size) or Value(""), as_time(updated))  # type: ignore[arg-type]
        for key, text, size, updated in rows
    ]


def state_value(session_id: str, key: str) -> StateRow:
    rows = run_sql(
        "SELECT value, updated_at FROM session_state WHERE session_id = ? AND key = ?",
        [session_id, key],
    )
    if not rows:
        raise UnknownMessage(f"This session has no state key {key!r}.")
    text = as_text(rows[0][0]) or ""
    value = Value(text, size=len(text.encode("utf-8", "replace")))
    return StateRow(key, value, as_time(rows[0][1]))  # type: ignore[arg-type]


def iter_state(session_id: str) -> Iterator[tuple[str, str, int]]:
    """(key, value, updated_at) for each state key, one row at a time."""
    # The raw keys (a BLOB key included), each looked up as it is stored.
    keys = [
        row[0]
        for row in run_sql(
            "SELECT key FROM session_state WHERE session_id = ? ORDER BY key", [session_id]
        )
    ]
    for key in keys:
        rows = run_sql(
            "SELECT key, value, updated_at FROM session_state WHERE session_id = ? AND key = ?",
            [session_id, key],
        )
        if rows:
            yield rows[0]
