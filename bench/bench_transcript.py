#!/usr/bin/env python
"""Benchmark the session page and export on the 500,000-session store.

Measures, through the Django test client (server time: URL routing, access
checks, queries, template rendering), on ``sess_big`` (50,000 messages):

* the session page's first render, the outline of its tool calls included
  (target: median under 25 ms), and the outline's own share (the store's
  read and the geometry, without the page);
* further pages by keyset cursor at random depths, as the "Load more" htmx
  fragment and as a full page (target: under 30 ms);
* the last page ("Jump to end"), a permalink deep in the session, the lazy
  statistics fragment, a text search inside the session;
* the export in each format, streamed (target: over 20,000 messages/s), with
  the process's peak RSS before and after, to show memory stays flat.

Also the first render of an ordinary session from the same store.

Usage::

    .venv/bin/python bench/bench_transcript.py            # builds var/bench/home-500000 once
    .venv/bin/python bench/bench_transcript.py --repeat 50
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402  (path set above)
    bench_home,
    peak_rss_mb,
    print_table,
    setup_django,
    staff_client,
    timed,
)

BIG = "sess_big"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()

    home = bench_home()
    setup_django(home)
    from django.conf import settings

    from sessions_admin.ids import session_url
    from sessions_admin.store import transcript
    from sessions_admin.store.connection import run_sql
    from sessions_admin.views.transcript_items import tool_outline

    def outline(session_id: str) -> None:
        rows = transcript.tool_outline(session_id)
        tool_outline(session_id, rows, set(), settings.SLOW_TOOL_CALL_MS)

    client = staff_client()
    rng = random.Random(args.seed)
    ids = [
        row[0]
        for row in run_sql(
            "SELECT id FROM session_messages WHERE session_id = ? ORDER BY ts, id", [BIG]
        )
    ]
    total = len(ids)
    ordinary = run_sql(
        "SELECT id FROM sessions WHERE id != ? ORDER BY last_active DESC LIMIT 1", [BIG]
    )[0][0]

    def get(url: str, htmx: bool = False, target: str | None = None) -> None:
        headers = {"HTTP_HX_REQUEST": "true"} if htmx else {}
        if target:
            headers["HTTP_HX_TARGET"] = target
        response = client.get(url, **headers)
        if response.status_code != 200:
            raise SystemExit(f"{url} answered {response.status_code}")

    cursors = [ids[rng.randrange(0, total - 1)] for _ in range(args.repeat + 3)]
    cursor_iter = iter(cursors * 3)

    rows: list[list[object]] = []

    def measure(label: str, fn, target_ms: float | None = None) -> None:
        result = timed(fn, repeat=args.repeat)
        verdict = "" if target_ms is None else ("ok" if result["median"] < target_ms else "SLOW")
        rows.append(
            [
                label,
                result["median"],
                result["p95"],
                "" if target_ms is None else f"< {target_ms:g}",
                verdict,
            ]
        )

    measure(
        "first render, sess_big (50,000 messages, outline included)",
        lambda: get(session_url(BIG)),
        25,
    )
    measure("  of which the outline (read + geometry, no request)", lambda: outline(BIG))
    measure(
        "next page, htmx Load more (random depth)",
        lambda: get(session_url(BIG, after=next(cursor_iter)), htmx=True),
        30,
    )
    measure(
        "next page, full page ?after= (random depth)",
        lambda: get(session_url(BIG, after=next(cursor_iter))),
        30,
    )
    measure(
        "earlier page, htmx ?before= (random depth)",
        lambda: get(session_url(BIG, before=next(cursor_iter)), htmx=True),
        30,
    )
    measure("jump to end (?end=1)", lambda: get(session_url(BIG, end=1)), 50)
    measure("permalink deep (?at=<id 40,000>)", lambda: get(session_url(BIG, at=ids[40_000])), 50)
    measure("statistics fragment (htmx, lazy)", lambda: get(session_url(BIG, "stats"), htmx=True))
    measure(
        "filter role=tool, first page (htmx)",
        lambda: get(session_url(BIG, role="tool"), htmx=True, target="transcript"),
    )
    measure(
        "search q= (no match: scans the session)",
        lambda: get(session_url(BIG, q="no-such-text-anywhere"), htmx=True, target="transcript"),
    )
    measure("state tab", lambda: get(session_url(BIG, "state")))
    measure("first render, ordinary session", lambda: get(session_url(ordinary)), 50)
    print_table(
        f"session page on {home} (server time, ms; {args.repeat} runs)",
        ["request", "median", "p95", "target", ""],
        rows,
    )

    export_rows: list[list[object]] = []
    rss_before = peak_rss_mb()
    for fmt in ("json", "jsonl", "md"):
        started = time.perf_counter()
        response = client.get(session_url(BIG, "export", format=fmt))
        size = 0
        for piece in response.streaming_content:
            size += len(piece)
        seconds = time.perf_counter() - started
        rate = total / seconds
        export_rows.append(
            [
                fmt,
                total,
                seconds * 1000,
                f"{rate:,.0f}",
                f"{size / 2**20:.1f}",
                f"{peak_rss_mb():.0f}",
                "ok" if rate > 20_000 else "SLOW",
            ]
        )
    print_table(
        f"export of {BIG} (streamed; peak RSS before exports {rss_before:.0f} MB)",
        ["format", "messages", "ms", "msg/s", "MB", "peak RSS MB", "> 20,000/s"],
        export_rows,
    )


if __name__ == "__main__":
    main()
