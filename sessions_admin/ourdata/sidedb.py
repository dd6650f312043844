"""The side database: ``side.sqlite3`` under the data folder, never beside the store.

The search index needs FTS5's ``contentless_delete`` (SQLite 3.43 or later):
a contentless index is about a third of the size of one that keeps a second
copy of every message, and only ``contentless_delete`` lets it drop a deleted
session's rows without the deleted text. The system SQLite here is 3.40.1, so
the side database opens through ``pysqlite3`` (the ``pysqlite3-binary`` wheel
bundles SQLite 3.51) when it is installed, and through the standard library's
``sqlite3`` when that one is new enough (docs/search.md: the measurements).
Both speak the same DB-API, so a :class:`~sessions_admin.ourdata.sync.SyncListener`
sees an ``sqlite3.Connection``-like object either way.

The trigram index over message text lives in a second file beside it,
``side-text.sqlite3``, attached to every connection as the schema ``text``
(:data:`TEXT_SCHEMA`; SQL names its tables unqualified or as ``text.…``). A
file of its own lets a first build write it from a second thread, on the
second core, while the first writes everything else (one writer per file:
:mod:`sessions_admin.ourdata.index.textwriter`).
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import os
import sqlite3
import stat
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from urllib.parse import quote

from django.conf import settings

from sessions_admin.store.feed import Undecodable

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
    """``side.sqlite3`` in the data folder; never in the store's own folder."""
    return _side_path(str(settings.VAR_DIR), str(settings.DATABASES["agents"]["NAME"]))


@functools.lru_cache(maxsize=8)
def _side_path(var_dir: str, store: str) -> Path:
    # Cached per setting: resolving both paths was a tenth of a millisecond a page.
    path = Path(var_dir) / "side.sqlite3"
    if path.resolve().parent == Path(store).resolve().parent:
        raise SideDatabaseUnavailable(
            f"The data folder ({var_dir}) is the store's own folder: the side "
            "index never goes beside the runtime's store. Set SESSIONS_ADMIN_VAR_DIR elsewhere."
        )
    return path


#: The schema name the trigram index's file is attached under.
TEXT_SCHEMA = "text"


def text_path() -> Path:
    """``side-text.sqlite3`` beside the side database: the trigram index over message text."""
    return side_path().with_name("side-text.sqlite3")


def exists() -> bool:
    try:
        return side_path().is_file()
    except SideDatabaseUnavailable:
        return False


def connect(*, create: bool = True, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """Open the side database (creating the file and folder only when ``create``).

    The connection is in autocommit mode (``isolation_level=None``): callers
    open their own ``BEGIN IMMEDIATE`` so a batch and its bookkeeping commit
    together.
    """
    path = side_path()
    if not create and not path.is_file():
        raise FileNotFoundError(path)
    conn = _open(path, busy_timeout_ms)
    attach_text(conn)
    return conn


def connect_text(*, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    """The trigram index's file alone (its writer thread during a pass), created if missing."""
    return _open(text_path(), busy_timeout_ms, cache_mb=16)


def _new_file(path: Path) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    # Only this user may read the index (message text): 0600, not the umask's
    # 0644. An empty file is a valid database, and SQLite gives the -wal and
    # -shm files the database file's mode.
    path.touch(mode=0o600, exist_ok=True)


def _open(path: Path, busy_timeout_ms: int, cache_mb: int = 64) -> sqlite3.Connection:
    _new_file(path)
    conn = driver().connect(str(path), isolation_level=None, check_same_thread=False)
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    _file_pragmas(conn, "main", cache_mb)
    conn.execute("PRAGMA foreign_keys = OFF")
    return conn


def _file_pragmas(conn: sqlite3.Connection, schema: str, cache_mb: int) -> None:
    # Only takes effect on a new, empty file: merges and forgotten sessions free
    # pages, and ``release_free_pages`` gives them back to the disk.
    conn.execute(f"PRAGMA {schema}.auto_vacuum = INCREMENTAL")
    conn.execute(f"PRAGMA {schema}.journal_mode = WAL")
    # WAL with NORMAL: a power cut may lose the last batches, never corrupt;
    # the next sync simply redoes them.
    conn.execute(f"PRAGMA {schema}.synchronous = NORMAL")
    # FTS5 merges and the session indexes touch pages all over the file: a
    # 64 MB page cache instead of the default 2 MB more than doubles a build.
    conn.execute(f"PRAGMA {schema}.cache_size = -{cache_mb * 1024}")


def attach_text(conn: sqlite3.Connection) -> None:
    """Attach the trigram index's file (created if missing) as :data:`TEXT_SCHEMA`."""
    path = text_path()
    _new_file(path)
    conn.execute(f"ATTACH DATABASE ? AS {TEXT_SCHEMA}", [str(path)])
    _file_pragmas(conn, TEXT_SCHEMA, 32)


def detach_text(conn: sqlite3.Connection) -> None:
    """Let go of the trigram index's file (a pass hands it to its own writer)."""
    conn.execute(f"DETACH DATABASE {TEXT_SCHEMA}")


def connect_readonly() -> sqlite3.Connection | None:
    """A read connection for pages, or ``None`` when no side database exists yet.

    Its ``close()`` keeps it for the next request of the same thread, which gets it
    back while both files are still the same (device and inode): opening one,
    attaching the text file and setting it up cost a page about a millisecond,
    twice on the list's filtered pages (bench_list, bench_search). A file
    replaced, removed or newly there (a rebuild, a restore) gets a new connection.
    A file we hold open keeps its inode, so a new file never looks like it. The
    old files' disk space comes back once every thread has served a page since
    (or the dashboard restarts): a kept connection holds them open until then.
    """
    try:
        path = side_path()
    except SideDatabaseUnavailable:
        return None
    text = path.with_name("side-text.sqlite3")
    key = _files_key(path, text)
    if key is None:
        return None
    kept, _READERS.kept = getattr(_READERS, "kept", None), None
    if kept is not None:
        if kept.files == key:
            return kept
        kept.really_close()
    module = driver()
    uri = f"file:{quote(str(path), safe='/')}?mode=ro"
    conn = module.connect(
        uri, uri=True, isolation_level=None, check_same_thread=False, factory=_reader_class(module)
    )
    conn.files = key
    conn.execute("PRAGMA busy_timeout = 2000")
    # Kept for its thread's next pages, its cache holds the side file's hot pages
    # (session rows walked by last activity, the rollups) while the file is unchanged
    # (a pass that writes empties it). SQLite's default of 2 MB is refilled from
    # the disk by every filtered list page; no memory mapping: a pass truncates the
    # file, and a mapped page beyond its end would kill the process.
    # On a damaged file the pragma fails (it reads the header): the page's first query
    # says so, and the page falls back to the store.
    with contextlib.suppress(module.Error):
        conn.execute(f"PRAGMA main.cache_size = -{READ_CACHE_MB * 1024}")
    if key[3] is not None:
        # A side database without its text file (an older layout) reads as one
        # without a trigram index: is_current() says so before any query.
        conn.execute(
            f"ATTACH DATABASE ? AS {TEXT_SCHEMA}", [f"file:{quote(str(text), safe='/')}?mode=ro"]
        )
    return conn


#: The page cache of each page's read connection (MB): threads × this at most.
READ_CACHE_MB = 16
#: Each thread's read connection between two requests (see connect_readonly).
_READERS = threading.local()
_READER_CLASSES: dict[ModuleType, type] = {}


def _files_key(path: Path, text: Path) -> tuple | None:
    """Which files a read connection opens: None when there is no side database."""
    try:
        side = os.stat(path)
    except OSError:
        return None
    if not stat.S_ISREG(side.st_mode):
        return None
    try:
        found = os.stat(text)
        text_key = (found.st_dev, found.st_ino) if stat.S_ISREG(found.st_mode) else None
    except OSError:
        text_key = None
    return (str(path), side.st_dev, side.st_ino, text_key)


def _reader_class(module: ModuleType) -> type:
    reader = _READER_CLASSES.get(module)
    if reader is None:

        class Reader(module.Connection):  # type: ignore[name-defined,misc]
            """A page's read connection: ``close()`` keeps it for its thread's next one."""

            files: tuple | None = None

            def close(self) -> None:
                if getattr(_READERS, "kept", None) is not None or not _reusable(self):
                    self.really_close()
                    return
                _READERS.kept = self

            def really_close(self) -> None:
                super().close()

        reader = _READER_CLASSES[module] = Reader
    return reader


def _reusable(conn: sqlite3.Connection) -> bool:
    try:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        return True
    except Exception:
        return False  # a broken connection is closed, never kept


def bind_id(session_id: str) -> str | bytes:
    """A session id as the side database holds it: its text, or for TEXT that is not
    valid UTF-8 its exact bytes, as a BLOB (two such ids that read alike stay two)."""
    return session_id.raw if isinstance(session_id, Undecodable) else session_id


def read_id(value: str | bytes) -> str:
    """A session id read back from the side database: :func:`bind_id` undone."""
    return Undecodable(value) if isinstance(value, bytes) else value


def run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run ``;``-separated statements one by one.

    Unlike ``executescript`` this never commits first, so a listener can
    (re)create its tables inside the runner's transaction.
    """
    for statement in script.split(";"):
        if statement.strip():
            conn.execute(statement)


def errors() -> tuple[type[Exception], ...]:
    """The exception classes a side-database call can raise (the driver's own and stdlib's)."""
    try:
        return (sqlite3.Error, driver().Error)
    except SideDatabaseUnavailable:
        return (sqlite3.Error,)


def release_free_pages(conn: sqlite3.Connection) -> None:
    """Return the file's free pages to the disk (after a merge or a big forget)."""
    # Each step of the pragma frees one page: it must be stepped to the end.
    schemas = conn.execute("SELECT name FROM pragma_database_list WHERE name != 'temp'").fetchall()
    for (schema,) in schemas:
        conn.execute(f"PRAGMA {schema}.incremental_vacuum").fetchall()
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT``, or ``ROLLBACK`` on any exception (Ctrl-C included).

    The side database's one way to group writes: IMMEDIATE takes the write
    lock at the start, so two writers queue on ``busy_timeout`` instead of
    one failing half-way with "database is locked".
    """
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


class PassRunning(RuntimeError):
    """Another ``sync_index`` pass holds the writer's lock."""


def lock_path() -> Path:
    """The lock file beside the side database (ours; it outlives ``--rebuild``)."""
    return side_path().with_name("side.sqlite3.lock")


@contextmanager
def pass_lock() -> Iterator[None]:
    """Hold the one writer's lock for a whole pass, or raise :class:`PassRunning` at once.

    An advisory ``flock`` on a file of its own: the kernel drops it when the
    process ends, however it ends, so a killed pass never leaves a stale lock.
    The file holds the holder's pid, for the message a second pass prints.
    "At once" is within a tenth of a second: the lock is tried a few times,
    so a page checking :func:`pass_running` at that moment cannot turn a
    pass away.
    """
    path = lock_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if not _take_exclusive(fd):
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            raise PassRunning(
                f"Another sync_index pass is running (pid {holder}); this one exits. "
                "Overlapping runs never index a message twice."
            )
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


#: Tries (and the pause between them) before a pass concludes another holds the lock:
#: a page's :func:`pass_running` holds a shared lock for microseconds, a pass for seconds.
LOCK_TRIES = 5
LOCK_RETRY_S = 0.02


def _take_exclusive(fd: int) -> bool:
    for attempt in range(LOCK_TRIES):
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if attempt + 1 < LOCK_TRIES:
                time.sleep(LOCK_RETRY_S)
    return False


def pass_running() -> bool:
    """Does a ``sync_index`` pass hold the writer's lock right now?

    A non-blocking shared ``flock`` on the lock file, released at once: it
    fails only while a pass holds the exclusive lock. A pass killed however
    it was killed holds nothing (the kernel dropped its lock), so a stopped
    build never reads as running. Creates nothing: no lock file, no pass.
    """
    try:
        path = lock_path()
    except SideDatabaseUnavailable:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)  # closing the file drops the shared lock too
    return False
