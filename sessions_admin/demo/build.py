"""The entry point: :func:`build_demo_home` and the store file around the rows.

Splits ``schema.sql`` into what runs before the load (pragmas, tables) and
after it (indexes, the trigger), opens the store under a temporary name with
build pragmas (no journal, no fsync, a big cache), adds the neighbour tables,
runs :class:`~sessions_admin.demo.rows.Builder` in one transaction,
switches the file to WAL, and links it into place only when complete. It
never overwrites an existing store.
"""

from __future__ import annotations

import os
import sqlite3
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from random import Random

from sessions_admin import clock
from sessions_admin.demo.frames_writer import FRAMES_DIRNAME
from sessions_admin.demo.rows import Builder
from sessions_admin.demo.vocabulary import DAY_MS

# The store's own schema (the runtime's, copied beside the store layer that reads it).
SCHEMA_PATH = Path(__file__).parents[1] / "store" / "schema.sql"
STORE_RELPATH = Path("data", "agents", "store.db")

# Neighbour tables: a real store.db holds more than the session tables. They
# make sure the dashboard's "never touch anything else" rule is testable.
_NEIGHBOUR_DDL = (
    "CREATE TABLE memory_records (id INTEGER PRIMARY KEY, kind TEXT, body TEXT, "
    "created_at INTEGER)",
    "CREATE TABLE memory_embeddings (record_id INTEGER REFERENCES memory_records(id), "
    "dim INTEGER, vector BLOB)",
)


@dataclass(frozen=True)
class DemoSummary:
    """What :func:`build_demo_home` wrote, and how long it took."""

    sessions: int
    messages: int
    state_rows: int
    frame_files: int
    seconds: float
    store_path: Path
    frames_root: Path

    @property
    def messages_per_second(self) -> float:
        """Build throughput over the whole run (indexes and frames included)."""
        return self.messages / self.seconds if self.seconds > 0 else float("inf")


# --------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------


def _strip_leading_comments(stmt: str) -> str:
    text = stmt.lstrip()
    while text.startswith("--"):
        _, _, text = text.partition("\n")
        text = text.lstrip()
    return text


def schema_statements(sql: str) -> tuple[list[str], list[str]]:
    """Split DDL into (before-load, after-load) statements.

    Indexes and triggers go after the bulk load: inserting into indexed tables
    is several times slower, and the trigger must not rewrite the
    ``last_active``/``turn_count`` values the generator computed. Everything
    else (pragmas, tables) runs first. Statement texts are kept verbatim so
    ``sqlite_master.sql`` matches what executing the file directly stores.
    """
    before: list[str] = []
    after: list[str] = []
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        # complete_statement understands CREATE TRIGGER ... BEGIN ...; END;
        if sqlite3.complete_statement(buf):
            stmt = _strip_leading_comments(buf).strip()
            buf = ""
            if not stmt or stmt == ";":
                continue
            # "CREATE [UNIQUE] INDEX", "CREATE [TEMP] TRIGGER"
            head = stmt.upper().split(None, 4)[:4]
            if head[0] == "CREATE" and ("INDEX" in head[1:3] or "TRIGGER" in head[1:3]):
                after.append(stmt)
            else:
                before.append(stmt)
    if _strip_leading_comments(buf).strip():
        raise ValueError(f"schema.sql ends with an incomplete statement: {buf.strip()[:80]!r}")
    return before, after


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def _neighbour_rows(conn: sqlite3.Connection, now_ms: int) -> None:
    rng = Random("sessions-admin-demo:neighbours")
    kinds = ("fact", "preference", "summary")
    bodies = (
        "alice prefers short answers",
        "checkout is owned by team-payments",
        "staging resets every Sunday night",
        "refunds above 500 EUR need a second approver",
        "the indexer lags after bulk imports",
        "use the read-only replica for ad-hoc SQL",
        "deploys freeze on the last day of the quarter",
        "ops.pager escalates after 15 minutes",
    )
    for i, body in enumerate(bodies, start=1):
        conn.execute(
            "INSERT INTO memory_records VALUES (?, ?, ?, ?)",
            (i, kinds[i % 3], body, now_ms - rng.randint(1, 200) * DAY_MS),
        )
        vector = struct.pack("<16f", *(rng.uniform(-1, 1) for _ in range(16)))
        conn.execute("INSERT INTO memory_embeddings VALUES (?, ?, ?)", (i, 16, vector))


def build_demo_home(
    home: Path,
    *,
    sessions: int = 2000,
    messages_per_session: int = 20,
    seed: int = 1,
    big_session_messages: int = 0,
    frames_fraction: float = 0.3,
    now_ms: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> DemoSummary:
    """Create ``<home>/data/agents/store.db`` and ``<home>/sessions/`` with demo data.

    Raises ``FileExistsError`` if the store (or its -wal/-journal) already
    exists: a demo home is never overwritten (it might be a real one). Frame
    files of an earlier build in ``<home>/sessions/`` are overwritten or left
    in place, so use a fresh home for exact reproductions. The store is built under a
    temporary name and linked into place only when complete, so an
    interrupted build leaves no half-filled ``store.db`` behind.

    ``progress``, if given, is called with the number of messages written so
    far after each chunk. ``now_ms`` (default: the current time) is the
    instant the data ends at; pass it explicitly for reproducible output.
    """
    if sessions < 0 or messages_per_session < 0 or big_session_messages < 0:
        raise ValueError("sessions, messages_per_session and big_session_messages must be >= 0")
    if not 0.0 <= frames_fraction <= 1.0:
        raise ValueError("frames_fraction must be between 0 and 1")
    home = Path(home)
    store = home / STORE_RELPATH
    _refuse_existing_store(home, store)
    if now_ms is None:
        now_ms = clock.now_ms()
    started = time.perf_counter()
    store.parent.mkdir(parents=True, exist_ok=True)
    frames_root = home / FRAMES_DIRNAME
    frames_root.mkdir(parents=True, exist_ok=True)
    partial = store.with_name(store.name + ".partial")
    for leftover in _sidecars(partial, "-journal", "-wal", "-shm"):
        leftover.unlink(missing_ok=True)
    builder = Builder(
        home,
        sessions=sessions,
        messages_per_session=messages_per_session,
        seed=seed,
        big_session_messages=big_session_messages,
        frames_fraction=frames_fraction,
        now_ms=now_ms,
        progress=progress,
    )
    # isolation_level=None: we issue BEGIN/COMMIT ourselves.
    conn = sqlite3.connect(partial, isolation_level=None)
    try:
        _fill(conn, builder, now_ms)
        builder.finish_frames_writer()
        _link_into_place(partial, store)
    except BaseException:
        conn.close()
        for leftover in _sidecars(partial, "-wal", "-shm"):
            leftover.unlink(missing_ok=True)
        raise
    return DemoSummary(
        sessions=builder.session_rows,
        messages=builder.messages,
        state_rows=builder.state_rows,
        frame_files=builder.frame_files,
        seconds=time.perf_counter() - started,
        store_path=store,
        frames_root=frames_root,
    )


def _sidecars(path: Path, *suffixes: str) -> list[Path]:
    """``path`` and its SQLite side files (``-wal``, ``-journal``…)."""
    return [path, *(Path(f"{path}{suffix}") for suffix in suffixes)]


def _refuse_existing_store(home: Path, store: Path) -> None:
    # A leftover -wal or -journal would be replayed into the new file by
    # SQLite, so it counts as an existing store too.
    for existing in _sidecars(store, "-wal", "-journal"):
        if existing.exists():
            raise FileExistsError(
                f"refusing to overwrite existing store {existing}; remove it (and "
                f"{home / FRAMES_DIRNAME}) or pick another home"
            )


def _fill(conn: sqlite3.Connection, builder: Builder, now_ms: int) -> None:
    """Create the schema and every row in the private partial file, then close it."""
    before, after = schema_statements(SCHEMA_PATH.read_text(encoding="utf-8"))
    # Build settings: no journal, no fsync, a big cache (also the sorter's
    # memory for CREATE INDEX). The file is private until linked into
    # place, so a crash only loses the partial file. One sorter helper
    # thread: on 10M rows, more threads were no faster on a 2-core machine.
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -524288")  # 512 MiB
    conn.execute(f"PRAGMA threads = {1 if (os.cpu_count() or 1) > 1 else 0}")
    for stmt in before:
        conn.execute(stmt)
    for stmt in _NEIGHBOUR_DDL:
        conn.execute(stmt)
    conn.execute("BEGIN")
    _neighbour_rows(conn, now_ms)
    builder.start_frames_writer()
    try:
        builder.run(conn)
        for stmt in after:
            conn.execute(stmt)
        conn.execute("COMMIT")
        # What the runtime runs with; persistent in the file header.
        conn.execute("PRAGMA journal_mode = WAL")
        conn.close()
    except BaseException:
        builder.finish_frames_writer(report_errors=False)  # keep the first error
        raise


def _link_into_place(partial: Path, store: Path) -> None:
    """Publish the finished file as ``store``, never over one that appeared meanwhile."""
    try:
        os.link(partial, store)  # fails if a store appeared meanwhile
        partial.unlink()
    except FileExistsError:
        raise FileExistsError(f"refusing to overwrite existing store {store}") from None
    except OSError:
        if store.exists():
            raise FileExistsError(f"refusing to overwrite existing store {store}") from None
        partial.rename(store)  # filesystems without hard links
