#!/usr/bin/env python
"""The fleet's cost: publishing a host, and the fleet's pages over many hosts.

    scripts/with-postgres .venv/bin/python bench/bench_fleet.py [--hosts 10] [--repeat 20]

Django's database is the throwaway PostgreSQL of ``scripts/with-postgres`` (fsync off).

1. On a copy of the 500,000-session bench store and its synced side files
   (``bench_erase_job``'s), the host's first publish: every session written to the
   directory (goal: under 60 s). Then incremental passes, each after the runtime's
   appender wrote 2,000 messages: the pass's time (its listener noting what changed
   included) and its publish's time (goal: the publish adds under 10 %).
2. The directory grown to ``--hosts`` hosts of 500,000 sessions each (the first
   host's rows copied under other names, in SQL), then the pages through the test
   client, server time: ``/fleet/`` (goal 100 ms), ``/fleet/sessions/`` first page,
   a principal's and a title's filter (goal 50 ms each). Beside each, the naive
   SQL: the same rows asked of PostgreSQL with its indexes off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_erase_job import fresh_copy, principal_base, synced_base  # noqa: E402
from bench.common import RuntimeAppender, print_table, setup_django  # noqa: E402

APPENDS_PER_PASS = 2_000


def _database() -> None:
    url = os.environ.get("SESSIONS_ADMIN_TEST_DATABASE_URL")
    if not url:
        sys.exit("run under scripts/with-postgres (it provides the PostgreSQL to publish to)")
    os.environ["DJANGO_DATABASE_URL"] = url


def first_publish() -> float:
    from sessions_admin.ourdata import sidedb
    from sessions_admin.ourdata.fleet.publish import publish

    side = sidedb.connect()
    try:
        started = time.perf_counter()
        done = publish(side)
        assert done is not None and not done.error, done
        print(f"  first publish: {done.written:,} sessions in {done.seconds:.1f} s", flush=True)
        return time.perf_counter() - started
    finally:
        side.close()


def incremental(store: Path, rounds: int) -> tuple[list[float], list[float]]:
    """Per round, after the appender's writes: the pass's time (its listener noting the
    sessions it changed included) and its publish's time (s)."""
    from sessions_admin.ourdata import sync
    from sessions_admin.ourdata.fleet.publish import publish_after_pass

    appender = RuntimeAppender(str(store), "fleetbench")
    passes, publishes = [], []
    try:
        sync.sync_once()
        publish_after_pass()
        for _ in range(rounds):
            for _ in range(APPENDS_PER_PASS):
                appender.write()
            started = time.perf_counter()
            sync.sync_once()
            passes.append(time.perf_counter() - started)
            started = time.perf_counter()
            done = publish_after_pass()
            publishes.append(time.perf_counter() - started)
            assert done is not None and not done.error, done
    finally:
        appender.close()
    return passes, publishes


def grow(hosts: int) -> None:
    """Copy the first host's directory rows under ``hosts - 1`` more names, in SQL."""
    from django.db import connection

    from sessions_admin.ourdata.fleet.models import FleetHost
    from sessions_admin.ourdata.fleet.publish import partition_for

    first = FleetHost.objects.order_by("pk").first()
    with connection.cursor() as cursor:
        for n in range(1, hosts):
            name = f"bench-host-{n:02d}"
            copy, _ = FleetHost.objects.update_or_create(
                store_name=name,
                defaults={
                    "public_url": f"https://{name}.example",
                    "last_pass_at": first.last_pass_at,
                    "sessions": first.sessions,
                    "messages": first.messages,
                    "failed_calls_24h": first.failed_calls_24h,
                },
            )
            partition_for(copy)  # as a host's first publish makes it
            cursor.execute("DELETE FROM sessions_admin_fleetsession WHERE host_id = %s", [copy.pk])
            started = time.perf_counter()
            cursor.execute(
                "INSERT INTO sessions_admin_fleetsession (host_id, key, session_id, target, "
                "profile, principal, principal_key, title, created_at, last_active, newest, "
                "messages, tool_calls, failed_calls) SELECT %s, key, session_id, target, "
                "profile, principal, principal_key, title, created_at, last_active, "
                "newest - %s, messages, tool_calls, failed_calls "
                "FROM sessions_admin_fleetsession WHERE host_id = %s",
                [copy.pk, n * 1000, first.pk],
            )
            print(f"  {name}: {time.perf_counter() - started:.1f} s", flush=True)
        cursor.execute("ANALYZE sessions_admin_fleetsession")


def naive_ms(sql: str, params: list, repeat: int) -> float:
    """The same rows with PostgreSQL's indexes off: its scan of the whole directory."""
    from django.db import connection

    times = []
    with connection.cursor() as cursor:
        cursor.execute("SET enable_indexscan = off")
        cursor.execute("SET enable_bitmapscan = off")
        cursor.execute("SET enable_indexonlyscan = off")
        for _ in range(repeat):
            started = time.perf_counter()
            cursor.execute(sql, params)
            cursor.fetchall()
            times.append((time.perf_counter() - started) * 1000)
        cursor.execute("RESET ALL")
    return statistics.median(times)


def pages(repeat: int) -> list[list[object]]:
    from bench.common import staff_client
    from sessions_admin.ourdata.fleet.models import FleetSession, exact_key

    client = staff_client()
    busiest = (
        FleetSession.objects.filter(host_id=FleetSession.objects.first().host_id)
        .values_list("principal", flat=True)
        .first()
    )
    table = "sessions_admin_fleetsession"
    checks = [
        ("/fleet/", "/fleet/", None),
        (
            "/fleet/sessions/ first page",
            "/fleet/sessions/",
            (f"SELECT * FROM {table} ORDER BY newest DESC, id DESC LIMIT 51", []),
        ),
        (
            "?principal= (one principal)",
            "/fleet/sessions/?principal=" + busiest,
            (
                f"SELECT * FROM {table} WHERE principal_key = %s "
                "ORDER BY newest DESC, id DESC LIMIT 51",
                [exact_key(busiest)],
            ),
        ),
        (
            "?q=rollback (a title's words)",
            "/fleet/sessions/?q=rollback",
            (
                f"SELECT * FROM {table} WHERE UPPER(title) LIKE UPPER(%s) "
                "ORDER BY newest DESC, id DESC LIMIT 51",
                ["%rollback%"],
            ),
        ),
    ]
    rows = []
    for label, url, naive in checks:
        client.get(url)
        times = []
        for _ in range(repeat):
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, (url, response.status_code)
        median = statistics.median(times)
        p95 = sorted(times)[int(len(times) * 0.95) - 1]
        plain = naive_ms(*naive, repeat=3) if naive else None
        rows.append([label, median, p95, plain if plain is not None else "–"])
    return rows


def _median(values: list[float]) -> float | str:
    return statistics.median(values) if values else "–"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5, help="incremental passes (0: none)")
    args = parser.parse_args()
    _database()
    base = principal_base(500_000, 79_000)
    home, var = fresh_copy(base, synced_base(base), "fleet-bench")
    setup_django(
        home,
        SESSIONS_ADMIN_VAR_DIR=str(var),
        SESSIONS_ADMIN_FLEET="1",
        SESSIONS_ADMIN_STORE_NAME="bench-host-00",
        SESSIONS_ADMIN_PUBLIC_URL="https://bench-host-00.example",
    )
    print("publishing the host's 500,000 sessions …", flush=True)
    first = first_publish()
    passes, publishes = incremental(home / "data" / "agents" / "store.db", args.rounds)
    ratio = statistics.median(publishes) / statistics.median(passes) if passes else 0
    print_table(
        "Publishing (PostgreSQL, fsync off)",
        ["what", "value"],
        [
            ["first publish of 500,000 sessions, s (goal < 60)", first],
            [f"a pass after {APPENDS_PER_PASS:,} appends, median s", _median(passes)],
            ["its publish, median s", _median(publishes)],
            ["publishing adds (goal < 10 %)", f"{ratio * 100:.1f} %"],
        ],
    )
    print(f"growing the directory to {args.hosts} hosts …", flush=True)
    grow(args.hosts)
    print_table(
        f"The fleet's pages, {args.hosts} hosts x 500,000 sessions (server ms)",
        ["page", "median", "p95", "naive SQL median"],
        pages(args.repeat),
    )


if __name__ == "__main__":
    main()
