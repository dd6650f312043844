"""The store's messages as the sync and the search read them: new ones in id order, by id,
by session, and what the rollups count of them."""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import DatabaseError

from sessions_admin.sqlhelpers import (
    BEFORE_FIRST_ID,
    INT_MAX,
    INT_MIN,
    chunks,
    id_above,
    placeholders,
)
from sessions_admin.store.backend.tolerant import tolerant_rows
from sessions_admin.store.connection import (
    StoreError,
    raw_connection,
    run_sql,
    store_connection,
)
from sessions_admin.store.feed.rows import (
    BATCH_COLUMNS,
    MESSAGE_COLUMNS,
    UNJOINED_COLUMNS,
    FeedMessage,
    as_int,
    as_text,
    batch_message,
    feed_message,
)
from sessions_admin.store.toolcalls import call_key, is_tool_call, reports_error

logger = logging.getLogger(__name__)


def stream(sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
    """Rows from a cursor over the raw connection, for the two walks of every session
    row or id, which would otherwise be fetched whole into memory (500,000 rows).
    Undecodable TEXT is read as ``Undecodable``, as ``run_sql`` reads it."""
    return tolerant_rows(raw_connection().execute(sql, params))


def messages_after(after_id: int, limit: int) -> list[FeedMessage]:
    """Up to ``limit`` messages with ``id > after_id``, ids increasing, orphans included.

    The session's columns (target, profile, principal) are None: the sync
    reads its batch's session rows inside its transaction, fills them in from
    those and drops the orphans (no session row). Everywhere else (search's
    hit checks and scans) a message counts only with its session row, so the
    index and the scans answer alike.
    """
    above, after = id_above("m.id", after_id)
    rows = run_sql(
        f"SELECT {UNJOINED_COLUMNS} FROM session_messages AS m WHERE {above} ORDER BY m.id LIMIT ?",
        (after, limit),
    )
    # A non-integer id cannot exist (INTEGER PRIMARY KEY is the rowid).
    return [batch_message(row) for row in rows]


def close_thread_connection() -> None:
    """Close this thread's store connection (the sync reads ahead in a thread of its own)."""
    store_connection().close()


def last_message_id() -> int:
    """The newest message's id (0 for an empty store): one seek at the rowid's end."""
    return int(run_sql("SELECT MAX(id) FROM session_messages")[0][0] or 0)


def count_messages_after(after_id: int, cap: int) -> tuple[int, bool]:
    """How many messages have ``id > after_id``, counting at most ``cap + 1``."""
    above, after = id_above("id", after_id)
    count = run_sql(
        f"SELECT COUNT(*) FROM (SELECT 1 FROM session_messages WHERE {above} LIMIT ?)",
        (after, cap + 1),
    )[0][0]
    return min(count, cap), count > cap


def messages_of_sessions(session_ids: Sequence[str], up_to_id: int) -> list[FeedMessage]:
    """Every message of these sessions with ``id <= up_to_id``, ids increasing.

    The sync takes a session's messages in again with this when the session
    is new to it (its messages may be older than the last id it took in) or
    was moved to another target, profile or principal.
    """
    found: list[FeedMessage] = []
    if up_to_id < INT_MIN:
        return found
    for chunk in chunks(list(dict.fromkeys(session_ids))):
        marks = placeholders(len(chunk))
        found.extend(
            batch_message(row)
            for row in run_sql(
                f"SELECT {BATCH_COLUMNS} FROM session_messages AS m "
                "JOIN sessions AS s ON s.id = m.session_id "
                f"WHERE m.session_id IN ({marks}) AND m.id <= ?",
                [*chunk, up_to_id],
            )
        )
    found.sort(key=lambda m: m.id)
    return found


def messages_by_id(message_ids: Sequence[int]) -> dict[int, FeedMessage]:
    """The store's current rows for these message ids (deleted ones are left out).

    The search checks every index hit against this, so a message the runtime
    deleted, or an index that drifted, can never show a false hit.
    """
    found: dict[int, FeedMessage] = {}
    for chunk in chunks(dict.fromkeys(message_ids)):
        marks = placeholders(len(chunk))
        for row in run_sql(
            f"SELECT {MESSAGE_COLUMNS} FROM session_messages AS m "
            f"JOIN sessions AS s ON s.id = m.session_id WHERE m.id IN ({marks})",
            chunk,
        ):
            message = feed_message(row)
            found[message.id] = message
    return found


def session_message_ids(session_id: str, from_id: int) -> list[int]:
    """The ids of one session's messages with ``id >= from_id``, ascending: read from the
    store's session index alone (no message's text), for the search to check a few."""
    if from_id > INT_MAX:
        return []
    rows = run_sql(
        "SELECT id FROM session_messages WHERE session_id = ? AND id >= ?",
        (session_id, max(from_id, INT_MIN)),
    )
    return sorted(row[0] for row in rows)


#: What a read of the store raises when the store cannot be read (gone, locked, damaged).
READ_ERRORS: tuple[type[Exception], ...] = (DatabaseError, StoreError)


def call_heads(message_ids: Sequence[int], chars: int) -> dict[int, tuple[str | None, str | None]]:
    """The first ``chars`` characters of these messages' tool args and tool result.

    The tool page's rows show a call's arguments and result in short; the
    rollups keep no copy of them (the side file stays small), so the page
    reads the few rows it shows here, by id. Values are cut inside SQLite
    (a BLOB to ``4 * chars`` bytes, enough for ``chars`` characters) and
    normalised as the sync's feed normalises them. Deleted messages are left out.
    """
    found: dict[int, tuple[str | None, str | None]] = {}

    def head(column: str) -> str:
        return (
            f"CASE typeof({column}) WHEN 'text' THEN substr({column}, 1, {int(chars)}) "
            f"WHEN 'blob' THEN substr({column}, 1, {4 * int(chars)}) ELSE {column} END"
        )

    for chunk in chunks(dict.fromkeys(message_ids)):
        marks = placeholders(len(chunk))
        for mid, args, result in run_sql(
            f"SELECT id, {head('tool_args')}, {head('tool_result')} FROM session_messages "
            f"WHERE id IN ({marks})",
            chunk,
        ):
            args, result = as_text(args), as_text(result)
            found[mid] = (
                None if args is None else args[:chars],
                None if result is None else result[:chars],
            )
    return found


def newest_messages(
    before_id: int | None, limit: int, *, after_id: int = BEFORE_FIRST_ID
) -> list[FeedMessage]:
    """Up to ``limit`` messages with ``after_id < id < before_id``, newest first.

    The search's scans (short queries, no index yet, messages newer than the
    index) walk the store with this, page by page, under a time limit.
    """
    if before_id is not None and before_id <= INT_MIN:
        return []
    unbounded = before_id is None or before_id > INT_MAX
    below, upper = ("m.id <= ?", INT_MAX) if unbounded else ("m.id < ?", before_id)
    above, after = id_above("m.id", after_id)
    rows = run_sql(
        f"SELECT {MESSAGE_COLUMNS} FROM session_messages AS m "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {below} AND {above} ORDER BY m.id DESC LIMIT ?",
        (upper, after, limit),
    )
    return [feed_message(row) for row in rows]


@dataclass(slots=True)
class MessageStats:
    """A session's messages as the brute-force reading counts them: how many, and the
    earliest and latest of their times that are whole numbers (``None``: no such time)."""

    count: int = 0
    first: int | None = None
    last: int | None = None

    def widen(self, ts: int) -> None:
        self.first = ts if self.first is None else min(self.first, ts)
        self.last = ts if self.last is None else max(self.last, ts)


def message_stats(up_to_id: int, no_time: int) -> dict[str, MessageStats]:
    """Each session's messages with ``id <= up_to_id`` (orphans left out, as the sync does),
    their times read as the batches read them, ``no_time`` (the rollups' "none") left out.

    Integer times are compared inside SQLite; the few rows holding another
    storage class are read one by one and turned into whole numbers by :func:`as_int`.
    """
    found: dict[str, MessageStats] = {}
    if up_to_id < INT_MIN:
        return found
    whole = "typeof(m.ts) = 'integer' AND m.ts != ?"
    joined = (
        "FROM session_messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.id <= ? AND typeof(m.session_id) = 'text'"
    )
    for sid, n, first, last in run_sql(
        f"SELECT m.session_id, count(*), min(CASE WHEN {whole} THEN m.ts END), "
        f"max(CASE WHEN {whole} THEN m.ts END) {joined} GROUP BY m.session_id",
        (no_time, no_time, up_to_id),
    ):
        found[sid] = MessageStats(n, first, last)
    for sid, ts in stream(
        f"SELECT m.session_id, m.ts {joined} AND typeof(m.ts) != 'integer'", (up_to_id,)
    ):
        number = as_int(ts)
        if number is not None and number != no_time and sid in found:
            found[sid].widen(number)
    return found


def calls(up_to_id: int) -> dict[tuple[str, str], tuple[str, int | None, bool]]:
    """Every tool call among messages ``id <= up_to_id``: (session, call key) -> (tool, ts, failed).

    Read row by row from the store and folded with the one definition of a
    call and a failure (:mod:`sessions_admin.store.toolcalls`), values
    normalised as the batches normalise them: a call's rows share a key; it
    keeps its first row's tool and time and fails if any row reports an error.
    """
    found: dict[tuple[str, str], tuple[str, int | None, bool]] = {}
    if up_to_id < INT_MIN:
        return found
    for mid, sid, name, call_id, ts, result in stream(
        "SELECT m.id, m.session_id, m.tool_name, m.tool_call_id, m.ts, m.tool_result "
        "FROM session_messages AS m JOIN sessions AS s ON s.id = m.session_id "
        "WHERE m.id <= ? AND m.tool_name IS NOT NULL ORDER BY m.id",
        (up_to_id,),
    ):
        tool = as_text(name)
        if not isinstance(sid, str) or not is_tool_call(tool):
            continue
        key = (sid, call_key(mid, as_text(call_id)))
        failed = reports_error(as_text(result))
        if key in found:
            first_tool, first_ts, before = found[key]
            found[key] = (first_tool, first_ts, before or failed)
        else:
            found[key] = (tool, as_int(ts), failed)
    return found
