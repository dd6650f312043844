"""``/compare/`` on the 500,000-session store: two long sessions' first pages side by
side, beside the naive reading (both transcripts' first pages fetched as two pages).

    .venv/bin/python bench/bench_compare.py

On the erasure bench's base store (``bench_erase_job``): ``sess_big`` (50,000
messages) against the longest other session, and two ordinary sessions.
Target (issue 32): two 1,000-message sessions' first pages under 50 ms.
"""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_erase_job import principal_base, synced_base  # noqa: E402
from bench.common import print_table, setup_django, timed  # noqa: E402


def main() -> None:
    home = principal_base(500_000, 79_000)
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(synced_base(home)))
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.common import staff_client
    from sessions_admin.ids import session_url
    from sessions_admin.store.connection import run_sql

    longest = run_sql(
        "SELECT id FROM sessions WHERE id != 'sess_big' ORDER BY turn_count DESC LIMIT 1"
    )[0][0]
    a, b = (row[0] for row in run_sql("SELECT id FROM sessions LIMIT 2 OFFSET 1000"))
    client = staff_client()
    rows = []
    for label, x, y in (
        ("sess_big (50,000 messages) vs the longest other", "sess_big", longest),
        ("two ordinary sessions", a, b),
    ):
        url = "/compare/?" + urlencode({"a": x, "b": y})
        assert client.get(url).status_code == 200
        t = timed(lambda url=url: client.get(url), repeat=30)
        pages = timed(
            lambda x=x, y=y: (client.get(session_url(x)), client.get(session_url(y))), repeat=10
        )
        rows.append([label, t["median"], t["p95"], pages["median"]])
    print_table(
        "/compare/ (server time, ms)", ["sessions", "median", "p95", "their two pages"], rows
    )


if __name__ == "__main__":
    main()
