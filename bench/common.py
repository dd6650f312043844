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
