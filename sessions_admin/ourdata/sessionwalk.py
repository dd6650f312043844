"""Which session rows changed since the last pass: one walk of the store beside ours.

The store gives us no change log and we may add no trigger to it, so every
pass reads every session row. The sync keeps, per session, its rowid, id and
the digest of every column as stored (``sync_sessions``: :func:`feed.row_digest`),
and compares them with the store's rows like two sorted files:

* a rowid only we hold: a session the store lost (deleted);
* a rowid only the store holds: a session new to us;
* the same rowid and id with another digest: an edited row (title,
  principal, target, profile, created_at, turn_count, last_active);
* an id under another rowid: a deleted and re-created id (SQLite gives the
  new row a new rowid unless the old one was the table's last), or a
  ``VACUUM`` that renumbered the table. The sync takes such a session in
  again from scratch: its old messages may be gone.

Row by row in Python that costs 2.2 CPU-s on 500,000 sessions, so the rows
are compared in blocks of 16 rowids first (``sync_blocks``): SQLite writes
each block's rows out as one text, in C (:func:`feed.read_blocks`), and a
block whose digest equals the one kept is unchanged; only the rows of the
other blocks come to Python to be compared. A block's digest is kept only
when its rows as the store had them were found equal to what
``sync_sessions`` holds, inside a side transaction: by the walk itself (a
block with no digest yet, e.g. after a first build), or by :func:`settle`
once the pass has taken in the changes. Any later write to
``sync_sessions`` in a block clears its digest (triggers), so an equal digest
always means the store's rows are what we hold. A block the store has no
rows in any more is compared too.

Only the differences are held in memory. A session whose id is not
text the index can hold exactly (a BLOB, or TEXT that is not valid UTF-8) is
counted: the list then reads its filters from the store. A BLOB id is not
indexed at all (no message can name it). TEXT that is not valid UTF-8 is held
under its exact bytes (:func:`sidedb.bind_id`), its messages searched like any
other's, and compared as such here: walking past it as unknown made every
pass after a build forget it, and holding it under its text with replacement
characters made two ids that read alike one session.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from dataclasses import dataclass, field

from sessions_admin.ourdata import sidedb
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store import feed
from sessions_admin.store.feed import Undecodable

SCHEMA = """
CREATE TABLE IF NOT EXISTS sync_sessions (
  id TEXT PRIMARY KEY, srowid INTEGER NOT NULL, sig BLOB NOT NULL, ident BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sync_sessions_walk ON sync_sessions (srowid, sig);
CREATE TABLE IF NOT EXISTS sync_blocks (
  block INTEGER PRIMARY KEY, digest BLOB, unindexable INTEGER NOT NULL DEFAULT 0
);
"""

_BITS = feed.BLOCK_BITS

# Triggers hold a ";" inside, which sidedb.run_script would split: created one by one.
_TRIGGERS = [
    f"""CREATE TRIGGER IF NOT EXISTS sync_sessions_{event}_block AFTER {event} ON sync_sessions
    BEGIN
      INSERT INTO sync_blocks (block) VALUES ({row}.srowid >> {_BITS})
      ON CONFLICT (block) DO UPDATE SET digest = NULL;
    END"""
    for event, row in (("insert", "new"), ("delete", "old"), ("update", "old"))
] + [
    f"""CREATE TRIGGER IF NOT EXISTS sync_sessions_moved_block AFTER UPDATE OF srowid
    ON sync_sessions BEGIN
      INSERT INTO sync_blocks (block) VALUES (new.srowid >> {_BITS})
      ON CONFLICT (block) DO UPDATE SET digest = NULL;
    END"""
]

#: Rows of changed blocks a walk keeps for :func:`settle`; a block past this is
#: settled by the next pass instead (memory stays small after a mass edit).
SETTLE_ROWS = 200_000


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
    #: Blocks that held a change: what the store held in each (digest, rows,
    #: unindexable rows), for :func:`settle` once the changes are in.
    unsettled: dict[int, tuple[bytes | None, frozenset, int]] = field(default_factory=dict)


_END = (1 << 63, None, b"")


def _prepare(side: sqlite3.Connection) -> None:
    """The triggers, and a block row for every block we hold rows in (a side file
    from before the blocks, or a first build, which ran without the triggers).

    Blocks kept with another size are dropped first: their numbers mean other rowids.
    """
    with sidedb.transaction(side):
        for trigger in _TRIGGERS:
            side.execute(trigger)
        bits = side.execute("SELECT value FROM sync_state WHERE key = 'walk_block_bits'")
        if bits.fetchone() != (_BITS,):
            side.execute("DELETE FROM sync_blocks")
            side.execute(
                "INSERT INTO sync_state (key, value) VALUES ('walk_block_bits', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (_BITS,),
            )
        if side.execute("SELECT 1 FROM sync_blocks LIMIT 1").fetchone() is None:
            side.execute(
                f"INSERT INTO sync_blocks (block) SELECT DISTINCT srowid >> {_BITS} "
                "FROM sync_sessions"
            )


def _ours(side: sqlite3.Connection, blocks: list[int]) -> list[tuple[int, str, bytes]]:
    """What we hold in these blocks, ``(srowid, id, digest)`` in rowid order."""
    rows: list[tuple[int, str, bytes]] = []
    for first, last in feed.block_ranges(blocks):
        rows.extend(
            (srowid, sidedb.read_id(sid), sig)
            for srowid, sid, sig in side.execute(
                "SELECT srowid, id, sig FROM sync_sessions WHERE srowid BETWEEN ? AND ? "
                "ORDER BY srowid, sig",
                (first, last),
            )
        )
    return rows


def _unindexable(session_id: str | None) -> bool:
    """An id the list cannot read back from the index exactly (see the module's docstring)."""
    return session_id is None or isinstance(session_id, Undecodable)


def _by_block(rows: list[tuple]) -> dict[int, frozenset]:
    """Rows grouped by block, those with a BLOB id (no text to hold it by) left out."""
    found: dict[int, list[tuple]] = {}
    for row in rows:
        if row[1] is not None:
            found.setdefault(row[0] >> _BITS, []).append(row)
    return {block: frozenset(part) for block, part in found.items()}


class _Merge:
    """The store's rows and ours, block part by block part, merged like two sorted files."""

    def __init__(self, result: Walk) -> None:
        self.result = result
        self.lost: dict[str, int] = {}
        self.found: dict[str, int] = {}

    def add(self, ours: list[tuple], theirs: list[tuple]) -> None:
        result, lost, found = self.result, self.lost, self.found
        a_rows, b_rows = iter(ours), iter(theirs)
        a, b = next(a_rows, _END), next(b_rows, _END)
        while a is not _END or b is not _END:
            if b is not _END and b[1] is None:
                b = next(b_rows, _END)  # a BLOB id: never held (counted by walk)
            elif a[0] < b[0]:
                lost[a[1]] = a[0]
                a = next(a_rows, _END)
            elif b[0] < a[0]:
                found[b[1]] = b[0]
                b = next(b_rows, _END)
            else:
                if a[1] == b[1]:
                    if a[2] != b[2]:
                        # The store's id: an Undecodable binds to its exact bytes.
                        result.changed.append(b[1])
                else:
                    lost[a[1]] = a[0]
                    found[b[1]] = b[0]
                a, b = next(a_rows, _END), next(b_rows, _END)

    def finish(self) -> None:
        result = self.result
        for sid in [sid for sid in self.found if sid in self.lost]:  # the store's ids
            del self.lost[sid], self.found[sid]
            result.moved.append(sid)
        result.moved.sort()
        result.gone = sorted(self.lost)
        result.new = sorted(self.found)


def walk(side: sqlite3.Connection) -> Walk:
    """Compare every store session row with what the last pass kept.

    A block that differs from its digest only because the digest was missing
    or stale (its rows are what we hold) is settled here, in the transaction
    that read our rows; the others wait for :func:`settle`.
    """
    _prepare(side)
    kept: dict[int, bytes] = dict(side.execute("SELECT block, digest FROM sync_blocks"))
    counts = dict(side.execute("SELECT block, unindexable FROM sync_blocks WHERE unindexable"))
    result = Walk()
    merge = _Merge(result)
    seen: set[int] = set()
    for part in feed.read_blocks(kept):
        seen.update(part.blocks)
        theirs = _by_block(part.rows)
        unindexable = Counter(row[0] >> _BITS for row in part.rows if _unindexable(row[1]))
        result.unindexable += sum(unindexable.values())
        with sidedb.transaction(side):
            ours_rows = _ours(side, part.blocks)
            ours = _by_block(ours_rows)
            equal = [b for b in part.blocks if ours.get(b) == theirs.get(b)]
            _keep_digests(side, equal, part.digests, unindexable)
        merge.add(ours_rows, part.rows)
        room = SETTLE_ROWS - sum(len(rows) for _, rows, _ in result.unsettled.values())
        for block in part.blocks:
            rows = theirs.get(block, frozenset())
            if ours.get(block) != theirs.get(block) and len(rows) <= room:
                result.unsettled[block] = (part.digests.get(block), rows, unindexable[block])
                room -= len(rows)
    merge.finish()
    _allow_for_skew(side, result)
    result.unindexable += sum(n for block, n in counts.items() if block not in seen)
    return result


def _allow_for_skew(side: sqlite3.Connection, result: Walk) -> None:
    """Ids that moved while the store was read, or since, taken in again from scratch.

    The halves of a big store are read in two snapshots, and the pass applies
    what the walk found later still: a row moved from one block to another
    in between may be seen in neither place (it looks deleted) or in both (a
    "new" id we hold at its old rowid). Either is a session to forget and take
    in again as the store has it when the pass reads its row.
    """
    if result.new:
        held = set(_held_ids(side, result.new))
        if held:
            again = [sid for sid in result.new if sid in held]  # the store's ids
            result.new = [sid for sid in result.new if sid not in held]
            result.moved = sorted({*result.moved, *again})
    if result.gone:
        present = feed.present_session_ids(result.gone)
        if present:
            result.gone = [sid for sid in result.gone if sid not in present]
            result.moved = sorted({*result.moved, *present})


def _held_ids(side: sqlite3.Connection, session_ids: list[str]) -> list[str]:
    rows: list[str] = []
    for chunk in chunks(session_ids):
        marks = placeholders(len(chunk))
        rows += [
            sidedb.read_id(sid)
            for (sid,) in side.execute(
                f"SELECT id FROM sync_sessions WHERE id IN ({marks})",
                [sidedb.bind_id(sid) for sid in chunk],
            )
        ]
    return rows


def _keep_digests(
    side: sqlite3.Connection, blocks: list[int], digests: dict[int, bytes], unindexable: Counter
) -> None:
    """Record these blocks as equal to what we hold (in the caller's transaction)."""
    side.executemany(
        "INSERT INTO sync_blocks (block, digest, unindexable) VALUES (?, ?, ?) "
        "ON CONFLICT (block) DO UPDATE SET digest = excluded.digest, "
        "unindexable = excluded.unindexable",
        [(b, digests[b], unindexable[b]) for b in blocks if b in digests],
    )
    side.executemany(
        "DELETE FROM sync_blocks WHERE block = ?", [(b,) for b in blocks if b not in digests]
    )


def settle(side: sqlite3.Connection, found: Walk) -> None:
    """Keep the digest of each block the walk saw change whose rows, as the walk read
    them, are now what we hold (the pass has taken the changes in).

    In one side transaction, so no other write to ``sync_sessions`` comes
    between the comparison and the digest. A block the store changed again
    since the walk differs from what the pass took in: it keeps no digest and
    is compared row by row next time.
    """
    if not found.unsettled:
        return
    blocks = sorted(found.unsettled)
    with sidedb.transaction(side):
        ours = _by_block(_ours(side, blocks))
        equal = [b for b in blocks if ours.get(b, frozenset()) == found.unsettled[b][1]]
        digests = {b: found.unsettled[b][0] for b in equal if found.unsettled[b][0] is not None}
        counts = Counter({b: found.unsettled[b][2] for b in equal})
        _keep_digests(side, equal, digests, counts)
