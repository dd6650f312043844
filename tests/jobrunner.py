"""Run the jobs a request recorded, as the worker beside the server would (in this process)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connections

from sessions_admin.deletion.worker import work


def run_pending_jobs() -> int:
    """Carry out every job of this store that waits now; returns how many finished."""
    return work(lambda: False, poll_s=0, once=True)


@contextmanager
def worker_thread(poll_s: float = 0.1) -> Iterator[None]:
    """A worker beside a live server, in this process (its thread has its own connection)."""
    stop = threading.Event()

    def run() -> None:
        try:
            work(stop.is_set, poll_s=poll_s)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run, name="test-job-worker", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join(timeout=30)
