"""A thread that appends messages as the runtime does, and what it saw: errors, lock waits."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from tests.storebuilder import BASE_MS


class Appender:
    """``with Appender(path, session_ids) as a:`` appends to those sessions until the block
    ends, one ``BEGIN IMMEDIATE`` transaction each; ``a.waits`` are its lock waits (s)."""

    def __init__(self, path: Path, session_ids: list[str], pause_s: float = 0.002) -> None:
        self.path = path
        self.session_ids = session_ids
        self.pause_s = pause_s
        self.errors: list[str] = []
        self.waits: list[float] = []
        self.written = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Appender:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        n = 0
        while not self._stop.is_set():
            started = time.perf_counter()
            try:
                conn.execute("BEGIN IMMEDIATE")
                self.waits.append(time.perf_counter() - started)
                conn.execute(
                    "INSERT INTO session_messages (session_id, role, content, ts) "
                    "VALUES (?, 'user', 'live', ?)",
                    (self.session_ids[n % len(self.session_ids)], BASE_MS + n),
                )
                conn.execute("COMMIT")
                self.written += 1
            except sqlite3.Error as exc:
                self.errors.append(str(exc))
            n += 1
            time.sleep(self.pause_s)
        conn.close()
