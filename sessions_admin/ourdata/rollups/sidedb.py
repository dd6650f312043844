"""Where the side database is, and how a request or the sync opens it."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from django.conf import settings

SIDE_DB_NAME = "side.sqlite3"


def side_path() -> Path:
    return Path(settings.VAR_DIR) / SIDE_DB_NAME


def open_side_read_only() -> sqlite3.Connection | None:
    """A read-only connection for a request, or ``None`` when nothing was synced yet."""
    path = side_path()
    if not path.is_file():
        return None
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=2.0)
    conn.execute("PRAGMA query_only = 1")
    return conn


def open_side_for_writing() -> sqlite3.Connection:
    """The sync's connection (tests and benches that feed the listener directly use it)."""
    path = side_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, timeout=10.0, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    return conn
