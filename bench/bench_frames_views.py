#!/usr/bin/env python
"""Server time of the activity-frames screens, through Django's test client.

Builds (once, reused; ``--fresh`` rebuilds) a small demo home under
``var/bench/frames-views-home`` with a ~1 GB frame file for one session and 10,000
orphaned session directories, then times whole requests through the full
middleware stack and template rendering (what the server spends, without the network):

* the first page of the 1 GB file (cold cache when the kernel allows, then warm),
* pages at random byte offsets, consecutive "Next page" links, the htmx panel,
* the end of the file, a live-tail poll, a kind filter, a text search that spends
  its whole scan budget, the requests list and a trace search across requests,
* the orphans page over 10,000 directories,

and the process's peak RSS. Usage::

    .venv/bin/python bench/bench_frames_views.py              # 1 GB, 10,000 dirs
    .venv/bin/python bench/bench_frames_views.py --size-mb 64 --dirs 1000
"""

from __future__ import annotations

import argparse
import random
import re
import shutil
import statistics
import sys
import time
from html import unescape
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_frames import MB, drop_cache, generate_dirs, generate_file  # noqa: E402
from bench.common import BENCH_DIR, peak_rss_mb, print_table, setup_django  # noqa: E402

HX = {"HTTP_HX_REQUEST": "true"}


def p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--dirs", type=int, default=10_000)
    ap.add_argument("--pages", type=int, default=40, help="requests per random-offset series")
    ap.add_argument("--fresh", action="store_true", help="rebuild the generated data")
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()

    home = BENCH_DIR / f"frames-views-home-{args.size_mb}-{args.dirs}"
    if args.fresh and home.exists():
        shutil.rmtree(home)
    store_db = home / "data" / "agents" / "store.db"
    root = home / "sessions"
    if not store_db.exists():
        from sessions_admin.demo import build_demo_home

        print(f"building {home} …", flush=True)
        build_demo_home(
            home, sessions=200, messages_per_session=4, seed=args.seed, frames_fraction=0.0
        )
    setup_django(home)
    from sessions_admin.ids import session_url
    from sessions_admin.store import queries

    session = queries.list_sessions(queries.SessionFilter(), limit=1).rows[0]
    big = root / session.id / "activity-req_big.jsonl"
    if not big.exists():
        print(f"writing {args.size_mb:,} MB of frames …", flush=True)
        generate_file(big, args.size_mb * MB, args.seed)
        generate_dirs(root, args.dirs, args.seed)
    size = big.stat().st_size

    from bench.common import staff_client

    client = staff_client()
    url = session_url(session.id, "frames/req_big")
    rng = random.Random(args.seed)
    rows: list[list[object]] = []

    def get(path: str, **headers: str):
        started = time.perf_counter()
        response = client.get(path, **headers)
        elapsed = (time.perf_counter() - started) * 1000
        assert response.status_code == 200, (path, response.status_code)
        return elapsed, response

    def series(label: str, paths: list[str], **headers: str) -> None:
        times = [get(p, **headers)[0] for p in paths]
        rows.append([label, len(times), statistics.median(times), p95(times), max(times)])

    rss_start = peak_rss_mb()
    # A running server has its templates compiled: warm them on the end of the file
    # (which leaves the start of the file out of the page cache).
    get(f"{url}?end=1")
    cold = drop_cache(big)
    ms, first = get(url)
    rows.append([f"first page, {'cold' if cold else 'warm'} cache", 1, ms, ms, ms])
    series("first page, warm", [url] * 20)

    offsets = [rng.randrange(size) for _ in range(args.pages)]
    if cold:
        drop_cache(big)
        series("random offset, cold cache", [f"{url}?offset={o}" for o in offsets])
    series("random offset, warm", [f"{url}?offset={o}" for o in offsets])

    chain: list[str] = []
    _, page = get(f"{url}?offset={size // 2}")
    for _ in range(args.pages):
        match = re.search(r'rel="next" href="([^"]+)"', page.content.decode())
        assert match
        chain.append(unescape(match.group(1)))
        _, page = get(chain[-1])
    series("consecutive Next page links", chain)
    series(
        "htmx panel at random offset",
        [f"{url}?offset={o}" for o in offsets[:20]],
        HTTP_HX_TARGET="frames-panel",
        **HX,
    )
    series("end of file (?end=1)", [f"{url}?end=1"] * 10)
    end = re.search(r'hx-get="([^"]*tail=1[^"]*)"', get(f"{url}?end=1")[1].content.decode())
    if end:
        series("live-tail poll, nothing new (htmx)", [unescape(end.group(1))] * 20, **HX)
    series("kind=tool.call filter", [f"{url}?kind=tool.call&offset={o}" for o in offsets[:20]])
    series(
        "q miss (spends the 8 MB scan budget)",
        [f"{url}?q=no+such+needle&offset={o}" for o in offsets[:10]],
    )
    series("requests list (first/last ts)", [session_url(session.id, "frames")] * 20)
    series(
        "trace search on requests page",
        [session_url(session.id, "frames", trace="no-such-trace")] * 5,
    )
    series(f"orphans page ({args.dirs:,} dirs)", ["/frames/orphans/"] * 5)
    rss_end = peak_rss_mb()

    print_table(
        f"Frames screens, server time through the test client ({size / MB:,.0f} MB file, "
        f"{args.dirs:,} dirs)",
        ["what", "n", "median ms", "p95 ms", "max ms"],
        rows,
    )
    print(f"\n  peak RSS: {rss_start:.0f} MB after setup, {rss_end:.0f} MB after all requests")
    print(f"  first page: {len(first.content) / 1024:,.0f} KB of HTML")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
