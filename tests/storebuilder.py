"""Build stores for tests from the runtime's schema, with plain sqlite3.

Tests may write to the stores they build; the application never does.
"""

from __future__ import annotations

import itertools
import json
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = Path(__file__).resolve().parent.parent / "sessions_admin" / "store" / "schema.sql"
BASE_MS = 1_764_000_000_000  # 2025-11-24, a fixed moment so tests are repeatable


def create_store(path: Path, *, schema: str | None = None, neighbours: bool = True) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(SCHEMA.read_text() if schema is None else schema)
    if neighbours:
        conn.executescript(
            "CREATE TABLE memory_records (id INTEGER PRIMARY KEY, kind TEXT, body TEXT);"
            "INSERT INTO memory_records (kind, body) VALUES ('note', 'keep me');"
            "CREATE INDEX idx_memory_kind ON memory_records(kind);"
        )
    conn.commit()
    conn.close()


@dataclass
class StoreBuilder:
    home: Path
    _ids: itertools.count = field(default_factory=lambda: itertools.count(1))

    @property
    def path(self) -> Path:
        return self.home / "data" / "agents" / "store.db"

    @property
    def frames_root(self) -> Path:
        return self.home / "sessions"

    def connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path)
        conn.execute("PRAGMA foreign_keys = ON")
        # Test stores are throwaway: skip fsync so building them is quick.
        conn.execute("PRAGMA synchronous = OFF")
        return conn

    def clear(self) -> None:
        """Every session gone, in the runtime's order (messages, state, sessions)."""
        with self.connect() as conn:
            conn.executescript(
                "DELETE FROM session_messages; DELETE FROM session_state; DELETE FROM sessions;"
            )

    def add_session(
        self,
        session_id: str | None = None,
        *,
        target: str = "system.registry",
        profile: str = "default",
        principal: str | None = "user:alice",
        title: str | None = "a session",
        turn_count: int | None = 0,
        created_at: int | None = None,
        last_active: int | None = None,
    ) -> str:
        number = next(self._ids)
        session_id = session_id if session_id is not None else f"sess_{number:06d}"
        created_at = created_at if created_at is not None else BASE_MS + number * 1000
        last_active = last_active if last_active is not None else created_at
        with self.connect() as conn:
            conn.execute(
                "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, "
                "turn_count, created_at, last_active) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    session_id,
                    target,
                    profile,
                    principal,
                    title,
                    turn_count,
                    created_at,
                    last_active,
                ),
            )
        return session_id

    def add_message(
        self,
        session_id: str,
        role: str = "user",
        content: str = "hello",
        *,
        ts: int | None = None,
        **tool: Any,
    ) -> int:
        for key in ("tool_args", "tool_result"):
            if key in tool and not isinstance(tool[key], str) and tool[key] is not None:
                tool[key] = json.dumps(tool[key])
        columns = ["session_id", "role", "content", "ts", *tool]
        ts = ts if ts is not None else BASE_MS + next(self._ids) * 1000
        values = [session_id, role, content, ts, *tool.values()]
        with self.connect() as conn:
            cursor = conn.execute(
                f"INSERT INTO session_messages ({', '.join(columns)}) "
                f"VALUES ({', '.join('?' * len(values))})",
                values,
            )
            return cursor.lastrowid

    def add_state(
        self, session_id: str, key: str, value: Any, *, updated_at: int = BASE_MS
    ) -> None:
        text = value if isinstance(value, str) else json.dumps(value)
        with self.connect() as conn:
            conn.execute(
                "INSERT INTO session_state (session_id, key, value, updated_at) "
                "VALUES (?, ?, ?, ?)",
                (session_id, key, text, updated_at),
            )

    def count(self, table: str) -> int:
        with self.connect() as conn:
            return conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]

    def schema_objects(self) -> list[tuple]:
        with self.connect() as conn:
            return conn.execute(
                "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"
            ).fetchall()

    def execute(self, sql: str, params: tuple = ()) -> list[tuple]:
        with self.connect() as conn:
            return conn.execute(sql, params).fetchall()
