"""Live session pages on the 500,000-session store: what a page's poll costs when
nothing is new (most polls) and when the runtime wrote, and 20 pages open at once.

    .venv/bin/python bench/bench_live.py [--pages 20] [--seconds 30]

On the erasure bench's base store and side data (``bench_erase_job``). A poll is
``GET /sessions/<id>/?after=<last>&live=1`` as htmx sends it every 2 s: a 204
while nothing is new. The naive poll beside it re-renders the page's last slice
(``?end=1``), what a page without the 204 would do. Then ``--pages`` threads
each poll every 2 s for ``--seconds`` through the test client (every
middleware) and the process's CPU time over that span is reported.

Targets (issue 32): no more than 1 request per 2 s per open page, each under
10 ms when nothing is new.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_erase_job import principal_base, synced_base  # noqa: E402
from bench.common import print_table, setup_django, timed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=30)
    args = parser.parse_args()
    home = principal_base(500_000, 79_000)
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(synced_base(home)))
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.common import staff_client
    from sessions_admin.ids import session_url
    from sessions_admin.store.connection import run_sql

    sid, last = run_sql(
        "SELECT session_id, max(id) FROM session_messages WHERE session_id = "
        "(SELECT id FROM sessions ORDER BY last_active DESC LIMIT 1)"
    )[0]
    big = run_sql("SELECT id FROM sessions WHERE id = 'sess_big'")
    client = staff_client()
    htmx = {"HTTP_HX_REQUEST": "true"}
    rows = []
    for label, session, after in (
        ("poll, nothing new (an ordinary session)", sid, last),
        *([("poll, nothing new (sess_big, 50,000 messages)", "sess_big", 10**12)] if big else []),
    ):
        poll = session_url(session, after=after, live=1)
        assert client.get(poll, **htmx).status_code == 204
        t = timed(lambda poll=poll: client.get(poll, **htmx), repeat=200)
        naive = session_url(session, end=1)
        n = timed(lambda naive=naive: client.get(naive, **htmx), repeat=30)
        rows.append([label, t["median"], t["p95"], n["median"]])
    previous = run_sql(
        "SELECT max(id) FROM session_messages WHERE session_id = ? AND id < ?", [sid, last]
    )[0][0]
    new = session_url(sid, after=previous, live=1)
    t = timed(lambda: client.get(new, **htmx), repeat=50)
    rows.append(["poll, one new message", t["median"], t["p95"], ""])
    print_table(
        "A live page's poll (server time, ms)",
        ["what", "median", "p95", "naive: the page's last slice again"],
        rows,
    )

    latencies: list[float] = []
    requests = [0]
    lock = threading.Lock()
    poll = session_url(sid, after=last, live=1)
    stop_at = time.monotonic() + args.seconds

    def page(offset: float) -> None:
        own = staff_client()
        time.sleep(offset)
        while time.monotonic() < stop_at:
            started = time.perf_counter()
            own.get(poll, **htmx)
            took = (time.perf_counter() - started) * 1000
            with lock:
                latencies.append(took)
                requests[0] += 1
            time.sleep(max(0.0, 2.0 - took / 1000))

    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    wall0 = time.monotonic()
    threads = [
        threading.Thread(target=page, args=(2.0 * n / args.pages,)) for n in range(args.pages)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall = time.monotonic() - wall0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    latencies.sort()
    print_table(
        f"{args.pages} live pages open for {args.seconds:.0f} s (one process, test client)",
        ["what", "value"],
        [
            ["requests", requests[0]],
            ["requests per page per 2 s", requests[0] / args.pages / (wall / 2)],
            ["median / p95 latency (ms)", f"{statistics.median(latencies):.1f} / "
             f"{latencies[int(0.95 * (len(latencies) - 1))]:.1f}"],
            ["CPU used (share of one core)", f"{100 * cpu / wall:.1f} %"],
        ],
    )  # fmt: skip


if __name__ == "__main__":
    main()
