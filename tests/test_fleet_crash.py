"""A host's publish killed with ``kill -9`` part-way: the directory holds whole chunks
only, and the next ``sync_index`` pass completes it (real processes, real signal)."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.prodserver import ROOT, clean_environment
from tests.storebuilder import StoreBuilder, create_store

SESSIONS = 3000


def _directory(var: Path) -> list[tuple]:
    with sqlite3.connect(var / "django.sqlite3", timeout=10) as db:
        return db.execute(
            "SELECT session_id, title, principal FROM sessions_admin_fleetsession"
        ).fetchall()


@pytest.mark.slow
def test_a_publish_killed_part_way_is_completed_by_the_next_pass(tmp_path):
    home = StoreBuilder(tmp_path / "home")
    create_store(home.path)
    home.frames_root.mkdir(parents=True)
    with sqlite3.connect(home.path) as store:
        store.executemany(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count, "
            "created_at, last_active) VALUES (?, 't', 'p', ?, ?, 0, ?, ?)",
            [(f"s{n:05d}", f"user:{n % 7}", f"title {n}", n, n) for n in range(SESSIONS)],
        )
    var = tmp_path / "var"
    env = clean_environment(
        DJANGO_SECRET_KEY="fleet-crash-" + "k" * 40,
        AGENTS_HOST_HOME=str(home.home),
        SESSIONS_ADMIN_VAR_DIR=str(var),
        SESSIONS_ADMIN_FLEET="1",
        SESSIONS_ADMIN_STORE_NAME="crash-host",
        SESSIONS_ADMIN_FLEET_CHUNK="5",  # 600 transactions: time to be killed among them
    )
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput", "-v0"], cwd=ROOT, env=env, check=True)
    sync = subprocess.Popen(
        [*manage, "sync_index", "--quiet"], cwd=ROOT, env=env, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while True:
        try:
            written = len(_directory(var))
        except sqlite3.OperationalError:
            written = 0  # the table is not there yet, or locked a moment
        if written >= 50 or sync.poll() is not None:
            break
        assert time.monotonic() < deadline, "the publish never started"
        time.sleep(0.01)
    os.killpg(sync.pid, signal.SIGKILL)
    sync.wait(timeout=10)
    assert sync.returncode == -signal.SIGKILL, "the pass ended before it could be killed"
    cut = _directory(var)
    assert 0 < len(cut) < SESSIONS and len(cut) % 5 == 0  # whole chunks only
    done = subprocess.run(
        [*manage, "sync_index"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    rows = _directory(var)
    assert sorted(rows) == sorted(
        (f"s{n:05d}", f"title {n}", f"user:{n % 7}") for n in range(SESSIONS)
    )
    verified = subprocess.run(
        [*manage, "sync_index", "--verify"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert verified.returncode == 0, verified.stdout + verified.stderr
