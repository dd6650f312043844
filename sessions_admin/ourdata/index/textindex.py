"""The trigram index over message text (``search_text``) and what the side database
reads of it: the table's operations (:class:`TextIndex`), the documents it holds,
how far it holds every message (:func:`indexed_through`) and whether it is the side
database's own (:func:`paired`).

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
from sessions_admin.store.feed import FeedMessage

FTS = (
    "USING fts5(body, content='', contentless_delete=1, detail=none, "
    "tokenize='trigram case_sensitive 1')"
)


#: FTS5's settings while a first build runs, and its defaults (see ``TextWriter.build_mode``).
BUILD_SETTINGS = {"automerge": 0, "crisismerge": 64, "hashsize": 8 * 1024 * 1024}
DEFAULT_SETTINGS = {"automerge": 4, "crisismerge": 16, "hashsize": 1024 * 1024}


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

    def drop(self) -> None:
        self.conn.execute(f"DROP TABLE IF EXISTS {self.schema}.search_text")
        self.conn.execute(f"DROP TABLE IF EXISTS {self.schema}.text_state")

    def mark(self) -> int:
        """The highest message id this file ever took in (0: none)."""
        row = self.conn.execute(
            f"SELECT value FROM {self.schema}.text_state WHERE key = 'max_id'"
        ).fetchone()
        return int(row[0]) if row and isinstance(row[0], int) else 0

    def add(self, rows: Sequence[tuple[int, str]]) -> None:
        """Index these (message id, folded document) pairs; an id already in is replaced."""
        if not rows:
            return
        s = self.schema
        mark = self.mark()
        again = [row for row in rows if row[0] <= mark]
        if again:
            # Messages taken in again (a session re-taken, a batch redone after a
            # crash between the two commits): out first, so none is there twice.
            self.delete([mid for mid, _ in again])
            self.conn.executemany(f"INSERT INTO {s}.search_text (rowid, body) VALUES (?, ?)", again)
        fresh = [row for row in rows if row[0] > mark] if again else list(rows)
        if not fresh:
            return
        self.conn.execute(
            f"INSERT INTO {s}.search_text (rowid, body) "
            "SELECT value ->> 0, value ->> 1 FROM json_each(?)",
            [json.dumps(fresh, ensure_ascii=False)],
        )
        self.conn.execute(
            f"INSERT INTO {s}.text_state (key, value) VALUES ('max_id', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            [max(mid for mid, _ in fresh)],
        )

    def delete(self, message_ids: Sequence[int]) -> None:
        # One rowid at a time: FTS5 answers "rowid IN (list)" with a scan of the
        # whole table, "rowid = ?" with a seek.
        self.conn.executemany(
            f"DELETE FROM {self.schema}.search_text WHERE rowid = ?",
            [(mid,) for mid in message_ids],
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


def documents(messages: Sequence[FeedMessage]) -> list[tuple[int, str]]:
    """(message id, folded document) for each message: what the index holds of it."""
    return [
        (m.id, document((m.content, m.tool_name, m.tool_args, m.tool_result))) for m in messages
    ]


def indexed_through(side: sqlite3.Connection, last_id: int) -> int:
    """The id up to which the text index holds every message the side database took in
    (``last_id``, its mark), or less while a build lets the text file lag: then the
    text file's own mark (it holds no gap below it: see
    :class:`~sessions_admin.ourdata.index.textwriter.TextWriter`)."""
    mark = TextIndex(side, sidedb.TEXT_SCHEMA).mark()
    top = side.execute("SELECT max(id) FROM main.search_messages").fetchone()[0] or 0
    return last_id if mark >= top else min(mark, last_id)


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
