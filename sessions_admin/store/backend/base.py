"""Django's SQLite backend, narrowed for a store that is not ours.

Three differences from the stock backend, all applied when a connection opens:

* the file is opened through a ``file:…?mode=rw`` (or ``mode=ro``) URI, so a
  missing store is reported instead of silently created as an empty file;
* an SQLite authorizer refuses every statement that would create, alter or
  drop anything, insert or update any row, attach another file, or delete
  from any table but the three session tables. Even a mistaken
  ``migrate --database agents`` fails here instead of creating
  ``django_migrations`` inside the runtime's store;
* the journal mode is never touched: the runtime owns it.

Two additions that write nothing: cursors read TEXT that is not valid UTF-8
(:mod:`.tolerant`) instead of failing, and the connection knows the one case
folding as the SQL function ``casefold`` (:mod:`sessions_admin.folding`;
calling a function is a read for the authorizer, and registering one
changes nothing in the file).
"""

from __future__ import annotations

import logging
import sqlite3
from pathlib import Path
from urllib.parse import quote

from django.db.backends.sqlite3 import base

from sessions_admin import folding
from sessions_admin.store.backend import tolerant

logger = logging.getLogger(__name__)

#: The only tables the dashboard may ever delete from (the runtime's cascade).
DELETABLE_TABLES = frozenset({"session_messages", "session_state", "sessions"})

# Pragmas a connection may set on itself; they change nothing in the file.
_SETTABLE_PRAGMAS = frozenset(
    {
        "foreign_keys",
        "legacy_alter_table",
        "busy_timeout",
        "query_only",
        "cache_size",
        "temp_store",
        "mmap_size",
        # When this connection's commits wait for an fsync (deletion jobs: cascade.deferred_sync).
        "synchronous",
        # A job's commits leave the WAL for it to checkpoint between batches, outside the
        # write lock (cascade.deferred_sync, cascade.checkpoint): WAL pages into the file
        # SQLite would copy itself, no row changed.
        "wal_autocheckpoint",
        "wal_checkpoint",
    }
)
# Pragmas that only read and take a table or index name as their argument.
_TABLE_PRAGMAS = frozenset(
    {
        "table_info",
        "table_xinfo",
        "index_list",
        "index_info",
        "index_xinfo",
        "foreign_key_list",
        "foreign_key_check",
        "quick_check",
        "integrity_check",
        "table_list",
    }
)
# Pragmas that read when given no value (and would write when given one).
_READ_PRAGMAS = _TABLE_PRAGMAS | {
    "user_version",
    "schema_version",
    "journal_mode",
    "page_count",
    "page_size",
    "freelist_count",
    "data_version",
    "database_list",
    "compile_options",
    "application_id",
    "encoding",
}
_ALWAYS_ALLOWED = frozenset(
    {
        sqlite3.SQLITE_READ,
        sqlite3.SQLITE_SELECT,
        sqlite3.SQLITE_FUNCTION,
        sqlite3.SQLITE_TRANSACTION,
        sqlite3.SQLITE_SAVEPOINT,
        sqlite3.SQLITE_RECURSIVE,
    }
)


def store_authorizer(
    action: int, arg1: str | None, arg2: str | None, db_name: str | None, trigger: str | None
) -> int:
    """Allow reads and the session deletes; deny everything else (see module doc)."""
    if action in _ALWAYS_ALLOWED:
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_DELETE and arg1 in DELETABLE_TABLES and db_name == "main":
        return sqlite3.SQLITE_OK
    if action == sqlite3.SQLITE_PRAGMA:
        name = (arg1 or "").lower()
        if name in _SETTABLE_PRAGMAS:
            return sqlite3.SQLITE_OK
        if name in _READ_PRAGMAS and (arg2 is None or name in _TABLE_PRAGMAS):
            return sqlite3.SQLITE_OK
    logger.warning("refused a statement on the store: action=%s %s %s", action, arg1, arg2)
    return sqlite3.SQLITE_DENY


def store_uri(path: str | Path, *, read_only: bool) -> str:
    """A URI that opens an existing file only (``mode=rw``/``mode=ro`` never create)."""
    mode = "ro" if read_only else "rw"
    return f"file:{quote(str(path), safe='/')}?mode={mode}"


class TolerantCursor(base.SQLiteCursorWrapper):
    """Django's SQLite cursor, reading undecodable TEXT as ``Undecodable`` (see :mod:`.tolerant`).

    Iterating the cursor itself stays the C iterator (no Python call per row);
    the three fetch methods, which Django and ``run_sql`` use, are tolerant.
    """

    def fetchone(self) -> tuple | None:
        return tolerant.fetchone(self)

    def fetchmany(self, size: int | None = None) -> list:
        return tolerant.gather(self, self.arraysize if size is None else size)

    def fetchall(self) -> list:
        return tolerant.gather(self)


class DatabaseWrapper(base.DatabaseWrapper):
    def get_connection_params(self) -> dict:
        kwargs = super().get_connection_params()
        self.read_only = bool(kwargs.pop("read_only", False))
        kwargs["database"] = store_uri(self.settings_dict["NAME"], read_only=self.read_only)
        return kwargs

    def get_new_connection(self, conn_params: dict) -> sqlite3.Connection:
        conn = super().get_new_connection(conn_params)
        conn.set_authorizer(store_authorizer)
        conn.create_function(folding.SQL_FUNCTION, 1, folding.fold_stored, deterministic=True)
        return conn

    def create_cursor(self, name: str | None = None) -> TolerantCursor:
        return self.connection.cursor(factory=TolerantCursor)

    def is_in_memory_db(self) -> bool:
        return False
