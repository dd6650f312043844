"""The sentences a page shows while long work goes on: the side index's build, a job.

"indexing: 42%, about 6 min left", from the progress the sync records with
each batch (:func:`sessions_admin.ourdata.sync.build_progress`). A pass that
stopped (killed, Ctrl-C, an error) never reads as running: without the
writer's lock held it says where it stopped, and a running pass whose last
batch is over a minute old says when that was instead of a time left.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import timezone

from sessions_admin import clock
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.jobs import Job
from sessions_admin.ourdata.rollups.figures import SideConnection
from sessions_admin.ourdata.sync import BuildProgress, build_progress


def time_left(eta_s: float | None) -> str:
    """``about 6 min left``; ``estimating the time left`` before the first batch."""
    if eta_s is None:
        return "estimating the time left"
    minutes = round(eta_s / 60)
    if minutes < 1:
        return "less than a minute left"
    if minutes < 60:
        return f"about {minutes} min left"
    return f"about {minutes // 60} h {minutes % 60} min left"


def describe(progress: BuildProgress, now_ms: int) -> str:
    """What the pages say about a pass's progress (plain text, no markup)."""
    at = datetime.fromtimestamp(progress.at_ms / 1000, tz=UTC).strftime("%H:%M UTC")
    if not progress.running:
        return (
            f"indexing stopped at {progress.percent}% (last progress at {at}); "
            "no sync_index pass is running: run manage.py sync_index to resume"
        )
    if progress.stale(now_ms):
        return f"indexing: {progress.percent}%, last progress at {at}"
    return f"indexing: {progress.percent}%, {time_left(progress.eta_s)}"


def build_sentence(side: SideConnection | None = None) -> str | None:
    """The sentence for a long pass that has not completed, or ``None``.

    Reads the side database's bookkeeping (its own read-only connection unless
    one is given); a missing or unreadable side database has no progress.
    """
    try:
        progress = build_progress(side)
    except (sidedb.SideDatabaseUnavailable, *sidedb.errors()):
        return None
    return None if progress is None else describe(progress, clock.now_ms())


def job_sentence(job: Job) -> str:
    """Where a job is, for the page that waits on it: "4,200 of 20,000 sessions, about 9 s left"."""
    Phase = Job.Phase
    if job.phase == Phase.QUEUED:
        waited = (timezone.now() - job.created_at).total_seconds()
        sentence = "Waiting for the worker to take it"
        if waited > 10:
            sentence += " (is `manage.py run_jobs` running beside the server?)"
        return sentence
    if job.phase == Phase.LISTING:
        sentence = "Listing the sessions"
    elif job.phase == Phase.DELETING:
        left = job.seconds_left()
        when = f"about {max(1, round(left))} s left" if left is not None and left < 60 else ""
        sentence = f"{job.sessions:,} of {job.total:,} sessions, {when or time_left(left)}"
    elif job.phase == Phase.FRAMES:
        sentence = (
            f"All {job.sessions:,} sessions deleted; removing frame directories "
            f"({job.frames_cursor:,} of {job.listed:,} sessions checked)"
        )
    elif job.phase == Phase.FINISHING:
        sentence = f"All {job.sessions:,} sessions deleted; forgetting and verifying"
    elif job.phase == Phase.COMPACTING:
        sentence = "Receipt final; compacting the search index"
    else:
        return "Done"
    if job.stalled():
        sentence += "; its worker stopped, and the next worker to start goes on from here"
    return sentence
