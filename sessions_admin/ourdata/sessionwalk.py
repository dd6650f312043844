"""Which session rows changed since the last pass: one walk of the store beside ours.

The store gives us no change log and we may add no trigger to it, so every
pass reads every session row once, in the table's own order (a sequential
scan: the cheapest way through 500,000 rows), as ``(rowid, id, digest)``
where the digest covers every column as stored (:func:`feed.row_digest`).
The sync keeps the same three values per session (``sync_sessions``,
indexed by rowid), so the two streams merge like two sorted files:

* a rowid only we hold: a session the store lost (deleted);
* a rowid only the store holds: a session new to us;
* the same rowid and id with another digest: an edited row (title,
  principal, target, profile, created_at, turn_count, last_active);
* an id under another rowid: a deleted and re-created id (SQLite gives the
  new row a new rowid unless the old one was the table's last), or a
  ``VACUUM`` that renumbered the table. The sync takes such a session in
  again from scratch: its old messages may be gone.

Only the differences are held in memory. A session whose id is not text the
index can hold (a BLOB, or TEXT that is not valid UTF-8) is counted, not
indexed: the list then reads such filters from the store.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass, field

from sessions_admin.store import feed

SCHEMA = """
CREATE TABLE IF NOT EXISTS sync_sessions (
  id TEXT PRIMARY KEY, srowid INTEGER NOT NULL, sig BLOB NOT NULL, ident BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sync_sessions_walk ON sync_sessions (srowid, sig);
"""


@dataclass
class Walk:
    """What one walk found; ids in each list are distinct and in no other list."""

    gone: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    #: Ids found under another rowid than the one kept (re-created, or renumbered).
    moved: list[str] = field(default_factory=list)
    #: Rows whose id the index cannot hold (BLOB, or TEXT that is not UTF-8).
    unindexable: int = 0


_END = (1 << 63, None, b"")


def _ours(side: sqlite3.Connection) -> Iterator[tuple[int, str, bytes]]:
    yield from side.execute("SELECT srowid, id, sig FROM sync_sessions ORDER BY srowid, sig")


def walk(side: sqlite3.Connection) -> Walk:
    """Compare every store session row with what the last pass kept."""
    result = Walk()
    lost: dict[str, tuple[int, bytes]] = {}
    found: dict[str, tuple[int, bytes]] = {}
    ours, theirs = _ours(side), feed.session_walk()
    a, b = next(ours, _END), next(theirs, _END)
    while a is not _END or b is not _END:
        if b is not _END and b[1] is None:
            result.unindexable += 1
            b = next(theirs, _END)
        elif a[0] < b[0]:
            lost[a[1]] = (a[0], a[2])
            a = next(ours, _END)
        elif b[0] < a[0]:
            found[b[1]] = (b[0], b[2])
            b = next(theirs, _END)
        else:
            if a[1] == b[1]:
                if a[2] != b[2]:
                    result.changed.append(a[1])
            else:
                lost[a[1]] = (a[0], a[2])
                found[b[1]] = (b[0], b[2])
            a, b = next(ours, _END), next(theirs, _END)
    for sid in lost.keys() & found.keys():
        del lost[sid], found[sid]
        result.moved.append(sid)
    result.moved.sort()
    result.gone = sorted(lost)
    result.new = sorted(found)
    return result
