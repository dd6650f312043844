"""The erasure as a job, on the 500,000-session store: the POST, the worker, a kill -9.

    .venv/bin/python bench/bench_erase_job.py [--sessions 500000] [--skip-crash]

On a copy of the bench store (``bench/common.bench_home``) where one principal
owns ``--theirs`` sessions (default 79,000, the size of the busiest principals
on a 500,000-session host) spread over the whole store, its side index synced
once and kept beside it, erases that principal:

1. ``POST /principals/<id>/erase/``: what staff wait for, beside the request
   that used to run the whole erasure (the worker's time below), and beside
   the naive count of the principal's sessions it checks the phrase against;
2. the worker (``manage.py run_jobs`` as a process of its own) carries the
   job out while a second process appends as the runtime does
   (``BEGIN IMMEDIATE; INSERT; COMMIT``, 5 s busy timeout): end to end,
   status, the appender's longest wait and errors;
3. on a fresh copy, the worker is killed with ``kill -9`` once a quarter of
   the sessions are deleted, and started again: how long until the job is
   taken up again, and the final receipt against the store.

Targets: POST < 300 ms; erased and verified (the receipt final) < 60 s, writer
waits < 500 ms, no error; taken up again < 60 s after the restart, and "ok". After
its receipt the job compacts the search index (``docs/erasure.md``): reported too.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_erase import appender  # noqa: E402
from bench.common import BENCH_DIR, bench_home, print_table  # noqa: E402

PRINCIPAL = "bench:erase-me"
#: A receipt's statuses once verified (the job may still compact the search index).
FINAL = ("ok", "partial", "refused")


def principal_base(sessions: int, theirs: int) -> Path:
    """A copy of the bench home where one principal, ``bench:erase-me``, owns ``theirs``
    sessions spread over the whole store (every sixth row), made once and kept."""
    source = bench_home(sessions)
    home = BENCH_DIR / f"erase-job-home-{sessions}-{theirs}"
    store = home / "data" / "agents" / "store.db"
    if not store.exists():
        print(f"copying {source} and giving {PRINCIPAL} {theirs:,} sessions …", flush=True)
        store.parent.mkdir(parents=True)
        shutil.copy2(source / "data" / "agents" / "store.db", store)
        shutil.copytree(source / "sessions", home / "sessions", symlinks=True)
        with sqlite3.connect(store) as conn:
            conn.execute(
                "UPDATE sessions SET principal_id = ? WHERE rowid IN "
                "(SELECT rowid FROM sessions WHERE rowid % 6 = 0 ORDER BY rowid LIMIT ?)",
                (PRINCIPAL, theirs),
            )
    return home


def synced_base(home: Path) -> Path:
    """The side index of ``home``, synced once (minutes) and kept beside it."""
    var = home.parent / f"{home.name}-var"
    if not (var / "side.sqlite3").exists():
        var.mkdir(parents=True, exist_ok=True)
        print(f"syncing the side index of {home} into {var} (once) …", flush=True)
        env = environment(home, var)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0", "--skip-checks"], cwd=ROOT, env=env
        )
        subprocess.run([sys.executable, "manage.py", "sync_index", "--quiet"], cwd=ROOT, env=env)
    return var


def environment(home: Path, var: Path) -> dict[str, str]:
    return {
        **os.environ,
        "AGENTS_HOST_HOME": str(home),
        "SESSIONS_ADMIN_VAR_DIR": str(var),
        "DJANGO_SECRET_KEY": "bench-only-" + "x" * 40,
        "DJANGO_ALLOWED_HOSTS": "testserver,localhost",
        "DJANGO_LOG_FORMAT": "text",
    }


def fresh_copy(home: Path, var: Path, name: str) -> tuple[Path, Path]:
    """A copy of the store, its frames and the side files, to erase from."""
    dest = BENCH_DIR / name
    if dest.exists():
        shutil.rmtree(dest)
    (dest / "home" / "data" / "agents").mkdir(parents=True)
    shutil.copy2(home / "data" / "agents" / "store.db", dest / "home" / "data" / "agents")
    shutil.copytree(home / "sessions", dest / "home" / "sessions", symlinks=True)
    shutil.copytree(
        var, dest / "var", ignore=shutil.ignore_patterns("*.lock", "store-identity.json")
    )
    # A live store is not 6 GB of dirty pages just copied: write them out first, or
    # the job's first fsync waits for the copy (and the appender behind it).
    os.sync()
    return dest / "home", dest / "var"


def busiest(store: Path) -> tuple[str, int]:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute(
            "SELECT principal_id, count(*) FROM sessions WHERE typeof(principal_id) = 'text' "
            "GROUP BY principal_id ORDER BY 2 DESC LIMIT 1"
        ).fetchone()
    finally:
        conn.close()


def post_erasure(principal: str, sessions: int) -> tuple[float, float, int]:
    """In this process (Django set up on the copy): the POST's time, the naive count's
    time, and the receipt's number."""
    from django.db import connections

    from bench.common import staff_client
    from sessions_admin.deletion.erasure import erasure_phrase
    from sessions_admin.ourdata.erasures import Erasure

    client = staff_client()
    page = f"/principals/{quote(principal, safe='')}/"
    assert client.get(page).status_code == 200  # staff read the page before they erase
    url = f"{page}erase/"
    started = time.perf_counter()
    response = client.post(url, {"confirm": erasure_phrase(principal, sessions)})
    post_ms = (time.perf_counter() - started) * 1000
    assert response.status_code == 303, response.content[:500]
    started = time.perf_counter()
    with connections["agents"].cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sessions WHERE principal_id = %s", [principal])
    naive_ms = (time.perf_counter() - started) * 1000
    return post_ms, naive_ms, Erasure.objects.latest("pk").pk


def receipt_row(var: Path, receipt: int) -> tuple:
    with sqlite3.connect(var / "django.sqlite3") as db:
        return db.execute(
            "SELECT e.status, a.sessions_deleted, a.messages_deleted, e.frame_dirs, e.verification,"
            " j.runs, j.phase, e.detail, j.sessions FROM sessions_admin_erasure e"
            " JOIN sessions_admin_job j ON j.id = e.job_id"
            " JOIN sessions_admin_deletionaudit a ON a.id = e.audit_id WHERE e.id = ?",
            (receipt,),
        ).fetchone()


def worker(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "manage.py", "run_jobs", "-v0"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
    )


def wait_for(check, seconds: float) -> float:
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        if check():
            return time.perf_counter() - started
        time.sleep(0.1)
    raise SystemExit(f"not within {seconds} s")


def erase_with_appender(home: Path, var: Path, receipt: int) -> dict:
    store = home / "data" / "agents" / "store.db"
    ctx = mp.get_context("spawn")
    stop, results = ctx.Event(), ctx.Queue()
    proc = ctx.Process(target=appender, args=(str(store), stop, results))
    proc.start()
    assert results.get(timeout=60)[0] == "ready"
    appending = time.perf_counter()
    time.sleep(1.0)
    process = worker(environment(home, var))
    seconds = wait_for(lambda: receipt_row(var, receipt)[0] in FINAL, 600)
    compacted = seconds + wait_for(lambda: receipt_row(var, receipt)[6] == "done", 600)
    stop.set()
    span = time.perf_counter() - appending
    _, (written, waits, errors) = results.get(timeout=120)
    proc.join(timeout=30)
    os.killpg(process.pid, signal.SIGTERM)
    process.wait(timeout=60)
    return {
        "seconds": seconds,
        "compacted": compacted,
        "written": written,
        "wait": max(waits, default=0.0),
        # Writes come at an even pace: where in the run the longest wait fell.
        "wait_at": (waits.index(max(waits)) / len(waits) * span - 1.0) if waits else 0.0,
        "errors": errors,
    }


def crash_and_resume(home: Path, var: Path, receipt: int, total: int) -> dict:
    """Kill the worker with SIGKILL once it has deleted a quarter of the sessions."""
    env = environment(home, var)
    first = worker(env)
    wait_for(lambda: receipt_row(var, receipt)[8] >= total // 4, 600)
    os.killpg(first.pid, signal.SIGKILL)
    first.wait()
    killed_at = receipt_row(var, receipt)
    restarted = time.perf_counter()
    again = worker(env)
    taken = wait_for(lambda: receipt_row(var, receipt)[5] == 2, 120)
    wait_for(lambda: receipt_row(var, receipt)[6] == "done", 600)
    total = time.perf_counter() - restarted
    os.killpg(again.pid, signal.SIGTERM)
    again.wait(timeout=60)
    return {"taken": taken, "after_restart": total, "killed_at": killed_at}


def run_in_child(args: list[str]) -> None:
    subprocess.run([sys.executable, __file__, *args], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500_000)
    parser.add_argument("--theirs", type=int, default=79_000, help="the principal's sessions")
    parser.add_argument("--skip-crash", action="store_true")
    parser.add_argument("--post", nargs=3, help=argparse.SUPPRESS)  # home var principal
    args = parser.parse_args()
    if args.post:
        home, var, principal = args.post
        from bench.common import setup_django

        setup_django(Path(home), SESSIONS_ADMIN_VAR_DIR=var)
        count = busiest(Path(home) / "data" / "agents" / "store.db")[1]
        post_ms, naive_ms, receipt = post_erasure(principal, count)
        (Path(var) / "bench-post.txt").write_text(f"{post_ms} {naive_ms} {receipt}")
        return
    base_home = principal_base(args.sessions, args.theirs)
    base_var = synced_base(base_home)
    principal, count = busiest(base_home / "data" / "agents" / "store.db")
    rows = []
    home, var = fresh_copy(base_home, base_var, "erase-job-copy")
    run_in_child(["--post", str(home), str(var), principal])
    post_ms, naive_ms, receipt = (var / "bench-post.txt").read_text().split()
    done = erase_with_appender(home, var, int(receipt))
    status, sessions, messages, dirs, *_ = receipt_row(var, int(receipt))
    rows += [
        ["principal / sessions", f"{principal} / {count:,}"],
        ["POST /principals/<id>/erase/ (ms)", float(post_ms)],
        ["  naive count of its sessions (ms)", float(naive_ms)],
        ["worker: erased and verified (s)", done["seconds"]],
        ["  receipt", f"{status}: {sessions:,} sessions, {messages:,} msgs, {dirs:,} frame dirs"],
        ["  then the search index compacted, job done (s)", done["compacted"]],
        ["  appender writes / longest wait (ms) / errors",
         f"{done['written']:,} / {done['wait']:.0f} / {len(done['errors'])}"],
        ["  the longest wait, seconds after the worker started (about)", done["wait_at"]],
    ]  # fmt: skip
    if not args.skip_crash:
        home, var = fresh_copy(base_home, base_var, "erase-job-crash")
        run_in_child(["--post", str(home), str(var), principal])
        receipt = int((var / "bench-post.txt").read_text().split()[2])
        crash = crash_and_resume(home, var, receipt, count)
        status, sessions, *_ = receipt_row(var, receipt)
        killed = crash["killed_at"]
        rows += [
            ["kill -9 of the worker: phase, sessions done", f"{killed[6]}, {killed[8]:,}"],
            ["  taken up again after the restart (s)", crash["taken"]],
            ["  finished after the restart (s)", crash["after_restart"]],
            ["  final receipt", f"{status}, {sessions:,} sessions"],
        ]
    print_table(f"The erasure as a job ({args.sessions:,}-session store)", ["what", "value"], rows)
    shutil.rmtree(BENCH_DIR / "erase-job-copy", ignore_errors=True)
    shutil.rmtree(BENCH_DIR / "erase-job-crash", ignore_errors=True)


if __name__ == "__main__":
    main()
