"""The search index as a :class:`~sessions_admin.ourdata.sync.SyncListener`.

Tables in the side database (all ours, all rebuilt by ``sync_index --rebuild``):

``search_text``, ``search_blocks``
    FTS5, contentless with ``contentless_delete=1``, ``detail=none``, trigram
    tokenizer on folded text (:mod:`.text`), one document per block of a
    session's messages (:mod:`.textindex`): rowid = the block's highest
    message id, ``search_blocks`` its lowest. Keeps no copy of the text:
    every hit is checked against the store's row. In a file of its own,
    attached as ``text`` (:mod:`.textwriter`: a pass writes it from a second
    thread).
``search_messages``
    Per message: its session (a small integer key), role, tool name (keys
    into ``search_names``) and ``ts``, so the search's filters run in the
    side database before anything is read from the store; and, by session,
    the message ids a forgotten session drops from ``search_text``.
``search_sessions``
    Per session: the key, the id and the row's columns as of the last sync
    (named as in the store, so the list's filter SQL runs here unchanged),
    with ``fold`` = folded title and id in place of the title, for the list's
    title filter.
``search_session_text``
    FTS5 like ``search_text`` over each session's title, principal and id
    (session-level hits); rowid = the session's key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index import textindex, textwriter
from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, document, fold
from sessions_admin.ourdata.sidedb import bind_id, read_id, run_script
from sessions_admin.ourdata.sync import SideLayoutChanged
from sessions_admin.sqlhelpers import chunks, id_above, placeholders
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedMessage, FeedSession

SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS search_session_text {textindex.FTS};
CREATE TABLE IF NOT EXISTS search_state (key TEXT PRIMARY KEY, value) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_names (
  key INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (kind, name)
);
CREATE TABLE IF NOT EXISTS search_messages (
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, role INTEGER, tool INTEGER, ts INTEGER
);
CREATE INDEX IF NOT EXISTS search_messages_by_session ON search_messages (session);
CREATE TABLE IF NOT EXISTS search_sessions (
  key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, target_key TEXT, profile_key TEXT,
  principal_id TEXT, fold TEXT, turn_count INTEGER, created_at INTEGER,
  last_active INTEGER
);
CREATE INDEX IF NOT EXISTS search_sessions_by_principal
  ON search_sessions (principal_id, last_active, id);
-- With fold: the list's title filter walks it newest first testing each fold, from
-- the index alone (1,700 rows for "rollback" on the bench store: 2.4 ms reading
-- the rows themselves, 0.3 ms from the index, 44 MB more).
CREATE INDEX IF NOT EXISTS search_sessions_by_last_active
  ON search_sessions (last_active, id, fold);
-- The other two orders of the list, walked with a filter the store cannot test (the
-- sessions with a failed call: 1.3 ms a page instead of reading all 186,780 of them).
CREATE INDEX IF NOT EXISTS search_sessions_by_created ON search_sessions (created_at, id);
CREATE INDEX IF NOT EXISTS search_sessions_by_turns
  ON search_sessions (COALESCE(turn_count, 0), id);
"""
_TABLES = (
    "search_session_text",
    "search_state",
    "search_names",
    "search_messages",
    "search_sessions",
)


def session_keys(side: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, int]:
    """The keys of these sessions, creating a bare row for those new to the index."""
    ids = [bind_id(sid) for sid in dict.fromkeys(session_ids)]
    side.executemany("INSERT OR IGNORE INTO search_sessions (id) VALUES (?)", [(i,) for i in ids])
    keys: dict[str, int] = {}
    for chunk in chunks(ids):
        keys.update(
            (read_id(sid), key)
            for key, sid in side.execute(
                f"SELECT key, id FROM search_sessions WHERE id IN ({placeholders(len(chunk))})",
                chunk,
            )
        )
    return keys


class SearchIndex:
    """Feeds the search tables; one instance lives in ``LISTENERS``."""

    name = "search"

    def create(self, side: sqlite3.Connection) -> None:
        fresh = (
            side.execute(
                "SELECT 1 FROM main.sqlite_master WHERE name = 'search_messages'"
            ).fetchone()
            is None
        )
        run_script(side, SCHEMA)
        if fresh:
            # A new side database never inherits text indexed for another one (a
            # side.sqlite3 removed by hand beside the text file it was paired with).
            textwriter.run(side, textindex.TextIndex.drop)
        textwriter.run(side, textindex.TextIndex.create)
        if fresh:
            textwriter.pair_new(side)
        elif textwriter.writer_of(side) is None and not textindex.paired(side):
            # A text file removed, or copied back from another time, would leave
            # searches with a silent gap: the side database says what it indexed.
            raise SideLayoutChanged(
                f"{sidedb.text_path()} is not the text index {sidedb.side_path()} was "
                "built with (removed or copied on its own): run manage.py sync_index --rebuild."
            )

    def reset(self, side: sqlite3.Connection) -> None:
        for table in _TABLES:
            side.execute(f"DROP TABLE IF EXISTS {table}")
        textwriter.run(side, textindex.TextIndex.drop)
        self.create(side)

    def begin_pass(self, side: sqlite3.Connection) -> None:
        """The pass writes the text file from a thread of its own (:mod:`.textwriter`),
        first taking in any text a cut build left out."""
        textwriter.begin_pass(side)
        catch_up(side)

    def end_pass(self, side: sqlite3.Connection) -> None:
        textwriter.end_pass(side)

    def begin_forgetting(self, side: sqlite3.Connection) -> None:
        """The text file's deletes (most of a large forgetting) run in the writer's
        thread while this one forgets the rest."""
        textwriter.begin_pass(side)

    def end_forgetting(self, side: sqlite3.Connection) -> None:
        textwriter.end_pass(side)

    def hold_purges(self, side: sqlite3.Connection) -> None:
        textwriter.run(side, textindex.TextIndex.hold_purges)

    def purge_step(self, pages: int) -> bool:
        """One transaction of the text file's own, beside any pass's writer."""
        if not sidedb.text_path().is_file():
            return False
        conn = sidedb.connect_text()
        try:
            if not conn.execute(
                "SELECT 1 FROM sqlite_master WHERE name = 'search_text'"
            ).fetchone():
                return False
            with sidedb.transaction(conn):
                return textindex.TextIndex(conn, "main").purge_step(pages)
        finally:
            conn.close()

    def before_commit(self, side: sqlite3.Connection) -> None:
        """The text file commits first: a crash between the two commits leaves it one
        batch ahead, which the next pass's redo of that batch overwrites."""
        writer = textwriter.writer_of(side)
        if writer is not None:
            writer.flush()

    def build_mode_on(self, side: sqlite3.Connection) -> None:
        writer = textwriter.writer_of(side)
        if writer is not None:
            writer.build_mode(True)

    def build_mode_off(self, side: sqlite3.Connection) -> None:
        writer = textwriter.writer_of(side)
        if writer is not None:
            writer.build_mode(False)

    def after_rollback(self, side: sqlite3.Connection) -> None:
        writer = textwriter.writer_of(side)
        if writer is not None:
            writer.abort()

    def _name_keys(
        self, side: sqlite3.Connection, kind: str, names: set[str | None]
    ) -> dict[str | None, int | None]:
        """Keys of role or tool names (a batch holds a handful), added when new."""
        keys: dict[str | None, int | None] = {None: None}
        for name in names - {None}:
            side.execute(
                "INSERT OR IGNORE INTO search_names (kind, name) VALUES (?, ?)", (kind, name)
            )
            keys[name] = side.execute(
                "SELECT key FROM search_names WHERE kind = ? AND name = ?", (kind, name)
            ).fetchone()[0]
        return keys

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        keys = session_keys(side, [message.session_id for message in batch])
        roles = self._name_keys(side, "role", {m.role for m in batch})
        tools = self._name_keys(side, "tool", {m.tool_name for m in batch})
        rows = [(m.id, keys[m.session_id], roles[m.role], tools[m.tool_name], m.ts) for m in batch]
        # Ids above the highest one held are new (ids only grow): a plain INSERT,
        # less than half the cost of OR REPLACE, which the rest (messages of a
        # session taken in again) keep.
        top = side.execute("SELECT max(id) FROM search_messages").fetchone()[0] or 0
        insert = "INTO search_messages (id, session, role, tool, ts) VALUES (?, ?, ?, ?, ?)"
        side.executemany(f"INSERT OR REPLACE {insert}", [row for row in rows if row[0] <= top])
        side.executemany(f"INSERT {insert}", [row for row in rows if row[0] > top])
        textwriter.add_messages(side, batch)

    def update_sessions(self, side: sqlite3.Connection, sessions: Sequence[FeedSession]) -> None:
        ids = [bind_id(s.id) for s in sessions]
        before: dict[str, tuple[int, str | None, str | None]] = {}
        for chunk in chunks(ids):
            for key, sid, folded, principal in side.execute(
                "SELECT key, id, fold, principal_id FROM search_sessions "
                f"WHERE id IN ({placeholders(len(chunk))}) AND fold IS NOT NULL",
                chunk,
            ):
                before[read_id(sid)] = (key, folded, principal)
        folds = {s.id: fold(s.title or "") + FIELD_SEPARATOR + fold(s.id) for s in sessions}
        side.executemany(
            "INSERT INTO search_sessions (id, target_key, profile_key, principal_id, fold, "
            "turn_count, created_at, last_active) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (id) DO UPDATE SET target_key = excluded.target_key, "
            "profile_key = excluded.profile_key, principal_id = excluded.principal_id, "
            "fold = excluded.fold, turn_count = excluded.turn_count, "
            "created_at = excluded.created_at, last_active = excluded.last_active",
            [
                (
                    bind_id(s.id),
                    s.target_key,
                    s.profile_key,
                    s.principal_id,
                    folds[s.id],
                    s.turn_count,
                    s.created_at,
                    s.last_active,
                )
                for s in sessions
            ],
        )
        # The indexed document is folded: a change of case alone changes nothing there.
        changed = [
            s for s in sessions if before.get(s.id, (0,))[1:] != (folds[s.id], s.principal_id)
        ]
        side.executemany(
            "DELETE FROM search_session_text WHERE rowid = ?",
            [(before[s.id][0],) for s in changed if s.id in before],
        )
        keys = session_keys(side, [s.id for s in changed])
        side.executemany(
            "INSERT INTO search_session_text (rowid, body) VALUES (?, ?)",
            [(keys[s.id], document((s.title, s.principal_id, s.id))) for s in changed],
        )

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        ids = [bind_id(sid) for sid in session_ids]
        for chunk in chunks(ids):
            keys = [
                row[0]
                for row in side.execute(
                    f"SELECT key FROM search_sessions WHERE id IN ({placeholders(len(chunk))})",
                    chunk,
                )
            ]
            if not keys:
                continue
            # One statement per chunk of keys (each IN is a few index seeks).
            marks = placeholders(len(keys))
            ids = [
                row[0]
                for row in side.execute(
                    f"SELECT id FROM search_messages WHERE session IN ({marks})", keys
                )
            ]
            textwriter.run(side, lambda text, ids=ids: text.delete(ids))
            side.execute(f"DELETE FROM search_messages WHERE session IN ({marks})", keys)
            # One rowid at a time: FTS5 answers "rowid IN (list)" with a scan of the whole
            # table (0.76 s per 50 keys on 5,000 sessions) but "rowid = ?" with a seek.
            side.executemany(
                "DELETE FROM search_session_text WHERE rowid = ?", [(key,) for key in keys]
            )
            side.execute(f"DELETE FROM search_sessions WHERE key IN ({marks})", keys)

    def finish_build(self, side: sqlite3.Connection) -> None:
        """Merge the trigram index's segments into one after a long pass (smaller, faster)."""
        textwriter.run(side, textindex.TextIndex.optimize)
        side.execute("INSERT INTO search_session_text (search_session_text) VALUES ('optimize')")

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        """A block holds a session's messages together: the blocks of these messages'
        sessions go, and the sessions' other messages are indexed again from the store."""
        gone = set(message_ids)
        keys: set[int] = set()
        for chunk in chunks(sorted(gone)):
            keys.update(
                row[0]
                for row in side.execute(
                    "SELECT DISTINCT session FROM search_messages "
                    f"WHERE id IN ({placeholders(len(chunk))})",
                    chunk,
                )
            )
        held: list[int] = []
        for chunk in chunks(sorted(keys)):
            held.extend(
                row[0]
                for row in side.execute(
                    f"SELECT id FROM search_messages WHERE session IN ({placeholders(len(chunk))})",
                    chunk,
                )
            )
        textwriter.run(side, lambda text: text.delete(held))
        side.executemany("DELETE FROM search_messages WHERE id = ?", [(mid,) for mid in gone])
        rest = sorted(set(held) - gone)
        found = feed.messages_by_id(rest)
        textwriter.add_messages(side, [found[mid] for mid in rest if mid in found])


def catch_up(side: sqlite3.Connection) -> int:
    """Index the text of messages the side database holds above the text file's mark.

    A build lets the text file lag a few batches (:class:`.textwriter.TextWriter`);
    if the process died there, those messages' text is read again from the store
    here. Ids above the mark are exactly what the file lacks (it holds no gap
    below its mark). Returns how many messages were indexed.
    """
    writer = textwriter.writer_of(side)
    if writer is None:
        return 0
    mark, taken = writer.queued_max, 0
    while True:
        above, after = id_above("id", mark)
        ids = [
            row[0]
            for row in side.execute(
                f"SELECT id FROM search_messages WHERE {above} ORDER BY id LIMIT ?",
                [after, CATCH_UP_BATCH],
            )
        ]
        if not ids:
            return taken
        found = feed.messages_by_id(ids)  # a message the store lost since is left out
        writer.add_messages([found[mid] for mid in ids if mid in found])
        writer.flush()
        taken += len(found)
        mark = ids[-1]


#: Messages read back from the store per text transaction of :func:`catch_up`.
CATCH_UP_BATCH = 5000


SEARCH_INDEX = SearchIndex()
