"""Overview, tools and a tool's page: server time next to the naive aggregate SQL they replace.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_overview.py
    … bench_overview.py --build-only      # bring the rollups up to date, then stop
    … bench_overview.py --skip-sync       # pages only
    … bench_overview.py --skip-sync --no-build   # pages on the rollups as they are

The rollups live in their own data folder (``<bench dir>/var-overview``) and
are built once by the sync runner with the rollups as its only listener (the
search index is another bench's business). Pages go through Django's test
client (whole middleware stack, a logged-in superuser). The naive SQL runs
once each on a plain read-only sqlite3 connection to the same store (each is
a full scan of 10 million messages). The sync measure copies the store and
the side database, appends 10,000 messages to the copy and times one pass.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from random import Random

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_DIR, SESSIONS, bench_home, print_table, setup_django, timed

VAR = BENCH_DIR / "var-overview"


def _rollups_only() -> None:
    from sessions_admin.ourdata import sync
    from sessions_admin.ourdata.rollups import ROLLUPS

    sync.LISTENERS[:] = [ROLLUPS]


def build(report_every: int = 500_000) -> None:
    from sessions_admin.ourdata import sync

    _rollups_only()
    marks = {"next": report_every}

    def progress(p) -> None:
        if p.done >= marks["next"]:
            marks["next"] += report_every
            print(f"  {p.done:,} / {p.total:,} messages, {p.rate:,.0f}/s", flush=True)

    report = sync.sync_once(batch_size=20_000, on_progress=progress)
    print(
        f"rollups: {report.messages:,} new messages in {report.seconds:.1f} s "
        f"({report.messages / max(report.seconds, 1e-9):,.0f}/s)",
        flush=True,
    )


def naive_queries(now_ms: int) -> dict[str, list[tuple[str, str, list]]]:
    """The aggregate SQL over the store that each page replaces."""
    from sessions_admin.store.toolcalls import IS_TOOL_CALL_SQL, reports_error_sql

    hour0 = now_ms // 3_600_000 * 3_600_000 - 23 * 3_600_000
    day90 = now_ms // 86_400_000 * 86_400_000 - 89 * 86_400_000
    failed = reports_error_sql("tool_result")
    tools = (
        "tools, last 24 h",
        f"SELECT tool_name, count(*), sum({failed}), max(tool_duration_ms) FROM session_messages "
        f"WHERE ts >= ? AND {IS_TOOL_CALL_SQL} GROUP BY tool_name",
        [hour0],
    )
    durations = (
        "durations for p50/p95, last 24 h",
        "SELECT tool_name, tool_duration_ms FROM session_messages WHERE ts >= ? "
        f"AND {IS_TOOL_CALL_SQL} AND tool_duration_ms IS NOT NULL ORDER BY tool_name, 2",
        [hour0],
    )
    return {
        "/": [
            tools,
            durations,
            (
                "messages per day, 90 days",
                "SELECT ts / 86400000, count(*) FROM session_messages WHERE ts >= ? GROUP BY 1",
                [day90],
            ),
            (
                "sessions and messages by target/profile + principals, 24 h",
                "SELECT s.target_key, s.profile_key, s.principal_id, count(DISTINCT s.id), "
                "count(*) FROM session_messages m JOIN sessions s ON s.id = m.session_id "
                "WHERE m.ts >= ? GROUP BY 1, 2, 3",
                [hour0],
            ),
        ],
        "/tools/": [tools, durations],
        "tool page": [
            (
                "its newest failing calls",
                "SELECT id, session_id, ts, tool_duration_ms, substr(tool_args, 1, 160), "
                f"substr(tool_result, 1, 160) FROM session_messages WHERE tool_name = :tool "
                f"AND {failed} ORDER BY ts DESC, id DESC LIMIT 51",
                None,
            )
        ],
        "tool page, counted": [
            (
                "how many of its calls failed since the window's start",
                f"SELECT count(*) FROM session_messages WHERE tool_name = :tool AND ts >= {hour0} "
                f"AND {failed}",
                None,
            )
        ],
    }


def run_naive(store: Path, queries: list[tuple[str, str, list | None]], tool: str) -> float:
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    total = 0.0
    for label, sql, params in queries:
        started = time.perf_counter()
        raw.execute(sql, params if params is not None else {"tool": tool}).fetchall()
        seconds = time.perf_counter() - started
        total += seconds
        print(f"    naive: {label}: {seconds * 1000:,.0f} ms", flush=True)
    raw.close()
    return total * 1000


def bench_pages(store: Path, repeat: int, naive: bool) -> None:
    from bench.common import staff_client
    from sessions_admin.ourdata import sidedb

    client = staff_client()
    side = sidedb.connect_readonly()
    tool = side.execute(
        "SELECT tool FROM rollup_tool_day GROUP BY tool ORDER BY sum(calls) DESC LIMIT 1"
    ).fetchone()[0]
    side.close()
    now_ms = int(time.time() * 1000)
    # What the overview's and /tools/'s links open: the window's start as since= (24 h here).
    since = time.strftime("%Y-%m-%dT%H:00Z", time.gmtime(now_ms // 1000 - 23 * 3600))
    cases = [
        ("/", "/", "/"),
        ("/ (window 30d)", "/?window=30d", None),
        ("/tools/", "/tools/", "/tools/"),
        ("/tools/?window=7d", "/tools/?window=7d", None),
        ("/tools/?window=30d", "/tools/?window=30d", None),
        ("/tools/?window=all", "/tools/?window=all", None),
        (f"/tools/{tool}/", f"/tools/{tool}/", None),
        (f"/tools/{tool}/?errors=1", f"/tools/{tool}/?errors=1", "tool page"),
        (f"/tools/{tool}/?slow=1", f"/tools/{tool}/?slow=1", None),
        (
            f"/tools/{tool}/?errors=1&since=(24 h)",
            f"/tools/{tool}/?errors=1&since={since}",
            "tool page, counted",
        ),
        (f"/tools/{tool}/?since=(24 h)", f"/tools/{tool}/?since={since}", None),
        (f"/tools/{tool}/?target=… (not counted)", f"/tools/{tool}/?target=auth.gateway", None),
    ]
    naive_sql = naive_queries(now_ms)
    rows = []
    for label, url, naive_key in cases:
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        # Timing an empty state would flatter the page: the rollups must be there.
        assert b"has not been built yet" not in response.content, (url, "rollups not built")
        t = timed(lambda url=url: client.get(url), repeat=repeat)
        naive_ms = None
        if naive and naive_key:
            naive_ms = run_naive(store, naive_sql[naive_key], tool)
        share = f"{100 * t['median'] / naive_ms:.2f} %" if naive_ms else ""
        rows.append([label, t["median"], t["p95"], naive_ms or "", share])
        print(f"  {label}: median {t['median']:.1f} ms", flush=True)
    print_table(
        "Overview and tool pages (server time, ms; shared 2-core machine)",
        ["page", "median", "p95", "naive SQL ms", "page / naive"],
        rows,
    )


def _append_messages(store: Path, count: int) -> None:
    """Tool-call turns appended to existing sessions of the copy, as the runtime would."""
    rng = Random(7)
    conn = sqlite3.connect(store)
    ids = [row[0] for row in conn.execute("SELECT id FROM sessions LIMIT 2000")]
    now = int(time.time() * 1000)
    rows = []
    for n in range(count // 2):
        sid = rng.choice(ids)
        call = f"call_bench_{n}"
        result = '{"ok": false, "error": "timeout"}' if rng.random() < 0.05 else '{"ok": true}'
        rows.append((sid, "assistant", "asking", None, call, None, None, now + n))
        rows.append((sid, "tool", "", "sql.query", call, result, rng.randrange(5, 4000), now + n))
    conn.executemany(
        "INSERT INTO session_messages (session_id, role, content, tool_name, tool_call_id, "
        "tool_result, tool_duration_ms, ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        rows,
    )
    conn.commit()
    conn.close()


def bench_sync(home: Path, count: int = 10_000) -> None:
    """Copy store and side DB, append ``count`` messages to the copy, time one sync pass."""
    from django.db import connections

    from sessions_admin.ourdata import sidedb, sync

    copy_home = BENCH_DIR / "overview-sync-copy"
    copy_store = copy_home / "data" / "agents" / "store.db"
    copy_var = BENCH_DIR / "overview-sync-var"
    shutil.rmtree(copy_home, ignore_errors=True)
    shutil.rmtree(copy_var, ignore_errors=True)
    try:
        copy_store.parent.mkdir(parents=True)
        print("  copying the store for the sync measure …", flush=True)
        shutil.copy(home / "data" / "agents" / "store.db", copy_store)
        shutil.copytree(VAR, copy_var, ignore=shutil.ignore_patterns("django*", "staticfiles"))
        _append_messages(copy_store, count)
        connections["agents"].close()
        connections["agents"].settings_dict["NAME"] = str(copy_store)
        from django.conf import settings

        settings.VAR_DIR = copy_var
        _rollups_only()
        side = sidedb.connect()
        listener = sync.listeners()[0]
        timings: list[float] = []
        original = listener.add_messages

        def timed_add(conn, batch):
            started = time.perf_counter()
            original(conn, batch)
            timings.append(time.perf_counter() - started)

        listener.add_messages = timed_add
        report = sync.sync_once(side=side, batch_size=sync.BATCH_SIZE)
        side.close()
        print_table(
            "Sync of new messages into the rollups (shared 2-core machine)",
            ["what", "messages", "seconds"],
            [
                [
                    "whole sync pass (deleted-session walk, feed, rollups)",
                    report.messages,
                    report.seconds,
                ],
                ["of which the rollups' add_messages", report.messages, sum(timings)],
            ],
        )
    finally:
        shutil.rmtree(copy_home, ignore_errors=True)
        shutil.rmtree(copy_var, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--build-only", action="store_true")
    parser.add_argument("--skip-sync", action="store_true")
    parser.add_argument("--skip-naive", action="store_true")
    # A side database of an older layout can still be read (a rebuild takes an hour).
    parser.add_argument("--no-build", action="store_true")
    args = parser.parse_args()
    home = bench_home(args.sessions)
    VAR.mkdir(parents=True, exist_ok=True)
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(VAR))
    os.environ.setdefault("SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS", "600000")
    if not args.no_build:
        build()
    if args.build_only:
        return
    bench_pages(home / "data" / "agents" / "store.db", args.repeat, naive=not args.skip_naive)
    if not args.skip_sync:
        bench_sync(home)


if __name__ == "__main__":
    main()
