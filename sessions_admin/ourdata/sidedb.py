"""The side database: ``side.sqlite3`` under the data folder, never beside the store.

The search index needs FTS5's ``contentless_delete`` (SQLite 3.43 or later):
a contentless index is about a third of the size of one that keeps a second
copy of every message, and only ``contentless_delete`` lets it drop a deleted
session's rows without the deleted text. The system SQLite here is 3.40.1, so
the side database opens through ``pysqlite3`` (the ``pysqlite3-binary`` wheel
bundles SQLite 3.51) when it is installed, and through the standard library's
``sqlite3`` when that one is new enough (README, "Search": the measurements).
Both speak the same DB-API, so a :class:`~sessions_admin.ourdata.sync.SyncListener`
sees an ``sqlite3.Connection``-like object either way.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from django.conf import settings

#: FTS5's ``contentless_delete`` arrived in SQLite 3.43.0.
MIN_SQLITE = (3, 43, 0)


class SideDatabaseUnavailable(RuntimeError):
    """No SQLite new enough for the side index (install pysqlite3-binary)."""


def _version(module: ModuleType) -> tuple[int, ...]:
    return tuple(int(part) for part in module.sqlite_version.split("."))


def driver() -> ModuleType:
    """The DB-API module whose SQLite has what the side index needs."""
    try:
        import pysqlite3.dbapi2 as bundled  # type: ignore[import-not-found]
    except ImportError:
        bundled = None
    for module in (bundled, sqlite3):
        if module is not None and _version(module) >= MIN_SQLITE:
            return module
    raise SideDatabaseUnavailable(
        f"The search index needs SQLite {'.'.join(map(str, MIN_SQLITE))} or later "
        f"(this Python has {sqlite3.sqlite_version}): pip install pysqlite3-binary."
    )


def sqlite_version() -> str:
    return driver().sqlite_version


def side_path() -> Path:
    return Path(settings.VAR_DIR) / "side.sqlite3"


def exists() -> bool:
    return side_path().is_file()


def connect(*, create: bool = True, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """Open the side database (creating the file and folder only when ``create``).

    The connection is in autocommit mode (``isolation_level=None``): callers
    open their own ``BEGIN IMMEDIATE`` so a batch and its bookkeeping commit
    together.
    """
    path = side_path()
    if not create and not path.is_file():
        raise FileNotFoundError(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    module = driver()
    conn = module.connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA journal_mode = WAL")
    # WAL with NORMAL: a power cut may lose the last batches, never corrupt;
    # the next sync simply redoes them.
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = OFF")
    return conn


def connect_readonly() -> sqlite3.Connection | None:
    """A read connection for pages, or ``None`` when no side database exists yet."""
    path = side_path()
    if not path.is_file():
        return None
    module = driver()
    uri = f"file:{quote(str(path), safe='/')}?mode=ro"
    conn = module.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 2000")
    return conn
