"""The search index as a :class:`~sessions_admin.ourdata.sync.SyncListener`.

Tables in the side database (all ours, all rebuilt by ``sync_index --rebuild``):

``search_text``
    FTS5, contentless with ``contentless_delete=1``, ``detail=none``, trigram
    tokenizer on folded text (:mod:`.text`); rowid = the message's id. Keeps
    no copy of the text: every hit is checked against the store's row.
``search_messages``
    Per message: its session (a small integer key), role, tool name (keys
    into ``search_names``) and ``ts``, so the search's filters run in the
    side database before anything is read from the store; and, by session,
    the message ids a forgotten session drops from ``search_text``.
``search_sessions``
    Per session: the key, the id and the row's columns as of the last sync,
    with ``fold`` = folded title and id, for the list's title filter.
``search_session_text``
    FTS5 like ``search_text`` over each session's title, principal and id
    (session-level hits); rowid = the session's key.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, document, fold
from sessions_admin.store.feed import FeedMessage, FeedSession

_FTS = (
    "USING fts5(body, content='', contentless_delete=1, detail=none, "
    "tokenize='trigram case_sensitive 1')"
)
SCHEMA = f"""
CREATE VIRTUAL TABLE IF NOT EXISTS search_text {_FTS};
CREATE VIRTUAL TABLE IF NOT EXISTS search_session_text {_FTS};
CREATE TABLE IF NOT EXISTS search_names (
  key INTEGER PRIMARY KEY, kind TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (kind, name)
);
CREATE TABLE IF NOT EXISTS search_messages (
  id INTEGER PRIMARY KEY, session INTEGER NOT NULL, role INTEGER, tool INTEGER, ts INTEGER
);
CREATE INDEX IF NOT EXISTS search_messages_by_session ON search_messages (session);
CREATE TABLE IF NOT EXISTS search_sessions (
  key INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, target TEXT, profile TEXT,
  principal TEXT, title TEXT, fold TEXT, turn_count INTEGER, created_at INTEGER,
  last_active INTEGER
);
CREATE INDEX IF NOT EXISTS search_sessions_by_principal
  ON search_sessions (principal, last_active, id);
CREATE INDEX IF NOT EXISTS search_sessions_by_last_active ON search_sessions (last_active, id);
"""
_TABLES = (
    "search_text",
    "search_session_text",
    "search_names",
    "search_messages",
    "search_sessions",
)


def _marks(values: Sequence[object]) -> str:
    return ", ".join("?" * len(values))


def session_keys(side: sqlite3.Connection, session_ids: Sequence[str]) -> dict[str, int]:
    """The keys of these sessions, creating a bare row for those new to the index."""
    ids = list(dict.fromkeys(session_ids))
    side.executemany(
        "INSERT OR IGNORE INTO search_sessions (id) VALUES (?)", [(sid,) for sid in ids]
    )
    keys: dict[str, int] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        keys.update(
            (sid, key)
            for key, sid in side.execute(
                f"SELECT key, id FROM search_sessions WHERE id IN ({_marks(chunk)})", chunk
            )
        )
    return keys


class SearchIndex:
    """Feeds the search tables; one instance lives in ``LISTENERS``."""

    name = "search"

    def __init__(self) -> None:
        # Role and tool names are few; their keys are cached per connection.
        self._names: dict[tuple[int, str, str], int] = {}

    def create(self, side: sqlite3.Connection) -> None:
        side.executescript(SCHEMA)

    def reset(self, side: sqlite3.Connection) -> None:
        for table in _TABLES:
            side.execute(f"DROP TABLE IF EXISTS {table}")
        self._names.clear()
        self.create(side)

    def _name_key(self, side: sqlite3.Connection, kind: str, name: str | None) -> int | None:
        if name is None:
            return None
        cache_key = (id(side), kind, name)
        key = self._names.get(cache_key)
        if key is None:
            side.execute(
                "INSERT OR IGNORE INTO search_names (kind, name) VALUES (?, ?)", (kind, name)
            )
            key = side.execute(
                "SELECT key FROM search_names WHERE kind = ? AND name = ?", (kind, name)
            ).fetchone()[0]
            self._names[cache_key] = key
        return key

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        keys = session_keys(side, [message.session_id for message in batch])
        side.executemany(
            "INSERT OR REPLACE INTO search_messages (id, session, role, tool, ts) "
            "VALUES (?, ?, ?, ?, ?)",
            [
                (
                    m.id,
                    keys[m.session_id],
                    self._name_key(side, "role", m.role),
                    self._name_key(side, "tool", m.tool_name),
                    m.ts,
                )
                for m in batch
            ],
        )
        side.executemany(
            "INSERT INTO search_text (rowid, body) VALUES (?, ?)",
            [(m.id, document((m.content, m.tool_name, m.tool_args, m.tool_result))) for m in batch],
        )

    def update_sessions(self, side: sqlite3.Connection, sessions: Sequence[FeedSession]) -> None:
        keys = session_keys(side, [s.id for s in sessions])
        before = {
            key: (title, principal)
            for start in range(0, len(sessions), 500)
            for key, title, principal in side.execute(
                "SELECT key, title, principal FROM search_sessions WHERE key IN "
                f"({_marks(sessions[start : start + 500])}) AND fold IS NOT NULL",
                [keys[s.id] for s in sessions[start : start + 500]],
            )
        }
        side.executemany(
            "UPDATE search_sessions SET target = ?, profile = ?, principal = ?, title = ?, "
            "fold = ?, turn_count = ?, created_at = ?, last_active = ? WHERE key = ?",
            [
                (
                    s.target_key,
                    s.profile_key,
                    s.principal_id,
                    s.title,
                    fold(s.title or "") + FIELD_SEPARATOR + fold(s.id),
                    s.turn_count,
                    s.created_at,
                    s.last_active,
                    keys[s.id],
                )
                for s in sessions
            ],
        )
        changed = [s for s in sessions if before.get(keys[s.id]) != (s.title, s.principal_id)]
        side.executemany(
            "DELETE FROM search_session_text WHERE rowid = ?",
            [(keys[s.id],) for s in changed if keys[s.id] in before],
        )
        side.executemany(
            "INSERT INTO search_session_text (rowid, body) VALUES (?, ?)",
            [(keys[s.id], document((s.title, s.principal_id, s.id))) for s in changed],
        )

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        ids = list(session_ids)
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            keys = [
                row[0]
                for row in side.execute(
                    f"SELECT key FROM search_sessions WHERE id IN ({_marks(chunk)})", chunk
                )
            ]
            for key in keys:
                side.execute(
                    "DELETE FROM search_text WHERE rowid IN "
                    "(SELECT id FROM search_messages WHERE session = ?)",
                    (key,),
                )
                side.execute("DELETE FROM search_messages WHERE session = ?", (key,))
                side.execute("DELETE FROM search_session_text WHERE rowid = ?", (key,))
                side.execute("DELETE FROM search_sessions WHERE key = ?", (key,))

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        rows = [(mid,) for mid in message_ids]
        side.executemany("DELETE FROM search_text WHERE rowid = ?", rows)
        side.executemany("DELETE FROM search_messages WHERE id = ?", rows)


SEARCH_INDEX = SearchIndex()
