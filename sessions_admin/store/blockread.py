"""The sync's read of every session row in blocks, in one snapshot, in a process of its own.

Run as a script (``python -I blockread.py``) by :func:`sessions_admin.store.feed.read_blocks`,
it imports nothing but the standard library and ``pysqlite3``: the SQL comes
in on stdin with everything else (``marshal``), the answer goes out on stdout.

Why a process: the walk writes every session row out as text in SQL
(``quote`` of each column), and the system's SQLite 3.40, built without
lookaside memory, pays a ``malloc`` for each value: twice the CPU of
``pysqlite3``'s newer SQLite. But
two copies of SQLite in one process must never open the same file: POSIX
locks belong to the process, so closing one copy's handle drops the other's
locks, and the closer believes it is the last connection and checkpoints and
deletes the store's ``-wal`` and ``-shm`` under the open one (seen here once:
"disk I/O error"; sqlite.org/howtocorrupt.html, 2.2.1). In a process of its
own the newer SQLite is just another reader. Without ``pysqlite3`` the same
code runs in the dashboard's process on the standard library's connection.

The store is opened ``mode=ro`` with ``query_only``: this process cannot
write to it. It never leaves ``-wal``/``-shm`` behind either: the dashboard's
own connection, opened before it, has them open and is the last to close.
"""

from __future__ import annotations

import hashlib
import marshal
import sqlite3
import sys
from collections.abc import Iterable, Iterator
from typing import Any

try:  # the pysqlite3-binary wheel (SQLite 3.51), when installed
    import pysqlite3.dbapi2 as pysqlite3  # type: ignore[import-not-found]
except ImportError:
    pysqlite3 = None

INT_MIN = -(1 << 63)
INT_MAX = (1 << 63) - 1


def newer_sqlite() -> Any | None:
    """``pysqlite3`` when it is installed and newer than the standard library's SQLite."""
    if pysqlite3 is None:
        return None
    version = tuple(map(int, pysqlite3.sqlite_version.split(".")))
    return pysqlite3 if version > sqlite3.sqlite_version_info else None


def block_digest(text: bytes) -> bytes:
    """Sixteen bytes of BLAKE2b over a block's text (a collision is a 2**-128 chance)."""
    return hashlib.blake2b(text, digest_size=16).digest()


def row_digest(quoted: bytes) -> bytes:
    """Eight bytes of BLAKE2b over a row's quoted columns (a collision is a 2**-64 chance)."""
    return hashlib.blake2b(quoted, digest_size=8).digest()


def ranges(blocks: Iterable[int], bits: int) -> Iterator[tuple[int, int]]:
    """Runs of consecutive blocks as rowid ranges ``(first, last)``, in order."""
    run: list[int] = []
    for block in sorted(blocks):
        if run and block != run[1] + 1:
            yield run[0] << bits, ((run[1] + 1) << bits) - 1
            run = []
        run = [run[0] if run else block, block]
    if run:
        yield run[0] << bits, ((run[1] + 1) << bits) - 1


def read(conn: Any, job: dict) -> Iterator[tuple[list[int], dict[int, bytes], list]]:
    """Inside one read transaction of ``conn``, in parts of up to ``job["part_blocks"]``
    blocks: ``(blocks, digests, rows)`` for the blocks in ``job["ranges"]`` whose
    digest differs from ``job["kept"]`` (every block when ``kept`` is None) and the
    kept blocks the store has no row in any more, blocks in order; ``digests``
    the store's digest of each of them that holds a row, ``rows`` their rows,
    ``(rowid, raw id or None, row digest)`` in rowid order.
    """
    kept: dict[int, bytes] | None = job["kept"]
    digests: dict[int, bytes] = {}
    conn.execute("BEGIN")
    try:
        for first, last in job["ranges"]:
            for block, text in conn.execute(job["block_sql"], (first, last)):
                digest = block_digest(text)
                if kept is None or kept.pop(block, None) != digest:
                    digests[block] = digest
        differ = sorted([*digests, *(kept or ())])
        size = job["part_blocks"]
        for start in range(0, len(differ), size):
            blocks = differ[start : start + size]
            rows = [
                (rowid, raw, row_digest(sig))
                for first, last in ranges(blocks, job["bits"])
                for rowid, raw, sig in conn.execute(job["rows_sql"], (first, last))
            ]
            yield blocks, {b: digests[b] for b in blocks if b in digests}, rows
    finally:
        conn.execute("COMMIT")


def main() -> None:
    job = marshal.load(sys.stdin.buffer)
    module = newer_sqlite() or sqlite3
    conn = module.connect(job["uri"], uri=True, isolation_level=None, timeout=job["timeout"])
    try:
        conn.execute("PRAGMA query_only = 1")
        for part in read(conn, job):
            marshal.dump(part, sys.stdout.buffer)
    finally:
        conn.close()


if __name__ == "__main__":
    main()
