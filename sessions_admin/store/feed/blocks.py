"""Every session row read in blocks of rowids, each with a digest, so a pass notices what the
runtime edited or deleted; a big store is read by child processes (:mod:`..blockread`)."""

from __future__ import annotations

import marshal
import sqlite3
import subprocess
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass

from sessions_admin.sqlhelpers import (
    INT_MAX,
    INT_MIN,
)
from sessions_admin.store import blockread
from sessions_admin.store.backend.base import store_authorizer, store_uri
from sessions_admin.store.blockread import newer_sqlite
from sessions_admin.store.connection import (
    StoreError,
    is_read_only,
    raw_connection,
    run_sql,
    store_connection,
    store_path,
)
from sessions_admin.store.feed.messages import stream
from sessions_admin.store.feed.rows import FeedSession
from sessions_admin.store.feed.sessions import (
    SESSION_COLUMNS,
    SIG_SQL,
    TEXT_ID,
    decoded_id,
    feed_session,
    whole_if_nul,
)

#: Session rows per block of the walk (:func:`read_blocks`): rowids
#: ``block << BLOCK_BITS`` up to the next block's first. Small blocks keep
#: the rows an edit sends to be compared one by one few (16 per edited block);
#: the read of every block costs the same from 16 rows to 512.
BLOCK_BITS = 4

_BLOCK = 1 << BLOCK_BITS

#: One row as a block's text holds it: rowid, id and every column, each written
#: distinctly (``quote``), the row ended by char(30).
_ROW_TEXT = (
    f"rowid || char(31) || quote(id) || {whole_if_nul(['id'])} || char(31) || {SIG_SQL} || char(30)"
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
    f"SELECT rowid, {TEXT_ID}, {SIG_SQL} FROM sessions WHERE rowid BETWEEN ? AND ? ORDER BY rowid"
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
    for row in stream(f"SELECT {SESSION_COLUMNS} FROM sessions"):
        session = feed_session(row)
        if isinstance(row[0], str):
            yield session
