"""Shared by the benchmarks: the big generated store, Django set up over it, timing.

The store is built once under ``var/bench/home`` (500,000 sessions, about ten
million messages, one session of 50,000 messages) and reused by later runs;
``--fresh`` rebuilds it. Benchmarks that delete work on a copy.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# SESSIONS_ADMIN_BENCH_DIR lets several checkouts share one generated store.
BENCH_DIR = Path(os.environ.get("SESSIONS_ADMIN_BENCH_DIR") or ROOT / "var" / "bench")
SESSIONS = 500_000
MESSAGES_PER_SESSION = 20
BIG_SESSION_MESSAGES = 50_000
SEED = 42


def bench_home(sessions: int = SESSIONS, fresh: bool = False) -> Path:
    """The benchmark host home, generated on first use (a few minutes)."""
    from sessions_admin.demo import build_demo_home

    home = BENCH_DIR / f"home-{sessions}"
    store = home / "data" / "agents" / "store.db"
    if fresh and home.exists():
        import shutil

        shutil.rmtree(home)
    if not store.exists():
        print(
            f"generating {sessions:,} sessions × ~{MESSAGES_PER_SESSION} messages in {home} …",
            flush=True,
        )
        started = time.perf_counter()
        summary = build_demo_home(
            home,
            sessions=sessions,
            messages_per_session=MESSAGES_PER_SESSION,
            seed=SEED,
            big_session_messages=BIG_SESSION_MESSAGES,
        )
        seconds = time.perf_counter() - started
        print(
            f"  {summary.messages:,} messages in {seconds:.0f} s "
            f"({summary.messages / seconds:,.0f} messages/s)",
            flush=True,
        )
    return home


def setup_django(home: Path, **env: str) -> None:
    os.environ["AGENTS_HOST_HOME"] = str(home)
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-" + "x" * 40)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sessions_admin.settings")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,localhost")
    os.environ.setdefault("SESSIONS_ADMIN_VAR_DIR", str(BENCH_DIR / "django"))
    os.environ.update(env)
    (BENCH_DIR / "django").mkdir(parents=True, exist_ok=True)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0, skip_checks=True)


def staff_client():
    """A Django test client logged in as a superuser (in the bench's own Django DB)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    users = get_user_model()
    user = users.objects.filter(username="bench").first() or users.objects.create_superuser(
        "bench", "", "bench-password"
    )
    client = Client()
    client.force_login(user)
    return client


def timed(fn: Callable[[], object], repeat: int = 30, warmup: int = 3) -> dict[str, float]:
    """Median and p95 wall time of ``fn`` in milliseconds."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return {
        "median": statistics.median(samples),
        "p95": samples[min(len(samples) - 1, int(round(0.95 * (len(samples) - 1))))],
    }


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def print_table(title: str, header: list[str], rows: list[list[object]]) -> None:
    cells = [header] + [[_fmt(c) for c in row] for row in rows]
    widths = [max(len(str(row[i])) for row in cells) for i in range(len(header))]
    print(f"\n{title}")
    for index, row in enumerate(cells):
        print(
            "  "
            + "  ".join(
                str(c).ljust(w) if i == 0 else str(c).rjust(w)
                for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
        if index == 0:
            print("  " + "  ".join("-" * w for w in widths))


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


#: The runtime's writer in the benches: ~150 writes/s (a busy runtime) over a few sessions.
APPENDER_SESSIONS = 4
APPEND_PAUSE_S = 0.005


class RuntimeAppender:
    """Writes as the runtime does, in a process of its own: sessions of its own, then one
    message per ``BEGIN IMMEDIATE; INSERT; COMMIT`` (5 s busy timeout), each write timed."""

    def __init__(self, path: str, prefix: str) -> None:
        import sqlite3

        self.sqlite3 = sqlite3
        self.conn = sqlite3.connect(path, timeout=5.0, isolation_level=None)
        self.conn.execute("PRAGMA foreign_keys = ON")
        self.sessions = self.create(prefix)
        self.errors: list[str] = []
        self.n = 0

    def create(self, prefix: str) -> list[str]:
        """``APPENDER_SESSIONS`` new sessions named ``<prefix>_<n>``, written now."""
        now = int(time.time() * 1000)
        ids = [f"{prefix}_{i}" for i in range(APPENDER_SESSIONS)]
        self.conn.execute("BEGIN IMMEDIATE")
        self.conn.executemany(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count, "
            "created_at, last_active) VALUES (?, 'bench.appender', 'default', 'bench:runtime', "
            "'appender', 0, ?, ?)",
            [(sid, now, now) for sid in ids],
        )
        self.conn.execute("COMMIT")
        self.sessions = ids
        return ids

    def write(self, role: str = "user") -> tuple[str, float, float] | None:
        """One message to the next session: (its id, ms waited for the lock, ms in all), or
        None when the write failed (its error kept in ``errors``). Then the pause."""
        sid = self.sessions[self.n % len(self.sessions)]
        self.n += 1
        started = time.perf_counter()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            acquired = time.perf_counter()
            self.conn.execute(
                "INSERT INTO session_messages (session_id, role, content, ts) "
                "VALUES (?, ?, 'still here', ?)",
                (sid, role, int(time.time() * 1000)),
            )
            self.conn.execute("COMMIT")
            done = time.perf_counter()
        except self.sqlite3.Error as exc:
            self.errors.append(f"{type(exc).__name__}: {exc}")
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
            return None
        finally:
            time.sleep(APPEND_PAUSE_S)
        return sid, (acquired - started) * 1000, (done - started) * 1000

    def close(self) -> None:
        self.conn.close()
