"""What ``sync_index`` reads from the store: new messages, in id order, with their session.

Message ids only grow (``AUTOINCREMENT``), so "everything after the last id
we saw" is complete. Values are normalised here, once, so that nothing
downstream meets a BLOB or a REAL where text or an integer was declared:
text columns arrive as ``str`` or ``None`` (a BLOB decoded with replacement
characters; TEXT that is not UTF-8 as an ``Undecodable``, a ``str`` with
U+FFFD in place of the bad bytes, so the index and the rollups take the rest
of its text and the pass never stops on it), integer columns as ``int``
or ``None`` (anything that is not a whole number within SQLite's signed 64
bits becomes ``None``).

This is the only code that reads the store for our side data (with
:mod:`.blockread`, which it runs): the sync's batches, every session row in
blocks (:func:`read_blocks`, to notice what the runtime edited or deleted),
the queries the search uses to check each hit against the
store's own row (:func:`messages_by_id`, :func:`sessions_by_id`,
:func:`newest_messages`), the session list's filters and order as SQL
(:func:`session_list_sql`) for the side index's copy of the session columns,
and the sessions that moved since the last pass, which the list reads from
the store instead (:func:`sessions_touched_after`, :func:`session_sort_values`).
"""

from __future__ import annotations

import logging
import marshal
import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
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
from sessions_admin.store import blockread
from sessions_admin.store.backend.base import store_authorizer, store_uri
from sessions_admin.store.backend.tolerant import tolerant_rows
from sessions_admin.store.blockread import newer_sqlite, row_digest
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import (
    StoreError,
    is_read_only,
    raw_connection,
    run_sql,
    store_connection,
    store_path,
)
from sessions_admin.store.queries import (
    SORTS,
    Cursor,
    SessionFilter,
    filter_with,
    keyset_sql,
    merge_pairs,
    sort_copy,
    sorted_pairs,
)
from sessions_admin.store.toolcalls import call_key, is_tool_call, reports_error, reports_error_sql
from sessions_admin.store.values import Undecodable

logger = logging.getLogger(__name__)

#: merge_pairs and Undecodable (how an id that is not UTF-8 reads) are here for the side
#: index, which reads the store only through this module; so is the mark before every id.
__all__ = ["BEFORE_FIRST_ID", "INT_MAX", "INT_MIN", "Undecodable", "merge_pairs"]


# Not frozen: a frozen dataclass sets each of its 16 fields through
# object.__setattr__, which was 5 % of a first build's time.
@dataclass(slots=True)
class FeedMessage:
    """One message as the side index and the rollups see it."""

    id: int
    session_id: str
    role: str
    content: str
    tool_name: str | None
    tool_call_id: str | None
    tool_target: str | None
    tool_op: str | None
    tool_args: str | None
    tool_result: str | None
    tool_duration_ms: int | None
    ts: int | None
    # From the message's session row (None when the session row is missing).
    target_key: str | None
    profile_key: str | None
    principal_id: str | None
    #: Whether ``tool_result`` reports an error (:mod:`~sessions_admin.store.toolcalls`'s
    #: rule), when the read that made this message computed it in SQLite (the sync's
    #: batches); None otherwise.
    failed: bool | None = None


@dataclass(frozen=True, slots=True)
class FeedSession:
    """A session row as the side index keeps it (title and principal are searchable)."""

    id: str
    target_key: str | None
    profile_key: str | None
    principal_id: str | None
    title: str | None
    turn_count: int | None
    created_at: int | None
    last_active: int | None
    #: :func:`row_digest` of the whole row as stored (every column, any storage
    #: class): the sync compares it with the one it kept to see any edit.
    sig: bytes = b""
    #: The same over the columns a session's messages are counted under
    #: (target, profile, principal, created_at): when it changes, the sync
    #: forgets the session and takes its messages in again.
    ident: bytes = b""
    #: The row's rowid in the store (the walk's order); 0 when unknown.
    rowid: int = 0


def as_text(value: Any) -> str | None:
    """Any storage class as text: a BLOB decoded with replacement characters."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def as_int(value: Any) -> int | None:
    """A whole number SQLite can store, or ``None`` for anything else.

    Text digits are accepted; a REAL that is not whole, and any number beyond
    signed 64 bits (text digits or a REAL like ``1e300``), become ``None``:
    the listeners write these values into the side database, which would
    refuse them (``OverflowError``).
    """
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        number = value
    elif isinstance(value, float):
        if not value.is_integer():
            return None
        number = int(value)
    elif isinstance(value, str | bytes):
        try:
            number = int(value)
        except ValueError:
            return None
    else:
        return None
    return number if INT_MIN <= number <= INT_MAX else None


#: A message's own columns, then its session's (joined by the reader).
_OWN_COLUMNS = (
    "m.id, m.session_id, m.role, m.content, m.tool_name, m.tool_call_id, m.tool_target, "
    "m.tool_op, m.tool_args, m.tool_result, m.tool_duration_ms, m.ts"
)
_MESSAGE_COLUMNS = f"{_OWN_COLUMNS}, s.target_key, s.profile_key, s.principal_id"

#: The failure rule, evaluated by SQLite in the reading thread, not once per
#: result in the thread that writes the side database.
_FAILED = (
    "CASE WHEN m.tool_name IS NULL OR instr(m.tool_result, '{') = 0 "
    f"THEN 0 ELSE {reports_error_sql('m.tool_result')} END"
)
#: The batches' columns: the message's, its session's, whether it failed.
_BATCH_COLUMNS = f"{_MESSAGE_COLUMNS}, {_FAILED}"
#: The same without the session's (NULL): a first build read the session row once
#: per message (a join: a third of the read, 3.2 against 2.2 µs a row on the bench
#: store), which the sync reads again anyway inside its transaction.
_UNJOINED_COLUMNS = f"{_OWN_COLUMNS}, NULL, NULL, NULL, {_FAILED}"


def _batch_message(row: tuple) -> FeedMessage:
    message = _feed_message(row[:15])
    message.failed = bool(row[15])
    return message


def _feed_message(row: tuple) -> FeedMessage:
    (mid, sid, role, content, name, call, target, op, args, result, dur, ts, tk, pk, pr) = row
    # Nearly every value is already a str or None: test for that inline (a first
    # build normalises ten million rows), and call as_text only for the rest.
    text = str
    return FeedMessage(
        id=mid,
        session_id=sid if type(sid) is text else (as_text(sid) or ""),
        role=role if type(role) is text else (as_text(role) or ""),
        content=content if type(content) is text else (as_text(content) or ""),
        tool_name=name if name is None or type(name) is text else as_text(name),
        tool_call_id=call if call is None or type(call) is text else as_text(call),
        tool_target=target if target is None or type(target) is text else as_text(target),
        tool_op=op if op is None or type(op) is text else as_text(op),
        tool_args=args if args is None or type(args) is text else as_text(args),
        tool_result=result if result is None or type(result) is text else as_text(result),
        tool_duration_ms=dur if dur is None or type(dur) is int else as_int(dur),
        ts=ts if type(ts) is int else as_int(ts),
        target_key=tk if tk is None or type(tk) is text else as_text(tk),
        profile_key=pk if pk is None or type(pk) is text else as_text(pk),
        principal_id=pr if pr is None or type(pr) is text else as_text(pr),
    )


def _stream(sql: str, params: Sequence[Any] = ()) -> Iterator[tuple]:
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
        f"SELECT {_UNJOINED_COLUMNS} FROM session_messages AS m "
        f"WHERE {above} ORDER BY m.id LIMIT ?",
        (after, limit),
    )
    # A non-integer id cannot exist (INTEGER PRIMARY KEY is the rowid).
    return [_batch_message(row) for row in rows]


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


def session_sort_values(
    session_ids: Sequence[str],
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
) -> list[tuple[str, Any]]:
    """(id, sort value) of those of ``session_ids`` that match the whole filter now
    (its text too, folded as the index folds), after ``cursor``, in the list's order:
    at most ``limit``, read from the store's own rows."""
    column, _ = SORTS[sort]
    clauses, params = session_filter.where()
    key_clauses, key_params, order = keyset_sql(sort, cursor)
    pairs: list[tuple[str, Any]] = []
    for chunk in chunks(list(session_ids)):
        where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses, *key_clauses])
        pairs += run_sql(
            f"SELECT id, {column} FROM sessions WHERE {where} {order} LIMIT ?",
            [*chunk, *params, *key_params, limit],
        )
    return sorted_pairs(pairs, sort)[:limit]


def session_ids() -> Iterator[str]:
    """Every session id in the store, in ascending order (a walk of the primary key's index).

    A BLOB id is skipped: no message can point at it by text.
    """
    cursor = _stream("SELECT id FROM sessions ORDER BY id")
    for (session_id,) in cursor:
        if isinstance(session_id, str):
            yield session_id


def count_sessions() -> int:
    return int(run_sql("SELECT COUNT(*) FROM sessions")[0][0])


def _quoted(columns: Sequence[str]) -> str:
    # quote() writes every storage class distinctly (5, '5', X'35', NULL) and is
    # computed inside SQLite; CAST AS BLOB hands Python bytes even when a TEXT
    # value is not valid UTF-8, so a digest never fails to decode.
    quoted = " || char(31) || ".join(f"quote({c})" for c in columns)
    return f"CAST({quoted} || {_whole_if_nul(columns)} AS BLOB)"


def _whole_if_nul(columns: Sequence[str]) -> str:
    """quote() stops at a NUL in TEXT: a row holding one is also written whole, in hex,
    so an edit after the NUL changes its digest. One test per row (the columns' bytes
    joined; a test per column cost the walk 0.4 s more on 500,000 rows); the rows
    without a NUL, all but hostile ones, keep the digest they had."""
    whole = " || X'1F' || ".join(f"CAST(ifnull({c}, '') AS BLOB)" for c in columns)
    return f"CASE WHEN instr(CAST({whole} AS BLOB), X'00') THEN 'x' || hex({whole}) ELSE '' END"


#: The columns whose change moves a session's messages to other rollup cells.
IDENTITY_COLUMNS = ("target_key", "profile_key", "principal_id", "created_at")
#: Every column of a session row: any edit changes the digest.
ROW_COLUMNS = (*IDENTITY_COLUMNS, "title", "turn_count", "last_active")
SIG_SQL = _quoted(ROW_COLUMNS)
IDENT_SQL = _quoted(IDENTITY_COLUMNS)


#: An id the index can hold: TEXT that is valid UTF-8 (BLOB ids and undecodable
#: text are listed from the store, never from the index).
_TEXT_ID = "CASE WHEN typeof(id) = 'text' THEN CAST(id AS BLOB) END"

_SESSION_COLUMNS = (
    f"id, {clipped_sql('target_key')}, {clipped_sql('profile_key')}, "
    f"{clipped_sql('principal_id')}, {clipped_sql('title')}, turn_count, created_at, last_active, "
    f"{SIG_SQL}, {IDENT_SQL}, rowid"
)


def _feed_session(row: tuple) -> FeedSession:
    sid, target, profile, principal, title, turns, created, last, sig, ident, rowid = row
    return FeedSession(
        id=as_text(sid) or "",
        target_key=as_text(target),
        profile_key=as_text(profile),
        principal_id=as_text(principal),
        title=as_text(title),
        turn_count=as_int(turns),
        created_at=as_int(created),
        last_active=as_int(last),
        sig=row_digest(sig),
        ident=row_digest(ident),
        rowid=rowid,
    )


def decoded_id(raw: bytes | None) -> str | None:
    """A session id from its stored TEXT bytes (None: not TEXT, a BLOB or a number).

    TEXT that is not valid UTF-8 comes back as an :class:`Undecodable`: it equals
    its text with replacement characters, which is how the sync holds such a
    session once a batch took it in, and it binds back to its exact bytes
    (:func:`run_sql`), so the pass reads the right row.
    """
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(raw)


#: Session rows per block of the walk (:func:`read_blocks`): rowids
#: ``block << BLOCK_BITS`` up to the next block's first. Small blocks keep
#: the rows an edit sends to be compared one by one few (16 per edited block);
#: the read of every block costs the same from 16 rows to 512 (0.8 CPU-s on
#: 500,000 rows on the loaded bench machine, 2026-12-01).
BLOCK_BITS = 4
_BLOCK = 1 << BLOCK_BITS
#: One row as a block's text holds it: rowid, id and every column, each written
#: distinctly (``quote``), the row ended by char(30).
_ROW_TEXT = (
    f"rowid || char(31) || quote(id) || {_whole_if_nul(['id'])} || char(31) || {SIG_SQL} "
    "|| char(30)"
)
# Each block of rowids ?1..?2 that holds a row: (block, its rows' text). Empty
# stretches of rowids are skipped with one seek each (the recursive step finds
# the next rowid), so rowids far apart or negative cost nothing; SQLite writes
# a block's rows out in C, no Python per row. Within a block group_concat
# meets the rows in rowid order (a range scan); were it ever otherwise a block
# would only look changed and be compared row by row: slower, never wrong.
_BLOCK_SQL = f"""
WITH RECURSIVE b(lo) AS (
  SELECT (SELECT rowid FROM sessions WHERE rowid >= ?1 ORDER BY rowid LIMIT 1)
    >> {BLOCK_BITS} << {BLOCK_BITS}
  UNION ALL
  SELECT (SELECT rowid FROM sessions WHERE rowid >= b.lo + {_BLOCK} ORDER BY rowid LIMIT 1)
    >> {BLOCK_BITS} << {BLOCK_BITS}
  FROM b WHERE b.lo IS NOT NULL AND b.lo + {_BLOCK} <= ?2
)
SELECT lo >> {BLOCK_BITS}, (
  SELECT CAST(group_concat({_ROW_TEXT}, '') AS BLOB) FROM sessions
  WHERE rowid >= max(b.lo, ?1) AND rowid < b.lo + {_BLOCK} AND rowid <= ?2
) FROM b WHERE lo IS NOT NULL AND lo <= ?2
"""
_ROWS_SQL = (
    f"SELECT rowid, {_TEXT_ID}, {SIG_SQL} FROM sessions WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
)


def block_ranges(blocks: Iterable[int]) -> Iterator[tuple[int, int]]:
    """Runs of consecutive blocks as rowid ranges ``(first, last)``, in order."""
    return blockread.ranges(blocks, BLOCK_BITS)


@dataclass(frozen=True)
class BlockPart:
    """Blocks of session rows that differ from the digests kept (:func:`read_blocks`)."""

    #: The blocks, in order.
    blocks: list[int]
    #: The store's digest of each of them that holds a row.
    digests: dict[int, bytes]
    #: Their rows, ``(rowid, id, digest)`` in rowid order: the id None where it is
    #: not text the index can hold, the digest :func:`row_digest` of the same
    #: columns as :attr:`FeedSession.sig`.
    rows: list[tuple[int, str | None, bytes]]


def read_blocks(kept: dict[int, bytes]) -> Iterator[BlockPart]:
    """The session rows in blocks (:data:`BLOCK_BITS`), each block's digest compared
    with ``kept``; the blocks that differ, and those kept that the store has no row
    in any more, with their rows, in parts, read as :mod:`.blockread` says.

    On a big store the two halves of the rowids are read at once by two
    processes of their own (two cores), each in one snapshot; the halves'
    snapshots may differ by a commit, which the walk allows for. Otherwise in
    this process, in one snapshot.
    """
    job = {
        "kept": dict(kept),
        "ranges": [(INT_MIN, INT_MAX)],
        "bits": BLOCK_BITS,
        "part_blocks": PART_BLOCKS,
        "block_sql": _BLOCK_SQL,
        "rows_sql": _ROWS_SQL,
        "timeout": float(store_connection().settings_dict.get("OPTIONS", {}).get("timeout", 5)),
    }
    raw_connection()  # ours is open first and closes last: see blockread
    split = _split_rowid()
    parts = _read_here(job) if split is None else _read_in_children(job, split)
    for blocks, digests, rows in parts:
        yield BlockPart(blocks, digests, [(r, decoded_id(raw), d) for r, raw, d in rows])


#: Blocks per part of a read: the rows of every block that differs are all
#: 500,000 on a first pass, so they come in parts the walk takes one by one.
PART_BLOCKS = 1024

#: Below this many rowids between the first session row and the last, the block
#: read runs in this process: starting processes costs more than it saves.
CHILD_FROM_ROWIDS = 50_000


def _split_rowid() -> int | None:
    """The first rowid of the upper half, on a block's edge, when processes of their
    own should read the halves (a big store, and ``pysqlite3`` installed)."""
    if newer_sqlite() is None or not sys.executable:
        return None
    low, high = run_sql("SELECT min(rowid), max(rowid) FROM sessions")[0]
    if low is None or high - low < CHILD_FROM_ROWIDS:
        return None
    return (low + (high - low) // 2) >> BLOCK_BITS << BLOCK_BITS


def _read_in_children(job: dict, split: int) -> Iterator[tuple]:
    edge = split >> BLOCK_BITS
    halves = [
        ((INT_MIN, split - 1), {b: d for b, d in job["kept"].items() if b < edge}),
        ((split, INT_MAX), {b: d for b, d in job["kept"].items() if b >= edge}),
    ]
    uri = store_uri(store_path(), read_only=True)
    with ExitStack() as stack:
        children = []
        for span, kept in halves:
            child = stack.enter_context(
                subprocess.Popen(
                    [sys.executable, "-I", blockread.__file__],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
            )
            child.stdin.write(marshal.dumps({**job, "uri": uri, "ranges": [span], "kept": kept}))
            child.stdin.close()
            children.append(child)
        for child in children:
            yield from _answers(child)


def _answers(child: subprocess.Popen) -> Iterator[tuple]:
    while True:
        try:
            yield marshal.load(child.stdout)
        except EOFError:
            break
    error = child.stderr.read().decode("utf-8", "replace").strip()
    if child.wait() != 0:
        raise StoreError(f"The session walk's read of the store failed: {error[-300:]}")


def _read_here(job: dict) -> Iterator[tuple]:
    # The standard library's SQLite, the one the dashboard's connection uses: safe
    # in this process. Opened as that connection is (mode, authorizer).
    conn = sqlite3.connect(
        store_uri(store_path(), read_only=is_read_only()),
        uri=True,
        isolation_level=None,
        timeout=job["timeout"],
    )
    try:
        conn.set_authorizer(store_authorizer)
        yield from blockread.read(conn, job)
    finally:
        conn.close()


def all_sessions() -> Iterator[FeedSession]:
    """Every session row, in the table's own order (one sequential scan; a first build)."""
    for row in _stream(f"SELECT {_SESSION_COLUMNS} FROM sessions"):
        session = _feed_session(row)
        if isinstance(row[0], str):
            yield session


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
            _batch_message(row)
            for row in run_sql(
                f"SELECT {_BATCH_COLUMNS} FROM session_messages AS m "
                "JOIN sessions AS s ON s.id = m.session_id "
                f"WHERE m.session_id IN ({marks}) AND m.id <= ?",
                [*chunk, up_to_id],
            )
        )
    found.sort(key=lambda m: m.id)
    return found


def present_session_ids(session_ids: Sequence[str]) -> set[str]:
    """Those of these session ids the store has a row for (one index probe each)."""
    found: set[str] = set()
    for chunk in chunks(dict.fromkeys(session_ids)):
        marks = placeholders(len(chunk))
        rows = run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", chunk)
        found.update(row[0] for row in rows)
    return found


def sessions_by_id(session_ids: Sequence[str]) -> dict[str, FeedSession]:
    """The current rows of these sessions (missing ones are left out)."""
    found: dict[str, FeedSession] = {}
    for chunk in chunks(dict.fromkeys(session_ids)):
        marks = placeholders(len(chunk))
        for row in run_sql(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id IN ({marks})", chunk):
            session = _feed_session(row)
            found[session.id] = session
    return found


@dataclass(frozen=True, slots=True)
class SortKeys:
    """A session's sort values as our label rows copy them
    (:func:`sessions_admin.store.queries.sort_copy`: ``None`` where no integer
    orders as the stored value does). ``created_at`` also tells a session from
    one the runtime re-created under the same id."""

    last_active: int | None
    created_at: int | None
    turn_count: int | None


def sort_keys(session_ids: Sequence[str]) -> dict[str, SortKeys]:
    """The sort values of these sessions (missing ones are left out)."""
    found: dict[str, SortKeys] = {}
    for chunk in chunks(list(dict.fromkeys(session_ids))):
        marks = placeholders(len(chunk))
        for sid, last, created, turns in run_sql(
            f"SELECT id, last_active, created_at, turn_count FROM sessions WHERE id IN ({marks})",
            chunk,
        ):
            if isinstance(sid, str):
                found[sid] = SortKeys(
                    sort_copy(last, "last_active"),
                    sort_copy(created, "created_at"),
                    sort_copy(turns, "turn_count"),
                )
    return found


def sessions_touched_after(after_id: int, cap: int) -> set[str] | None:
    """The sessions with a message after ``after_id`` (whose last activity and turn
    count the runtime's trigger changed since), or ``None`` when more than ``cap``
    messages came since (a walk of the rowid from ``after_id``: cheap when few)."""
    # Grouped in SQLite: a session's messages come back as one row, not one each.
    above, after = id_above("id", after_id)
    rows = run_sql(
        "SELECT session_id, COUNT(*) FROM (SELECT session_id FROM session_messages "
        f"WHERE {above} ORDER BY id LIMIT ?) GROUP BY session_id",
        (after, cap + 1),
    )
    if sum(count for _, count in rows) > cap:
        return None
    return {sid for sid, _ in rows if isinstance(sid, str)}


def messages_by_id(message_ids: Sequence[int]) -> dict[int, FeedMessage]:
    """The store's current rows for these message ids (deleted ones are left out).

    The search checks every index hit against this, so a message the runtime
    deleted, or an index that drifted, can never show a false hit.
    """
    found: dict[int, FeedMessage] = {}
    for chunk in chunks(dict.fromkeys(message_ids)):
        marks = placeholders(len(chunk))
        for row in run_sql(
            f"SELECT {_MESSAGE_COLUMNS} FROM session_messages AS m "
            f"JOIN sessions AS s ON s.id = m.session_id WHERE m.id IN ({marks})",
            chunk,
        ):
            message = _feed_message(row)
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
        f"SELECT {_MESSAGE_COLUMNS} FROM session_messages AS m "
        "JOIN sessions AS s ON s.id = m.session_id "
        f"WHERE {below} AND {above} ORDER BY m.id DESC LIMIT ?",
        (upper, after, limit),
    )
    return [_feed_message(row) for row in rows]


def session_list_sql(
    session_filter: SessionFilter, sort: str, cursor: Cursor | None
) -> tuple[str, list[str], list[Any], str]:
    """The list's sort column, its filters (all but its text search) and keyset for
    ``sort`` after ``cursor``: column, WHERE clauses, their parameters and the ORDER BY,
    over the store's session columns, which the side index's ``search_sessions``
    copies by name."""
    column, _ = SORTS[sort]
    clauses, params = filter_with(session_filter, q=None).where()
    key_clauses, key_params, order = keyset_sql(sort, cursor)
    return column, clauses + key_clauses, params + key_params, order


# The brute-force readings ``sync_index --verify`` compares the side data with.
# Each reads the whole store once (minutes on ten million messages): an
# operator's check, never a page's.


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
    for sid, ts in _stream(
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
    for mid, sid, name, call_id, ts, result in _stream(
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


def store_file() -> str:
    """The store's file, resolved (symlinks followed): what our data folder is made for."""
    return os.path.realpath(store_path())
