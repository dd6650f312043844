"""Load: staff browse through gunicorn while the runtime keeps appending.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_load.py \\
        [--users 20] [--seconds 60] [--keep-copy]

1. Copies the 500,000-session bench store (file, WAL and all) to
   ``<bench dir>/<branch>-load-home``: the appender writes there, never to
   the shared store. The frames are read from the shared home (read only).
2. Gives the copy a Django data folder of its own: migrate, collectstatic
   and ``--users`` staff accounts.
3. Starts gunicorn exactly as docs/operations.md does (``-c gunicorn.conf.py``),
   JSON request logs to a file.
4. Starts the appender, a separate process that appends messages as the
   runtime does (``BEGIN IMMEDIATE; INSERT; COMMIT``, its own 5 s busy
   timeout), about 150 a second, timing each wait for the write lock.
5. Logs each account in through the login form, one after the other (timed
   apart: PBKDF2 is slow on purpose), then runs locust headless
   (bench/locust_staff.py): ``--users`` staff, already logged in, with ``--think``
   think time for ``--seconds`` over the list, filters, transcripts, frames
   and targets.
6. Reports throughput, p50/p95/p99 and errors per page and overall (from
   locust's CSV), the same pages' times inside the server (its request log),
   the appender's writes, worst wait and errors, and lost writes (its rows
   counted in the store afterwards), against the goals: 0 errors,
   p95 < 150 ms, p99 < 300 ms, waits < 500 ms, nothing lost.

``--side FILE`` copies a built side database (``side.sqlite3`` and the
``side-text.sqlite3`` beside it, e.g. the ones
``bench_search.py --build`` leaves in ``<bench dir>/var-search``) into the
copy's data folder and runs one ``sync_index`` pass before the browsing, as a
host that keeps its index does (production runs ``sync_index --follow``;
``--follow`` runs it beside the browsing too). Without it the copy has no
index: the pages use their store fallbacks, as in the first minutes of a
first build.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_deletes import copy_home  # noqa: E402
from bench.common import (  # noqa: E402
    BENCH_DIR,
    ROOT,
    RuntimeAppender,
    bench_home,
    print_table,
)

GOALS = {"p95": 150, "p99": 300, "wait": 500}


def branch() -> str:
    name = subprocess.run(
        ["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=ROOT, capture_output=True, text=True
    ).stdout.strip()
    return name.replace("/", "-") or "bench"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def samples(store: Path, frames_root: Path, logins: list[str]) -> dict:
    """Ids the locust users click on, read once from the copy with plain sqlite3."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    top = conn.execute("SELECT MAX(rowid) FROM sessions").fetchone()[0]
    rowids = random_rowids(top, 400)
    marks = ",".join("?" * len(rowids))
    sessions = [
        row[0] for row in conn.execute(f"SELECT id FROM sessions WHERE rowid IN ({marks})", rowids)
    ]
    targets = [row[0] for row in conn.execute("SELECT DISTINCT target_key FROM sessions")]
    principals = [
        row[0]
        for row in conn.execute(
            f"SELECT DISTINCT principal_id FROM sessions WHERE rowid IN ({marks}) "
            "AND principal_id IS NOT NULL",
            rowids,
        )
    ]
    conn.close()
    frames = []
    for directory in sorted(frames_root.iterdir())[:500]:
        for file in sorted(directory.glob("activity-*.jsonl"))[:3]:
            frames.append((directory.name, file.stem.removeprefix("activity-")))
    return {
        "logins": logins,
        "sessions": sessions,
        "targets": targets,
        "principals": principals,
        "big_session": "sess_big",
        "frames": frames,
    }


def random_rowids(top: int, count: int) -> list[int]:
    import random

    return random.Random(7).sample(range(1, top + 1), count)


def copy_side(side: Path, var: Path) -> None:
    """The built side database and the text file beside it (``side-text.sqlite3``,
    the pair's other half) into the copy's data folder, their WALs too, if any."""
    var.mkdir(mode=0o700, parents=True, exist_ok=True)  # as the settings make it
    pair = ((side, "side.sqlite3"), (side.with_name("side-text.sqlite3"), "side-text.sqlite3"))
    for source, name in pair:
        for suffix in ("", "-wal"):
            part = Path(f"{source}{suffix}")
            if part.exists():
                shutil.copyfile(part, var / f"{name}{suffix}")
                (var / f"{name}{suffix}").chmod(0o600)


def sync_pass(env: dict[str, str]) -> float:
    """One ``sync_index`` pass over the copy: what the runtime wrote since the side
    file was built. Its wall time in seconds."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "sync_index"],
        env=env,
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    return time.perf_counter() - started


def start_follow(env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "sync_index", "--follow"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )


def prepare_django(env: dict[str, str], users: int) -> list[tuple[str, str]]:
    """Migrate, collect static files and make the staff accounts, as an operator would."""
    manage = [sys.executable, str(ROOT / "manage.py")]
    for step in (["migrate", "--skip-checks"], ["collectstatic", "--noinput", "--skip-checks"]):
        subprocess.run([*manage, *step, "-v", "0"], env=env, check=True, cwd=ROOT)
    accounts = [(f"staff{n:02d}", secrets.token_urlsafe(12)) for n in range(users)]
    code = (
        "import json, sys\n"
        "from django.contrib.auth.models import Permission, User\n"
        "view = Permission.objects.get(\n"
        "    codename='view_session', content_type__app_label='sessions_admin'\n"
        ")\n"
        "for name, password in json.loads(sys.stdin.read()):\n"
        "    user = User.objects.create_user(name, password=password, is_staff=True)\n"
        "    user.user_permissions.add(view)\n"
    )
    subprocess.run(
        [*manage, "shell", "-v", "0", "-c", code],
        env=env,
        input=json.dumps(accounts),
        text=True,
        check=True,
        cwd=ROOT,
    )
    return accounts


def appender(path: str, stop: mp.Event, results: mp.Queue) -> None:
    """The runtime (:class:`bench.common.RuntimeAppender`) until ``stop``, user and
    assistant turns in turn: writes per session, lock waits, errors."""
    writer = RuntimeAppender(path, "load_appender")
    results.put(("ready", None))
    written = dict.fromkeys(writer.sessions, 0)
    waits: list[float] = []
    while not stop.is_set():
        role = "user" if writer.n % 2 == 0 else "assistant"
        if (done := writer.write(role)) is not None:
            written[done[0]] += 1
            waits.append(done[1])
    writer.close()
    results.put(("done", (written, waits, writer.errors)))


def start_gunicorn(env: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    process = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "-c", "gunicorn.conf.py", "--bind", f"127.0.0.1:{port}"],
        cwd=ROOT,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    import urllib.request

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5) as reply:
                if reply.status == 200:
                    return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise SystemExit("gunicorn did not answer /healthz:\n" + log.read_text()[-3000:])


def log_in(base: str, accounts: list[tuple[str, str]]) -> tuple[list[str], list[float]]:
    """Log each account in through the login form, one after the other: its
    session cookie, and how long each login took (form and post)."""
    import http.cookiejar
    import re
    import urllib.parse
    import urllib.request

    cookies, times = [], []
    for username, password in accounts:
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        started = time.perf_counter()
        form = opener.open(f"{base}/login/", timeout=60).read().decode()
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        fields = {"csrfmiddlewaretoken": token, "username": username, "password": password}
        opener.open(f"{base}/login/", urllib.parse.urlencode(fields).encode(), timeout=60)
        times.append((time.perf_counter() - started) * 1000)
        session = next((c.value for c in jar if c.name == "sessionid"), None)
        if session is None:
            raise SystemExit(f"logging in as {username} failed")
        cookies.append(session)
    return cookies, sorted(times)


def run_locust(
    host: str, samples_file: Path, out: Path, users: int, seconds: int, think: float
) -> None:
    env = {
        **os.environ,
        "BENCH_LOAD_SAMPLES": str(samples_file),
        "BENCH_LOAD_TIMINGS": str(out / "timings.json"),
        # Each user waits between half and one and a half times this between pages.
        "BENCH_LOAD_THINK_S": str(think),
    }
    command = [
        sys.executable,
        "-m",
        "locust",
        "-f",
        str(ROOT / "bench" / "locust_staff.py"),
        "--headless",
        "--users",
        str(users),
        "--spawn-rate",
        str(users),  # everyone within the first second
        "--run-time",
        f"{seconds}s",
        "--host",
        host,
        "--only-summary",
        "--loglevel",
        "WARNING",
    ]
    # locust exits 1 when any request failed: the report below says which.
    with (out / "locust.log").open("w") as log:
        subprocess.run(command, env=env, cwd=ROOT, timeout=seconds + 120, stdout=log, stderr=log)


def percentile(ordered: list[float], fraction: float) -> float:
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def summarize(name: str, timings: list[tuple[str, float, bool]], seconds: int) -> list:
    times = sorted(ms for _, ms, _ in timings)
    errors = sum(1 for _, _, failed in timings if failed)
    return [
        name,
        len(times),
        errors,
        len(times) / seconds,
        percentile(times, 0.50),
        percentile(times, 0.95),
        percentile(times, 0.99),
        times[-1],
    ]


def lost_writes(store: Path, written: dict[str, int]) -> int:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    lost = 0
    for sid, count in written.items():
        found = conn.execute(
            "SELECT COUNT(*) FROM session_messages WHERE session_id = ?", (sid,)
        ).fetchone()[0]
        lost += max(0, count - found)
    conn.close()
    return lost


def page_kind(path: str) -> str:
    """The locust page name of a request path (bench/locust_staff.py's tasks)."""
    route, _, query = path.partition("?")
    if route == "/targets/":
        return "targets"
    if route == "/sessions/":
        if "cursor=" in query:
            return "list: load more"
        if "principal=" in query:
            return "list: principal"
        if "profile=" in query:
            return "list: target+profile, 24h"
        return "list: target" if "target=" in query else "list"
    if "/frames/" in route:
        return "frames: requests" if route.endswith("/frames/") else "frames: one request"
    return "transcript: 50k messages" if "/sess_big/" in route else "transcript"


def server_times(log: Path, since: float) -> dict[str, list[float]]:
    """The server's own duration of each request locust made, from its JSON request
    lines, per page (and ``"all"``)."""
    from datetime import datetime

    times: dict[str, list[float]] = {"all": []}
    for line in log.read_text(errors="replace").splitlines():
        if '"sessions_admin.request"' not in line:
            continue
        entry = json.loads(line)
        if datetime.fromisoformat(entry["time"]).timestamp() >= since:
            times["all"].append(entry["duration_ms"])
            times.setdefault(page_kind(entry["path"]), []).append(entry["duration_ms"])
    return {name: sorted(values) for name, values in times.items()}


def report_server(inside: dict[str, list[float]]) -> None:
    every = inside.pop("all")
    print_table(
        f"Inside the server (its request log, {len(every)} requests); times in ms",
        ["page", "requests", "p50", "p95", "p99"],
        [
            [name, len(t), percentile(t, 0.5), percentile(t, 0.95), percentile(t, 0.99)]
            for name, t in [*sorted(inside.items()), ("all browsing", every)]
        ],
    )


def report(timings: list, seconds: int, appended: tuple, lost: int) -> bool:
    """Per page and for all browsing, then the appender; True if every goal is met."""
    written, waits, errors = appended
    names = sorted({name for name, _, _ in timings})
    rows = [summarize(name, [t for t in timings if t[0] == name], seconds) for name in names]
    rows.append(summarize("all browsing", timings, seconds))
    print_table(
        f"Load: {seconds} s through gunicorn (gunicorn.conf.py); times in ms",
        ["page", "requests", "errors", "req/s", "p50", "p95", "p99", "max"],
        rows,
    )
    total = summarize("", timings, seconds)
    waits.sort()
    worst = waits[-1] if waits else 0.0
    print(
        f"\nappender: {sum(written.values()):,} writes, worst wait for the write lock "
        f"{worst:.0f} ms (p99 {percentile(waits, 0.99):.1f} ms), {len(errors)} errors, "
        f"{lost} lost"
    )
    for error in sorted(set(errors))[:5]:
        print(f"  {error}")
    checks = {
        "0 errors": total[2] == 0 and not errors,
        f"p95 < {GOALS['p95']} ms": total[5] < GOALS["p95"],
        f"p99 < {GOALS['p99']} ms": total[6] < GOALS["p99"],
        f"appender waits < {GOALS['wait']} ms": worst < GOALS["wait"],
        "nothing lost": lost == 0,
    }
    verdicts = (f"{name} {'ok' if ok else 'MISSED'}" for name, ok in checks.items())
    print("goals: " + ", ".join(verdicts))
    return all(checks.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument(
        "--think",
        type=float,
        default=2.0,
        help="mean think time between a user's pages, seconds (0.25: 20 users ≈ 66 req/s)",
    )
    parser.add_argument(
        "--side",
        type=Path,
        help="a built side.sqlite3 to copy, with side-text.sqlite3 beside it, into the copy's "
        "data folder (then one sync pass)",
    )
    parser.add_argument(
        "--follow", action="store_true", help="run sync_index --follow beside the browsing"
    )
    parser.add_argument("--workers", type=int, help="GUNICORN_WORKERS (default: the config's)")
    parser.add_argument("--threads", type=int, help="GUNICORN_THREADS (default: the config's)")
    parser.add_argument("--keep-copy", action="store_true", help="leave the store copy in place")
    parser.add_argument(
        "--sessions", type=int, default=500_000, help="a smaller generated store, to try the bench"
    )
    args = parser.parse_args()

    source = bench_home(args.sessions)
    home = BENCH_DIR / f"{branch()}-load-home"
    print(f"copying {source} to {home} …", flush=True)
    copy_home(source, home)
    store = home / "data" / "agents" / "store.db"
    out = home / "out"
    out.mkdir()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "SESSIONS_ADMIN_", "AGENTS_", "GUNICORN_"))
    }
    env.update(
        DJANGO_SECRET_KEY="bench-only-" + secrets.token_urlsafe(40),
        DJANGO_ALLOWED_HOSTS="127.0.0.1",
        AGENTS_HOST_HOME=str(home),
        SESSIONS_ADMIN_FRAMES_DIR=str(source / "sessions"),  # read only
        SESSIONS_ADMIN_VAR_DIR=str(home / "var"),
        DJANGO_LOG_FORMAT="json",
    )
    for name, value in (("GUNICORN_WORKERS", args.workers), ("GUNICORN_THREADS", args.threads)):
        if value:
            env[name] = str(value)
    if args.side:
        print(f"copying {args.side} into the copy's data folder …", flush=True)
        copy_side(args.side, home / "var")
    gunicorn = follow = None
    stop = mp.Event()
    results: mp.Queue = mp.Queue()
    writer = mp.Process(target=appender, args=(str(store), stop, results))
    try:
        accounts = prepare_django(env, args.users)
        if args.side:
            print(f"one sync_index pass: {sync_pass(env):.1f} s", flush=True)
        if args.follow:
            follow = start_follow(env, out / "follow.log")
        port = free_port()
        gunicorn = start_gunicorn(env, port, out / "gunicorn.log")
        logins, login_times = log_in(f"http://127.0.0.1:{port}", accounts)
        samples_file = out / "samples.json"
        samples_file.write_text(json.dumps(samples(store, source / "sessions", logins)))
        load_before = os.getloadavg()[0]
        writer.start()
        assert results.get(timeout=60)[0] == "ready"
        print(f"{args.users} staff for {args.seconds} s on http://127.0.0.1:{port}/ …", flush=True)
        browsing_from = time.time()
        run_locust(
            f"http://127.0.0.1:{port}", samples_file, out, args.users, args.seconds, args.think
        )
        stop.set()
        kind, appended = results.get(timeout=60)
        writer.join(timeout=30)
        gunicorn.send_signal(signal.SIGTERM)
        gunicorn.wait(timeout=60)
        if follow is not None:
            follow.send_signal(signal.SIGTERM)
            follow.wait(timeout=120)
        load_after = os.getloadavg()[0]
        timings = json.loads((out / "timings.json").read_text())
        met = report(timings, args.seconds, appended, lost_writes(store, appended[0]))
        print(
            f"logins beforehand, one at a time (form + post, PBKDF2): "
            f"p50 {percentile(login_times, 0.5):.0f} ms, max {login_times[-1]:.0f} ms"
        )
        report_server(server_times(out / "gunicorn.log", since=browsing_from))
        print(
            f"host load average (1 min): {load_before:.1f} before, {load_after:.1f} after "
            f"({os.cpu_count()} cores, shared)"
        )
        server_errors = [
            line for line in (out / "gunicorn.log").read_text().splitlines() if '"ERROR"' in line
        ]
        print(f"server log: {len(server_errors)} error lines")
        for line in server_errors[:3]:
            print(f"  {line[:300]}")
    finally:
        stop.set()
        if writer.is_alive():
            writer.join(timeout=10)
        for process in (gunicorn, follow):
            if process is not None and process.poll() is None:
                process.kill()
        if args.keep_copy:
            print(f"kept {home}")
        else:
            shutil.rmtree(home, ignore_errors=True)
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
