"""A long sync pass records how far it is, and the pages that need the index say so.

"indexing: 50%, less than a minute left" while a pass runs; where it stopped,
and when, once no pass holds the writer's lock; nothing once a pass completed.
"""

from __future__ import annotations

import fcntl
import os
import threading
from datetime import UTC, datetime

import pytest

from sessions_admin import clock
from sessions_admin.ourdata import sidedb, sync
from sessions_admin.views.progress import describe, time_left
from tests.conftest import STORE_DB

#: Every page that answers from the index, or says why it cannot.
PAGES = ["/", "/tools/", "/search/?q=needle", "/sessions/?principal=user:bob"]


@pytest.fixture
def four_batches(store, var_dir, monkeypatch):
    """Forty messages synced ten at a time: a "long" pass for the pages' threshold."""
    monkeypatch.setattr(sync.progress, "PROGRESS_SHOWN_FROM", 5)
    sid = store.add_session("sess_bob", title="needle haystack", principal="user:bob")
    for n in range(40):
        store.add_message(sid, content=f"needle {n}")
    return store


def write_progress(done: int, total: int, rate: float, at_ms: int) -> None:
    """The bookkeeping a pass leaves after a batch (what a killed pass leaves behind)."""
    side = sidedb.connect()
    try:
        sync.prepare(side)
        side.executemany(
            "INSERT INTO sync_state (key, value) VALUES (?, ?)",
            [
                ("build_done", done),
                ("build_total", total),
                ("build_rate", rate),
                ("build_at_ms", at_ms),
            ],
        )
    finally:
        side.close()


def hhmm(epoch_ms: int) -> str:
    return datetime.fromtimestamp(epoch_ms / 1000, tz=UTC).strftime("%H:%M UTC")


@STORE_DB
def test_each_batch_records_the_pass_progress_and_a_running_pass_says_so(four_batches):
    seen = []
    sync.sync_once(batch_size=10, on_progress=lambda _: seen.append(sync.build_progress()))
    assert [(p.done, p.total, p.percent, p.running) for p in seen] == [
        (10, 40, 25, True),
        (20, 40, 50, True),
        (30, 40, 75, True),
        (40, 40, 100, True),
    ]
    assert all(p.rate > 0 and p.eta_s is not None for p in seen)
    # The pass completed: nothing is being built any more.
    assert sync.build_progress() is None


@STORE_DB
@pytest.mark.parametrize("page", PAGES)
def test_a_page_during_a_build_shows_the_percentage_and_the_time_left(
    four_batches, staff_client, page
):
    pages = []

    def look(progress: sync.Progress) -> None:
        if progress.done == 20:
            pages.append(staff_client.get(page).content.decode())

    sync.sync_once(batch_size=10, on_progress=look)
    assert len(pages) == 1
    assert "indexing: 50%, less than a minute left" in pages[0].lower()
    assert "indexing:" not in staff_client.get(page).content.decode().lower()


@STORE_DB
@pytest.mark.parametrize("page", PAGES)
def test_a_build_stopped_part_way_says_where_and_when_it_stopped(four_batches, staff_client, page):
    batches = []
    report = sync.sync_once(
        batch_size=10,
        on_progress=batches.append,
        should_stop=lambda: len(batches) == 2,
    )
    assert report.interrupted
    progress = sync.build_progress()
    assert (progress.done, progress.total, progress.running) == (20, 40, False)
    html = staff_client.get(page).content.decode().lower()
    assert f"indexing stopped at 50% (last progress at {hhmm(progress.at_ms).lower()})" in html
    assert "min left" not in html and "minute left" not in html


@STORE_DB
def test_a_killed_build_is_not_shown_as_running(four_batches, staff_client):
    # What a SIGKILLed build leaves: its last batch's progress, and no lock held.
    write_progress(done=42, total=100, rate=5.0, at_ms=clock.now_ms() - 1000)
    html = staff_client.get("/").content.decode()
    assert "indexing stopped at 42%" in html
    assert "min left" not in html


@STORE_DB
def test_a_running_pass_without_progress_for_a_minute_says_when_it_last_moved(
    four_batches, staff_client
):
    at = clock.now_ms() - 5 * 60_000
    write_progress(done=42, total=100, rate=5.0, at_ms=at)
    with sidedb.pass_lock():
        html = staff_client.get("/").content.decode()
    assert f"indexing: 42%, last progress at {hhmm(at)}" in html
    assert "min left" not in html


@STORE_DB
def test_a_short_pass_is_never_announced(store, var_dir):
    sid = store.add_session("sess_one")
    for _ in range(3):
        store.add_message(sid)
    batches = []
    sync.sync_once(batch_size=1, on_progress=batches.append, should_stop=lambda: bool(batches))
    assert batches and sync.build_progress() is None


@STORE_DB
def test_pass_running_follows_the_writer_lock_and_creates_nothing(var_dir):
    assert not sidedb.pass_running()
    assert not sidedb.lock_path().exists()
    with sidedb.pass_lock():
        assert sidedb.pass_running()
    assert not sidedb.pass_running()


@STORE_DB
def test_a_page_checking_the_lock_never_turns_a_pass_away(var_dir):
    """A probe's shared lock lasts microseconds; a pass starting then still gets in."""
    with sidedb.pass_lock():
        pass  # creates the lock file
    fd = os.open(sidedb.lock_path(), os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_SH)
    threading.Timer(0.03, os.close, [fd]).start()
    with sidedb.pass_lock():
        assert sidedb.pass_running()


@pytest.mark.parametrize(
    ("eta_s", "words"),
    [
        (None, "estimating the time left"),
        (25, "less than a minute left"),
        (360, "about 6 min left"),
        (7500, "about 2 h 5 min left"),
    ],
)
def test_the_time_left_reads_as_words(eta_s, words):
    assert time_left(eta_s) == words


def test_the_sentence_uses_the_rate_for_the_time_left():
    now = 1_700_000_000_000
    progress = sync.BuildProgress(done=420, total=1000, rate=1.0, at_ms=now - 1000, running=True)
    assert describe(progress, now) == "indexing: 42%, about 10 min left"
