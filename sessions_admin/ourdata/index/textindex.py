"""The trigram index over message text (``search_text``) and what the side database
reads of it: the table's operations (:class:`TextIndex`), the documents it holds
(:func:`blocks`), how far it holds every message (:func:`indexed_through`) and
whether it is the side database's own (:func:`paired`).

**One document per block of a session's messages.** A pass cuts each batch's
messages into blocks: the messages of one session, at most :data:`BLOCK_MESSAGES`
of them, within :data:`SPAN` ids. A block's rowid is its highest message id and
``search_blocks`` keeps its lowest; its document is its messages' documents
joined. A trigram a session repeats is then kept once per block, not once per
message: on the 10-million-message bench store the index went from 1.47 GB to
less than half (see ``docs/benchmarks-history.md``). The search expands each
matching block into its session's messages in that id range
(:mod:`.search`) and checks each against the store, as it did every candidate.

Every message of a session between a block's lowest and highest id is in that
block: a batch puts all of a session's messages in it into its blocks, and
later batches only hold higher ids. A block is dropped only with its whole
session (:meth:`TextIndex.delete` is given every message id of the session);
dropping some messages of a session indexes the rest again.

The index lives in ``side-text.sqlite3`` (:func:`~sessions_admin.ourdata.sidedb.text_path`),
attached to every side connection as ``text``; during a pass
:mod:`~sessions_admin.ourdata.index.textwriter` writes it from a thread of its own.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index.text import document
from sessions_admin.sqlhelpers import BEFORE_FIRST_ID
from sessions_admin.store.feed import FeedMessage

FTS = (
    "USING fts5(body, content='', contentless_delete=1, detail=none, "
    "tokenize='trigram case_sensitive 1')"
)


#: A block's messages lie within this many ids of its highest (the search starts its
#: walk this far above a page's cursor), and it holds at most this many.
SPAN = 50_000
BLOCK_MESSAGES = 64
#: Between two messages' documents in a block's.
MESSAGE_SEPARATOR = "\x1e"

#: FTS5's settings while a first build runs, and its defaults (see ``TextWriter.build_mode``).
BUILD_SETTINGS = {"automerge": 0, "crisismerge": 64, "hashsize": 8 * 1024 * 1024}
DEFAULT_SETTINGS = {
    "automerge": 4,
    "crisismerge": 16,
    "hashsize": 1024 * 1024,
    "deletemerge": 10,
}
#: FTS5 rewrites a segment once this percent of its rows are deleted (its default).
DELETE_MERGE = DEFAULT_SETTINGS["deletemerge"]


class TextIndex:
    """``search_text`` and its mark, in the schema ``schema`` of one connection."""

    def __init__(self, conn: sqlite3.Connection, schema: str) -> None:
        self.conn = conn
        self.schema = schema

    def create(self) -> None:
        s = self.schema
        self.conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS {s}.search_text {FTS}")
        self.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.text_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID"
        )
        # Each block's lowest message id, by its rowid in search_text (its highest).
        self.conn.execute(
            f"CREATE TABLE IF NOT EXISTS {s}.search_blocks "
            "(high INTEGER PRIMARY KEY, low INTEGER NOT NULL)"
        )

    def drop(self) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {self.schema}.search_text")
        self.conn.execute(f"DROP TABLE IF EXISTS {self.schema}.text_state")
        self.conn.execute(f"DROP TABLE IF EXISTS {self.schema}.search_blocks")

    def mark(self) -> int:
        """The highest message id this file ever took in (``BEFORE_FIRST_ID``: none)."""
        row = self.conn.execute(
            f"SELECT value FROM {self.schema}.text_state WHERE key = 'max_id'"
        ).fetchone()
        return int(row[0]) if row and isinstance(row[0], int) else BEFORE_FIRST_ID

    def add(self, rows: Sequence[tuple[int, int, str]]) -> None:
        """Index these blocks (highest id, lowest id, folded document: :func:`blocks`).

        A block holding a message at or below the mark (a session taken in
        again, a batch redone after a crash between the two commits) replaces
        any block of the same rowid; a block left from a batch redone with
        other contents only overlaps the new ones, and the search reads each
        message once.
        """
        if not rows:
            return
        s = self.schema
        mark = self.mark()
        self.delete([high for high, _, _ in rows if high <= mark])
        payload = json.dumps(rows, ensure_ascii=False)
        self.conn.execute(
            f"INSERT INTO {s}.search_text (rowid, body) "
            "SELECT value ->> 0, value ->> 2 FROM json_each(?)",
            [payload],
        )
        self.conn.executemany(
            f"INSERT INTO {s}.search_blocks (high, low) VALUES (?, ?)",
            [(high, low) for high, low, _ in rows],
        )
        top = max(high for high, _, _ in rows)
        if top > mark:
            self.conn.execute(
                f"INSERT INTO {s}.text_state (key, value) VALUES ('max_id', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                [top],
            )

    def delete(self, message_ids: Sequence[int]) -> None:
        """Drop the blocks whose rowid is one of these ids: given every message id of
        some sessions, exactly those sessions' blocks.

        FTS5 answers ``rowid IN (list)`` with a scan of the whole table and
        ``rowid = ?`` with a seek, so each block goes by its own ``DELETE``; they run
        from a temporary trigger, inside one statement, so a thread doing this
        never waits for Python's lock between them (``executemany`` took it per row).
        """
        s = self.schema
        ids = json.dumps(sorted({int(i) for i in message_ids}))
        highs = [
            row[0]
            for row in self.conn.execute(
                f"SELECT high FROM {s}.search_blocks "
                "WHERE high IN (SELECT value FROM json_each(?)) ORDER BY high",
                [ids],
            )
        ]
        if not highs:
            return
        # A trigger's statements name tables unqualified: ``search_text`` is found in
        # the one schema that has it (the text file, as ``main`` or attached).
        self.conn.execute("CREATE TEMP TABLE IF NOT EXISTS doomed_blocks (high INTEGER)")
        self.conn.execute(
            "CREATE TEMP TRIGGER IF NOT EXISTS doomed_blocks_drop AFTER INSERT ON doomed_blocks "
            "BEGIN DELETE FROM search_text WHERE rowid = NEW.high; END"
        )
        chosen = json.dumps(highs)
        self.conn.execute("INSERT INTO temp.doomed_blocks SELECT value FROM json_each(?)", [chosen])
        self.conn.execute("DELETE FROM temp.doomed_blocks")
        self.conn.execute(
            f"DELETE FROM {s}.search_blocks WHERE high IN (SELECT value FROM json_each(?))",
            [chosen],
        )

    def hold_purges(self) -> None:
        """Deletes leave tombstones only until :meth:`purge_step` (``deletemerge`` 0).

        FTS5 rewrites a segment (the whole index, after a build's ``optimize``) in
        the commit that tombstones a tenth of it: an erasure's one batch then took
        half a minute. The job that holds purges purges in steps after its receipt.
        """
        self._set("deletemerge", 0)

    def purge_step(self, pages: int) -> bool:
        """Up to ``pages`` pages of rewriting the segments a tenth tombstoned (FTS5's
        ``merge``); False when nothing was left to do. Purges stay held between steps,
        so no other writer's commit takes the rest in one go."""
        self._set("deletemerge", DELETE_MERGE)
        before = self.conn.total_changes
        self.conn.execute(
            f"INSERT INTO {self.schema}.search_text (search_text, rank) VALUES ('merge', ?)",
            [pages],
        )
        # FTS5's documented test: fewer than two changes means nothing was left to merge.
        more = self.conn.total_changes - before >= 2
        if more:
            self._set("deletemerge", 0)
        return more

    def _set(self, name: str, value: int) -> None:
        self.conn.execute(
            f"INSERT INTO {self.schema}.search_text (search_text, rank) VALUES (?, ?)",
            [name, value],
        )

    def pair(self) -> str | None:
        """The token naming the side database this file was made with (``None``: none)."""
        row = self.conn.execute(
            f"SELECT value FROM {self.schema}.text_state WHERE key = 'pair'"
        ).fetchone()
        return row[0] if row and isinstance(row[0], str) else None

    def set_pair(self, token: str) -> None:
        self.conn.execute(
            f"INSERT INTO {self.schema}.text_state (key, value) VALUES ('pair', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [token],
        )

    def optimize(self) -> None:
        s = self.schema
        self.conn.execute(f"INSERT INTO {s}.search_text (search_text) VALUES ('optimize')")


def blocks(messages: Sequence[FeedMessage]) -> list[tuple[int, int, str]]:
    """(highest id, lowest id, folded document) of each block of these messages: each
    session's messages in id order, cut at :data:`BLOCK_MESSAGES` messages or
    :data:`SPAN` ids; the blocks in rowid order.

    **Rowid order matters.** FTS5 writes the terms it holds in memory to a new
    segment whenever a row comes with a lower rowid than the last one: blocks
    in session order made it do that every few rows, and the segments' merges
    cost more than the indexing itself. In rowid order it writes one segment
    per hash-full, and a batch's text went in 2.4 times faster
    (``bench/bench_text_insert.py``: 6.0 against 2.6 CPU-seconds for 200,000
    messages).
    """
    by_session: dict[str, list[list[FeedMessage]]] = {}
    for message in sorted(messages, key=lambda m: m.id):
        runs = by_session.setdefault(message.session_id, [[]])
        run = runs[-1]
        if run and (len(run) >= BLOCK_MESSAGES or message.id - run[0].id >= SPAN):
            run = []
            runs.append(run)
        run.append(message)
    ordered = sorted(
        (run for runs in by_session.values() for run in runs), key=lambda run: run[-1].id
    )
    return [
        (
            run[-1].id,
            run[0].id,
            MESSAGE_SEPARATOR.join(
                document((m.content, m.tool_name, m.tool_args, m.tool_result)) for m in run
            ),
        )
        for run in ordered
    ]


def indexed_through(side: sqlite3.Connection, last_id: int) -> int:
    """The id up to which the text index holds every message the side database took in
    (``last_id``, its mark), or less while a build lets the text file lag: then the
    text file's own mark (it holds no gap below it: see
    :class:`~sessions_admin.ourdata.index.textwriter.TextWriter`)."""
    mark = TextIndex(side, sidedb.TEXT_SCHEMA).mark()
    top = side.execute("SELECT max(id) FROM main.search_messages").fetchone()[0]
    return last_id if top is None or mark >= top else min(mark, last_id)


def side_pair(side: sqlite3.Connection) -> str | None:
    """The token the side database keeps for its text file (``None``: none yet)."""
    row = side.execute("SELECT value FROM main.search_state WHERE key = 'pair'").fetchone()
    return row[0] if row and isinstance(row[0], str) else None


def paired(side: sqlite3.Connection) -> bool:
    """Is the attached text file the one this side database was made with?

    A text file removed, replaced by an older copy or by another side
    database's would otherwise answer searches with a silent gap; pages
    treat the index as not built until ``sync_index --rebuild``.
    """
    try:
        token = side_pair(side)
        return token is not None and TextIndex(side, sidedb.TEXT_SCHEMA).pair() == token
    except sidedb.errors():
        return False  # the text file is not attached, or lacks its tables
