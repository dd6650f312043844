"""``scripts/serve-with-sync``: what ``make run`` and ``make serve`` start.

The server starts at once beside ``sync_index --follow`` (it never waits for
the first build) and the job worker ``run_jobs``, and when the server stops, for
Ctrl-C or on its own, both stop too: no process outlives the script.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.prodserver import ROOT, clean_environment
from tests.storebuilder import StoreBuilder, create_store

SCRIPT = ROOT / "scripts" / "serve-with-sync"


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait_for(path: Path, seconds: float = 20) -> int:
    """The pid a stand-in wrote to ``path``, once it has."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text().strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.05)
    raise AssertionError(f"{path.name} never appeared")


@pytest.fixture
def stand_ins(tmp_path: Path) -> dict[str, Path]:
    """A "python" whose sync_index is a build that never ends and whose run_jobs waits
    for jobs for ever, and a server that serves until stopped; each writes its pid and
    its arguments, named after its command, when it starts."""
    python = tmp_path / "python"
    lines = ["#!/bin/sh", f'echo "$@" > {tmp_path}/$2.args', f"echo $$ > {tmp_path}/$2.pid"]
    python.write_text("\n".join([*lines, "exec sleep 300", ""]))
    python.chmod(0o755)
    return {
        "python": python,
        "sync": tmp_path / "sync_index.pid",
        "jobs": tmp_path / "run_jobs.pid",
        "server": tmp_path / "server.pid",
    }


def interruptible() -> None:
    """Ctrl-C as a terminal gives it: a shell that started ``make test`` in the background
    ignores SIGINT, its children inherit that, and a script cannot trap what it was
    started ignoring."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def in_the_background() -> None:
    """How a shell starts a background job (``make run &``): SIGINT ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def start(python: Path, *server: str, cwd: Path = ROOT, env: dict | None = None, background=False):
    # A session of its own: the test can send Ctrl-C to the whole group, as a terminal does.
    return subprocess.Popen(
        [str(SCRIPT), str(python), *server],
        cwd=cwd,
        env=env,
        start_new_session=True,
        preexec_fn=in_the_background if background else interruptible,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def test_the_server_starts_while_the_build_is_still_running_and_ctrl_c_stops_both(stand_ins):
    server_pid_file = stand_ins["server"]
    script = start(stand_ins["python"], "sh", "-c", f"echo $$ > {server_pid_file}; exec sleep 300")
    try:
        sync_pid, server_pid = wait_for(stand_ins["sync"]), wait_for(server_pid_file)
        jobs_pid = wait_for(stand_ins["jobs"])
        assert alive(sync_pid) and alive(server_pid)  # serving, the "build" not over
        args = (stand_ins["sync"].parent / "sync_index.args").read_text().split()
        assert args == ["manage.py", "sync_index", "--follow", "--quiet"]
        args = (stand_ins["sync"].parent / "run_jobs.args").read_text().split()
        assert args == ["manage.py", "run_jobs", "--verbosity", "0"]
        assert_ctrl_c_stops_all_three(script, sync_pid, server_pid, jobs_pid)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


def assert_ctrl_c_stops_all_three(script, *pids: int) -> None:
    """Ctrl-C to the script's group, as a terminal sends it: exit 130, nothing left."""
    os.killpg(script.pid, signal.SIGINT)
    assert script.wait(timeout=20) == 130
    assert not any(alive(pid) for pid in pids)


def test_ctrl_c_stops_all_three_after_a_start_in_the_background(stand_ins):
    # The stand-in runs the real Python for `-c` (the script's own restart), as the
    # venv's would.
    python = stand_ins["python"]
    body = python.read_text().replace(
        "#!/bin/sh\n", f'#!/bin/sh\n[ "$1" = "-c" ] && exec {sys.executable} "$@"\n', 1
    )
    python.write_text(body)
    server_pid_file = stand_ins["server"]
    script = start(
        python, "sh", "-c", f"echo $$ > {server_pid_file}; exec sleep 300", background=True
    )
    try:
        sync_pid, server_pid = wait_for(stand_ins["sync"]), wait_for(server_pid_file)
        jobs_pid = wait_for(stand_ins["jobs"])
        assert_ctrl_c_stops_all_three(script, sync_pid, server_pid, jobs_pid)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


def test_sigterm_stops_all_three(stand_ins):
    server_pid_file = stand_ins["server"]
    script = start(stand_ins["python"], "sh", "-c", f"echo $$ > {server_pid_file}; exec sleep 300")
    try:
        sync_pid, server_pid = wait_for(stand_ins["sync"]), wait_for(server_pid_file)
        jobs_pid = wait_for(stand_ins["jobs"])
        script.send_signal(signal.SIGTERM)  # the script alone, as a service manager might
        assert script.wait(timeout=20) == 143
        assert not alive(sync_pid) and not alive(server_pid) and not alive(jobs_pid)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


def test_a_server_that_exits_takes_the_sync_with_it_and_passes_on_its_status(stand_ins):
    # The server waits for the sync to be up, then fails on its own.
    sync_pid_file = stand_ins["sync"]
    server = f"while [ ! -s {sync_pid_file} ]; do sleep 0.05; done; exit 3"
    script = start(stand_ins["python"], "sh", "-c", server)
    try:
        assert script.wait(timeout=20) == 3
        assert not alive(wait_for(sync_pid_file))
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


#: A "server" that answers once the background sync has completed a pass, then exits.
WAIT_FOR_A_PASS = """
import time
from sessions_admin.ourdata import sidedb, sync
deadline = time.monotonic() + 120
while time.monotonic() < deadline:
    if sync.last_run().finished_at_ms:
        print("synced while serving; pass running:", sidedb.pass_running())
        raise SystemExit(0)
    time.sleep(0.2)
raise SystemExit("no pass finished")
"""


def test_the_real_sync_builds_the_index_beside_the_server_and_stops_with_it(tmp_path):
    home = StoreBuilder(tmp_path / "home")
    create_store(home.path)
    home.frames_root.mkdir(parents=True)
    for n in range(20):
        home.add_message(home.add_session(f"sess_{n}"), content=f"message {n}")
    var = tmp_path / "var"
    env = clean_environment(
        DJANGO_SECRET_KEY="serve-test-" + "k" * 40,
        AGENTS_HOST_HOME=str(home.home),
        SESSIONS_ADMIN_VAR_DIR=str(var),
    )
    python = Path(sys.executable)
    script = start(python, str(python), "manage.py", "shell", "-c", WAIT_FOR_A_PASS, env=env)
    try:
        output, _ = script.communicate(timeout=180)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
    assert script.returncode == 0, output
    assert "synced while serving" in output
    sync_pid = int((var / "side.sqlite3.lock").read_text())
    assert not alive(sync_pid)
