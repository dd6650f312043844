#!/usr/bin/env python
"""Masking's cost: the same pages and exports with masking on and off, interleaved.

    .venv/bin/python bench/bench_masking.py [--repeat 30]

On the 500,000-session bench store (its synced copy of ``bench_erase_job``), through
the test client: the first page of ``sess_big`` (50,000 messages) and of an ordinary
session, the session list, a search, a tool's calls, and the JSONL export of
``sess_big`` (messages per second). Each figure is measured with masking on and off
in alternating rounds, so both see the same machine.

Targets (issue 33): the transcript within x1.15 of masking off, search and the list
within x1.10, exports at least 50,000 messages/s.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bench_erase_job import principal_base, synced_base  # noqa: E402
from bench.common import print_table, setup_django  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()
    home = principal_base(500_000, 79_000)
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(synced_base(home)))
    from django.conf import settings
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.common import staff_client
    from sessions_admin.ids import session_url
    from sessions_admin.store.connection import run_sql

    ordinary = run_sql("SELECT id FROM sessions LIMIT 1 OFFSET 1000")[0][0]
    tool = run_sql("SELECT tool_name FROM session_messages WHERE tool_name IS NOT NULL LIMIT 1")
    client = staff_client()
    pages = {
        "sess_big first page (50,000 messages)": session_url("sess_big"),
        "an ordinary session's page": session_url(ordinary),
        "/sessions/ first page": "/sessions/",
        "/search/?q=timeout": "/search/?q=timeout",
        f"/tools/{tool[0][0]}/": f"/tools/{tool[0][0]}/",
    }

    def get(url: str) -> float:
        started = time.perf_counter()
        response = client.get(url)
        assert response.status_code == 200, (url, response.status_code)
        return (time.perf_counter() - started) * 1000

    times: dict[tuple[str, bool], list[float]] = {}
    for url in pages.values():  # warm both ways
        for on in (True, False):
            settings.MASKING = on
            get(url)
    for _ in range(args.repeat):
        for label, url in pages.items():
            for on in (True, False):
                settings.MASKING = on
                times.setdefault((label, on), []).append(get(url))
    rows = []
    for label in pages:
        on, off = (statistics.median(times[(label, flag)]) for flag in (True, False))
        rows.append([label, on, off, f"x{on / off:.2f}"])

    export = session_url("sess_big", "export", format="jsonl")
    speeds: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(3):
        for on in (True, False):
            settings.MASKING = on
            started = time.perf_counter()
            body = b"".join(client.get(export).streaming_content)
            seconds = time.perf_counter() - started
            speeds[on].append(body.count(b"\n") / seconds)
    rows.append(
        [
            "sess_big JSONL export, messages/s",
            max(speeds[True]),
            max(speeds[False]),
            f"x{max(speeds[False]) / max(speeds[True]):.2f}",
        ]
    )
    print_table(
        "Masking on and off, interleaved (server time, median ms; export: best of 3)",
        ["what", "masking on", "masking off", "cost"],
        rows,
    )


if __name__ == "__main__":
    main()
