"""A whole session for export, read in keyset chunks so memory stays flat on any size."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson

from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.transcript.messages import MESSAGE_COLUMNS

#: Messages per query while exporting.
EXPORT_CHUNK = 2000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


#: Strict RFC 8259 parsing: NaN/Infinity (which Python accepts) count as broken.
_STRICT_JSON = json.JSONDecoder(parse_constant=_reject_constant)


def strict_json_valid(text: str) -> bool:
    """``text`` is JSON by RFC 8259. orjson answers most texts several times faster;
    what it refuses (a number too big for a double, a lone surrogate escape) is asked
    again of the standard library, so the answer is the strict grammar's."""
    try:
        orjson.loads(text)
        return True
    except orjson.JSONDecodeError:
        pass
    try:
        _STRICT_JSON.decode(text)
    except (ValueError, RecursionError):
        return False
    return True


def iter_messages(session_id: str, chunk: int = EXPORT_CHUNK) -> Iterator[tuple]:
    """Every message of a session as a full row (``MESSAGE_COLUMNS``), oldest first.

    Each chunk is its own keyset query, so no statement stays open between
    chunks (the runtime can write meanwhile) and memory holds one chunk.
    """
    select = f"SELECT {', '.join(MESSAGE_COLUMNS)} FROM session_messages WHERE session_id = ?"
    ts_index = MESSAGE_COLUMNS.index("ts")
    position: tuple[int, int] | None = None
    while True:
        with time_limit():
            if position is None:
                rows = run_sql(f"{select} ORDER BY ts, id LIMIT {chunk}", [session_id])
            else:
                rows = run_sql(
                    f"{select} AND ts >= ? AND (ts > ? OR id > ?) ORDER BY ts, id LIMIT {chunk}",
                    [session_id, position[0], position[0], position[1]],
                )
        yield from rows
        if len(rows) < chunk:
            return
        position = (rows[-1][ts_index], rows[-1][0])
