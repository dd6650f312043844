"""Long work survives ``kill -9``: the real processes killed mid-job, restarted, finish true.

Each test starts what ``scripts/serve-with-sync`` starts (the server, the sync,
the job worker), records a job, and ``SIGKILL``s the whole process group at a
chosen point of the worker's run (``tests/crash/holdworker.py`` stops it dead
there). Then the same command starts them again, and the job must go on by
itself, within a minute, and end with a record that equals the store and the
frames root: everything the job erased counted, in all its runs.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.prodserver import ROOT, clean_environment, free_port
from tests.storebuilder import StoreBuilder, create_store

SCRIPT = ROOT / "scripts" / "serve-with-sync"
HOLD = ROOT / "tests" / "crash" / "holdworker.py"
PRINCIPAL = "user:crash"
THEIRS, OTHERS = 40, 5


@pytest.fixture(scope="module")
def migrated(tmp_path_factory) -> Path:
    """Django's own tables, migrated once; each test starts from a copy."""
    place = tmp_path_factory.mktemp("migrated")
    home = StoreBuilder(place / "home")
    create_store(home.path)
    env = clean_environment(
        DJANGO_SECRET_KEY="crash-test-" + "k" * 40,
        AGENTS_HOST_HOME=str(home.home),
        SESSIONS_ADMIN_VAR_DIR=str(place / "var"),
    )
    manage([sys.executable, "manage.py", "migrate", "--noinput", "-v0"], env)
    return place / "var" / "django.sqlite3"


def manage(argv: list[str], env: dict, timeout: float = 120) -> str:
    done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@dataclass
class Host:
    home: StoreBuilder
    var: Path
    env: dict
    theirs: list[str]
    others: list[str]

    def ours(self, sql: str, params: tuple = ()) -> list[tuple]:
        with sqlite3.connect(self.var / "django.sqlite3", timeout=10) as db:
            return db.execute(sql, params).fetchall()

    def start(self, python: str) -> subprocess.Popen:
        server = [sys.executable, "manage.py", "runserver", f"127.0.0.1:{free_port()}"]
        return subprocess.Popen(
            [str(SCRIPT), python, *server, "--noreload", "--skip-checks"],
            cwd=ROOT,
            env=self.env,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def shell(self, code: str) -> str:
        return manage([sys.executable, "manage.py", "shell", "-v0", "-c", code], self.env)


@pytest.fixture
def host(tmp_path, migrated) -> Host:
    """A store with 40 sessions of the principal (messages, state, frames each) and 5 of
    another, and a data folder whose tables are migrated."""
    home = StoreBuilder(tmp_path / "home")
    create_store(home.path)
    home.frames_root.mkdir(parents=True)
    theirs = [home.add_session(f"c{n:03d}", principal=PRINCIPAL) for n in range(THEIRS)]
    others = [home.add_session(f"o{n:03d}", principal="user:other") for n in range(OTHERS)]
    for sid in theirs + others:
        for n in range(3):
            home.add_message(sid, content=f"message {n} of {sid}")
        home.add_state(sid, "repl_state", {"n": 1})
        folder = home.frames_root / sid
        folder.mkdir()
        (folder / "activity-req1.jsonl").write_text('{"kind":"x"}\n' * 3)
    var = tmp_path / "var"
    var.mkdir()
    shutil.copy(migrated, var / "django.sqlite3")
    env = clean_environment(
        DJANGO_SECRET_KEY="crash-test-" + "k" * 40,
        AGENTS_HOST_HOME=str(home.home),
        SESSIONS_ADMIN_VAR_DIR=str(var),
        DJANGO_LOG_FORMAT="text",
    )
    return Host(home, var, env, theirs, others)


def holding_python(tmp_path: Path, point: str, marker: Path) -> str:
    """A "python" for serve-with-sync whose run_jobs is the worker held at ``point``."""
    stand_in = tmp_path / "python"
    stand_in.write_text(
        "#!/bin/sh\n"
        f'if [ "$2" = run_jobs ]; then shift 2; '
        f'exec {sys.executable} {HOLD} {point} {marker} "$@"; fi\n'
        f'exec {sys.executable} "$@"\n'
    )
    stand_in.chmod(0o755)
    return str(stand_in)


def kill_group(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    try:
        os.killpg(process.pid, sig)
    except ProcessLookupError:
        return
    process.wait(timeout=30)


def wait_until(check, seconds: float, what: str):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if found := check():
            return found
        time.sleep(0.2)
    raise AssertionError(f"{what}: not within {seconds} s")


def crash_and_restart(host: Host, tmp_path: Path, point: str, job_id: int) -> float:
    """Run the job held at ``point``, SIGKILL every process, start again; returns how
    long after the restart the job was taken up again."""
    marker = tmp_path / "held"
    first = host.start(holding_python(tmp_path, point, marker))
    try:
        wait_until(marker.exists, 90, f"the worker reaching {point!r}")
    finally:
        kill_group(first)
    (phase, runs), *_ = host.ours(
        "SELECT phase, runs FROM sessions_admin_job WHERE id = ?", (job_id,)
    )
    assert phase != "done" and runs == 1
    restarted_at = time.monotonic()
    again = host.start(sys.executable)
    try:
        wait_until(
            lambda: (
                host.ours("SELECT runs FROM sessions_admin_job WHERE id = ?", (job_id,))[0][0] == 2
            ),
            60,
            "the job taken up again",
        )
        resumed_after = time.monotonic() - restarted_at
        wait_until(
            lambda: (
                host.ours("SELECT phase FROM sessions_admin_job WHERE id = ?", (job_id,))[0][0]
                == "done"
            ),
            90,
            "the job finished",
        )
    finally:
        kill_group(again, signal.SIGTERM)
    return resumed_after


def digest(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


@pytest.mark.parametrize("point", ["listed", "committed", "frames", "verifying", "compacting"])
def test_an_erasure_killed_anywhere_finishes_after_a_restart_with_a_true_receipt(
    host, tmp_path, point
):
    receipt_id = int(
        host.shell(
            "from sessions_admin.deletion import Actor\n"
            "from sessions_admin.deletion.erasure import request_erasure\n"
            f"print(request_erasure({PRINCIPAL!r}, actor=Actor(name='crash')).pk)"
        ).strip()
    )
    ((job_id,),) = host.ours(
        "SELECT job_id FROM sessions_admin_erasure WHERE id = ?", (receipt_id,)
    )
    resumed_after = crash_and_restart(host, tmp_path, point, job_id)
    assert resumed_after < 60
    ((status, sessions, messages, state, dirs, sha, verification, detail),) = host.ours(
        "SELECT e.status, a.sessions_deleted, a.messages_deleted, a.state_deleted, e.frame_dirs,"
        " e.ids_sha256, e.verification, e.detail FROM sessions_admin_erasure e"
        " JOIN sessions_admin_deletionaudit a ON a.id = e.audit_id WHERE e.id = ?",
        (receipt_id,),
    )
    assert status == "ok", detail
    assert (sessions, messages, state, dirs) == (THEIRS, 3 * THEIRS, THEIRS, THEIRS)
    assert sha == digest(host.theirs)
    assert set(json.loads(verification).values()) == {0}
    store = host.home
    assert store.execute("SELECT count(*) FROM sessions WHERE principal_id = ?", (PRINCIPAL,)) == [
        (0,)
    ]
    assert store.count("sessions") == OTHERS and store.count("session_messages") == 3 * OTHERS
    assert sorted(p.name for p in store.frames_root.iterdir()) == host.others
    assert host.ours("SELECT count(*) FROM sessions_admin_jobsession") == [(0,)]
    ((outcome, audit_sessions),) = host.ours(
        "SELECT outcome, sessions_deleted FROM sessions_admin_deletionaudit"
        " WHERE operation = 'erase_principal'"
    )
    assert (outcome, audit_sessions) == ("ok", THEIRS)


@pytest.mark.parametrize("point", ["committed", "frames"])
def test_a_clear_all_killed_mid_way_finishes_after_a_restart_and_its_audit_counts_all(
    host, tmp_path, point
):
    job_id = int(
        host.shell(
            "from sessions_admin.deletion import Actor, request_clear_all\n"
            "job = request_clear_all(actor=Actor(name='crash'), expected_sessions=45,"
            " wipe_frames=True)\n"
            "print(job.pk)"
        ).strip()
    )
    crash_and_restart(host, tmp_path, point, job_id)
    store = host.home
    assert store.count("sessions") == 0 and store.count("session_messages") == 0
    assert list(store.frames_root.iterdir()) == []
    ((outcome, sessions, messages, dirs),) = host.ours(
        "SELECT outcome, sessions_deleted, messages_deleted, frame_dirs_removed"
        " FROM sessions_admin_deletionaudit WHERE operation = 'clear_all'"
    )
    total = THEIRS + OTHERS
    assert (outcome, sessions, messages, dirs) == ("ok", total, 3 * total, total)
