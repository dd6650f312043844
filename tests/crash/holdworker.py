"""``manage.py run_jobs`` with a hold: the crash tests' worker for its first run.

Run as ``python tests/crash/holdworker.py POINT MARKER [run_jobs args]``: the
real worker, in small batches, that stops dead at ``POINT`` (it writes MARKER
and sleeps until killed), so ``SIGKILL`` lands exactly there:

* ``listed``: the job's list is written, no batch has begun;
* ``committed``: a batch's transaction has committed, and nothing of ours
  recorded it yet (its frames not removed);
* ``frames``: some frame directories are removed, not yet recorded;
* ``verifying``: everything forgotten and verified, the receipt not yet written;
* ``compacting``: the receipt written, the search index's purge begun.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessions_admin.settings")


def hold(marker: str) -> None:
    Path(marker).write_text(str(os.getpid()))
    while True:
        time.sleep(60)


def install(point: str, marker: str) -> None:
    from sessions_admin.deletion import bulk, jobs, receipts

    bulk.MAX_BATCH_SESSIONS = 5
    jobs.FRAMES_CHUNK = 6
    calls = {"delete": 0, "frames": 0}
    real_delete, real_frames, real_verify = jobs.cascade_delete, jobs.remove_frames, receipts.verify

    def cascade_delete(*args, **kwargs):
        if point == "listed":
            hold(marker)
        done = real_delete(*args, **kwargs)
        calls["delete"] += 1
        if point == "committed" and calls["delete"] == 2:
            hold(marker)
        return done

    def remove_frames(*args, **kwargs):
        real_frames(*args, **kwargs)
        calls["frames"] += 1
        if point == "frames" and calls["frames"] == 3:
            hold(marker)

    def verify(*args, **kwargs):
        left = real_verify(*args, **kwargs)
        if point == "verifying":
            hold(marker)
        return left

    real_purge = jobs.purge_step

    def purge_step(*args, **kwargs):
        more = real_purge(*args, **kwargs)
        if point == "compacting":
            hold(marker)
        return more

    jobs.cascade_delete, jobs.remove_frames, receipts.verify = cascade_delete, remove_frames, verify
    jobs.purge_step = purge_step


if __name__ == "__main__":
    import django

    django.setup()
    install(sys.argv[1], sys.argv[2])
    from django.core.management import call_command

    call_command("run_jobs", *sys.argv[3:])
