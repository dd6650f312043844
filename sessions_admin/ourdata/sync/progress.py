"""What the pages show of the sync: a long pass's progress and the latest runs."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from sessions_admin import clock
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.sync.state import BATCH_SIZE, has_tables

#: A pass with no more messages than this to take in is over in a moment: pages
#: do not show its progress.
PROGRESS_SHOWN_FROM = BATCH_SIZE
#: Progress older than this reads as stalled ("last progress at 14:03 UTC").
PROGRESS_STALE_MS = 60_000


def progress_state(done: int, total: int, elapsed_s: float) -> dict[str, int | float]:
    """The ``build_*`` bookkeeping keys, written with the batch they describe."""
    return {
        "build_done": done,
        "build_total": max(total, done),
        "build_rate": done / elapsed_s if elapsed_s > 0 else 0.0,
        "build_at_ms": clock.now_ms(),
    }


@dataclass(frozen=True)
class BuildProgress:
    """How far a long pass (a first build, a rebuild, a big catch-up) has got.

    ``done`` and ``total`` count this pass's messages (``total`` estimated from
    ids when it started, so a resumed build counts what was left); ``rate`` is
    messages per second so far; ``at_ms`` when the last batch committed;
    ``running`` whether a pass holds the writer's lock now
    (:func:`sidedb.pass_running`).
    """

    done: int
    total: int
    rate: float
    at_ms: int
    running: bool

    @property
    def percent(self) -> int:
        """Whole percent done, rounded down (100 only when every message is in)."""
        return min(100 * self.done // self.total, 100) if self.total > 0 else 100

    @property
    def eta_s(self) -> float | None:
        if self.rate <= 0:
            return None
        return max(self.total - self.done, 0) / self.rate

    def stale(self, now_ms: int) -> bool:
        """No batch committed for over :data:`PROGRESS_STALE_MS` (hung, killed, or stopped)."""
        return now_ms - self.at_ms > PROGRESS_STALE_MS


def build_progress(side: sqlite3.Connection | None = None) -> BuildProgress | None:
    """The progress of a long pass that has not completed, or ``None`` when there is none.

    ``None`` too when the last pass completed after the progress was recorded,
    or the pass is small (:data:`PROGRESS_SHOWN_FROM` messages or fewer). A pass
    that was stopped or killed keeps its last progress with ``running`` false,
    until the next pass records its own.
    """
    own = side is None
    if own:
        side = sidedb.connect_readonly()
        if side is None:
            return None
    try:
        if not has_tables(side):
            return None
        values = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    finally:
        if own:
            side.close()
    done, total, rate, at_ms, synced = (
        values.get(key)
        for key in ("build_done", "build_total", "build_rate", "build_at_ms", "synced_at_ms")
    )
    if not all(isinstance(v, int) for v in (done, total, at_ms)):
        return None
    if total <= PROGRESS_SHOWN_FROM or (isinstance(synced, int) and synced >= at_ms):
        return None
    rate = float(rate) if isinstance(rate, int | float) else 0.0
    return BuildProgress(done, total, rate, at_ms, sidedb.pass_running())


@dataclass(frozen=True)
class LastRun:
    """The latest passes of ``sync_index``, as the side database's bookkeeping has them.

    Times are epoch milliseconds (``None``: never). ``failed_at_ms`` and
    ``error`` (one line, ``"OverflowError: …"``) are the last failure's, kept
    after later passes succeed; :attr:`failed` says whether the latest pass
    is the one that failed.
    """

    started_at_ms: int | None = None
    finished_at_ms: int | None = None
    failed_at_ms: int | None = None
    error: str | None = None

    @property
    def failed(self) -> bool:
        if self.failed_at_ms is None:
            return False
        return self.started_at_ms is None or self.failed_at_ms >= self.started_at_ms


def last_run(side: sqlite3.Connection | None = None) -> LastRun:
    """When the latest sync started and finished, and the last failure (time and reason).

    Reads the side database (a read-only connection of its own unless one is
    given); with no side database yet, or one no sync has prepared, every
    field is ``None``.
    """
    own = side is None
    if own:
        side = sidedb.connect_readonly()
        if side is None:
            return LastRun()
    try:
        if not has_tables(side):
            return LastRun()
        values = dict(side.execute("SELECT key, value FROM sync_state").fetchall())
    finally:
        if own:
            side.close()

    def number(key: str) -> int | None:
        value = values.get(key)
        return value if isinstance(value, int) else None

    error = values.get("run_error")
    return LastRun(
        started_at_ms=number("run_started_at_ms"),
        finished_at_ms=number("run_finished_at_ms"),
        failed_at_ms=number("run_failed_at_ms"),
        error=error if isinstance(error, str) else None,
    )
