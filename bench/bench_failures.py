"""Failures first on the 500,000-session store: ``/failures/``, a busy tool's
``?errors=1``, the list's ``?failed=1`` and search's, beside the naive SQL over the
store each replaces, in the same run.

    .venv/bin/python bench/bench_failures.py [--sessions 500000] [--repeat 20]

Runs on the erasure bench's base copy and its synced side data
(``bench_erase_job.principal_base`` / ``synced_base``, made once and kept): the
same 500,000 sessions and 10 million messages, indexed and rolled up. Pages go
through Django's test client (every middleware, a signed-in superuser); the
naive SQL runs once each on a plain read-only connection to the store.

Targets (issue 32): ``/failures/`` under 50 ms; a tool's ``?errors=1`` under 30 ms.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_erase_job import principal_base, synced_base  # noqa: E402
from bench.common import print_table, setup_django, timed  # noqa: E402


def naive(store: Path, now_ms: int) -> dict[str, tuple[str, list]]:
    """The SQL over the store each page replaces (a full read of every message)."""
    from sessions_admin.store.toolcalls import IS_TOOL_CALL_SQL, reports_error_sql

    failed = reports_error_sql("tool_result")
    day = now_ms - 86_400_000
    groups = (
        "SELECT tool_name, substr(tool_result, 1, 160), count(*), count(DISTINCT session_id), "
        f"min(ts), max(ts) FROM session_messages WHERE ts >= ? AND {IS_TOOL_CALL_SQL} "
        f"AND {failed} GROUP BY 1, 2 ORDER BY 3 DESC"
    )
    return {
        "failures 24h": (groups, [day]),
        "failures all": (groups.replace("ts >= ? AND ", ""), []),
        "tool errors": (
            "SELECT id, session_id, ts, substr(tool_result, 1, 160) FROM session_messages "
            f"WHERE tool_name = :tool AND {failed} ORDER BY ts DESC, id DESC",
            None,
        ),
        "failed sessions": (
            "SELECT s.id FROM sessions AS s WHERE s.id IN (SELECT session_id FROM "
            f"session_messages WHERE {IS_TOOL_CALL_SQL} AND {failed}) "
            "ORDER BY s.last_active DESC, s.id DESC LIMIT 51",
            [],
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    home = principal_base(args.sessions, 79_000)
    var = synced_base(home)
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(var))
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    from bench.common import staff_client
    from sessions_admin.ourdata import sidedb, sync

    sync.sync_once()  # the index must be fresh (its pages serve for 10 minutes after a pass)
    side = sidedb.connect_readonly()
    tool = side.execute(
        "SELECT t.name FROM rollup_call AS c JOIN rollup_tools AS t ON t.key = c.tool "
        "WHERE c.failed GROUP BY c.tool ORDER BY count(*) DESC LIMIT 1"
    ).fetchone()[0]
    word = "timeout"
    side.close()
    client = staff_client()
    store = home / "data" / "agents" / "store.db"
    sql = naive(store, int(time.time() * 1000))
    cases = [
        ("/failures/ (24 h)", "/failures/", "failures 24h"),
        ("/failures/?window=7d", "/failures/?window=7d", None),
        ("/failures/?window=all", "/failures/?window=all", "failures all"),
        (f"/tools/{tool}/?errors=1", f"/tools/{tool}/?errors=1", "tool errors"),
        ("/sessions/?failed=1", "/sessions/?failed=1", "failed sessions"),
        ("/sessions/?failed=1&sort=-turn_count", "/sessions/?failed=1&sort=-turn_count", None),
        ("/sessions/?failed=1&count=1 (htmx)", "/sessions/?failed=1&count=1", None),
        (f"/search/?q={word}", f"/search/?q={word}", None),
        (f"/search/?q={word}&failed=1", f"/search/?q={word}&failed=1", None),
    ]
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = []
    for label, url, naive_key in cases:
        headers = {"HTTP_HX_REQUEST": "true"} if "count=1" in url else {}
        response = client.get(url, **headers)
        assert response.status_code == 200, (url, response.status_code)
        size = len(response.content)
        t = timed(lambda url=url, h=headers: client.get(url, **h), repeat=args.repeat)
        naive_ms = None
        if naive_key:
            query, params = sql[naive_key]
            started = time.perf_counter()
            raw.execute(query, params if params is not None else {"tool": tool}).fetchall()
            naive_ms = (time.perf_counter() - started) * 1000
        share = f"{100 * t['median'] / naive_ms:.2f} %" if naive_ms else ""
        rows.append([label, t["median"], t["p95"], f"{size / 1024:,.0f} KB", naive_ms or "", share])
        print(f"  {label}: median {t['median']:.1f} ms", flush=True)
    raw.close()
    print_table(
        f"Failures first ({args.sessions:,}-session store; server time, ms)",
        ["page", "median", "p95", "HTML", "naive SQL ms", "page / naive"],
        rows,
    )


if __name__ == "__main__":
    main()
