"""Is the store there, is it SQLite, and is it the schema we know?

Used by the system check (console), the health endpoint and the middleware
that shows a friendly page instead of a traceback. Opens its own short-lived
read-only connection so it works even when the Django connection cannot.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from sessions_admin.store.backend.base import store_authorizer, store_uri
from sessions_admin.store.spec import TABLE_COLUMNS

EXPECTED_USER_VERSION = 2

#: The columns each table must have; extra columns are fine.
REQUIRED_COLUMNS = TABLE_COLUMNS


@dataclass
class StoreStatus:
    path: str
    read_only: bool
    reachable: bool = False
    user_version: int | None = None
    journal_mode: str | None = None
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    checked_at: float = field(default_factory=time.time)

    @property
    def ok(self) -> bool:
        return self.reachable and not self.errors

    @property
    def headline(self) -> str:
        if self.errors:
            return self.errors[0]
        return "The store is reachable and its schema is known."

    def public_dict(self) -> dict:
        """What the anonymous health endpoint may tell: no paths, no data."""
        return {
            "status": "ok" if self.ok else "error",
            "store": {
                "reachable": self.reachable,
                "schema": "ok" if self.ok else ("unknown" if not self.reachable else "mismatch"),
                "user_version": self.user_version,
                "read_only": self.read_only,
            },
            "problems": [_strip_path(msg, self.path) for msg in self.errors],
            "warnings": [_strip_path(msg, self.path) for msg in self.warnings],
        }


def _strip_path(message: str, path: str) -> str:
    return message.replace(path, "<store>")


def check_store(path: str | Path, *, read_only: bool, busy_timeout_s: float = 2.0) -> StoreStatus:
    path = str(path)
    status = StoreStatus(path=path, read_only=read_only)
    file = Path(path)
    if not file.exists():
        status.errors.append(
            f"The store file {path} does not exist. Set AGENTS_HOST_HOME to the runtime's host "
            "home (or SESSIONS_ADMIN_STORE to the file), or run `make demo` for a demo store."
        )
        return status
    if not file.is_file():
        status.errors.append(f"The store path {path} is not a file.")
        return status
    try:
        # Opened as the Django connection is (``mode=rw`` unless read-only mode),
        # the authorizer refusing any write either way. The mode matters on a
        # store in WAL mode nothing else has open: reading creates its -wal and
        # -shm, and only a read-write connection, closing last, removes them;
        # a ``mode=ro`` one leaves both behind in the runtime's folder.
        conn = sqlite3.connect(
            store_uri(path, read_only=read_only), uri=True, timeout=busy_timeout_s
        )
    except sqlite3.Error as exc:
        status.errors.append(f"The store file {path} cannot be opened: {exc}.")
        return status
    try:
        conn.set_authorizer(store_authorizer)
        _inspect(conn, status)
    except sqlite3.DatabaseError as exc:
        message = str(exc)
        if "not a database" in message or "malformed" in message:
            status.errors.append(f"The file {path} is not an SQLite database (or is damaged).")
        elif "locked" in message or "busy" in message:
            status.errors.append(
                f"The store is locked by another process (the runtime?) for more than "
                f"{busy_timeout_s:g} s. Try again in a moment."
            )
        else:
            status.errors.append(f"The store could not be read: {message}.")
        status.reachable = False
    finally:
        conn.close()
    return status


def _inspect(conn: sqlite3.Connection, status: StoreStatus) -> None:
    status.user_version = conn.execute("PRAGMA user_version").fetchone()[0]
    status.journal_mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
    tables = {
        name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
    }
    status.reachable = True
    for table, columns in REQUIRED_COLUMNS.items():
        if table not in tables:
            status.errors.append(
                f"The store has no `{table}` table: this is not the agent runtime's store, "
                "or its schema is older than the dashboard knows."
            )
            continue
        present = {row[1] for row in conn.execute(f"PRAGMA table_info({table})")}
        missing = [column for column in columns if column not in present]
        if missing:
            status.errors.append(
                f"The `{table}` table lacks column(s) {', '.join(missing)}: the store's schema "
                "is not one the dashboard knows."
            )
    version = status.user_version
    if version < EXPECTED_USER_VERSION:
        status.errors.append(
            f"The store reports schema version {version}; the dashboard knows version "
            f"{EXPECTED_USER_VERSION}. Is this the agent store?"
        )
    elif version > EXPECTED_USER_VERSION:
        status.warnings.append(
            f"The store reports schema version {version}, newer than the {EXPECTED_USER_VERSION} "
            "this dashboard was built for; the tables it reads are present, so it carries on."
        )


_cache_lock = threading.Lock()
_cache: dict[tuple[str, bool], StoreStatus] = {}


def cached_store_status(path: str | Path, *, read_only: bool, ttl_s: float = 5.0) -> StoreStatus:
    """The status, re-checked at most every ``ttl_s`` seconds per process."""
    key = (str(path), read_only)
    now = time.time()
    with _cache_lock:
        status = _cache.get(key)
        if status is not None and now - status.checked_at < ttl_s:
            return status
    status = check_store(path, read_only=read_only)
    with _cache_lock:
        _cache[key] = status
    return status


def forget_cached_status() -> None:
    with _cache_lock:
        _cache.clear()
