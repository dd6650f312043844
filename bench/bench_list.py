"""Session list: server time per page next to the naive SQL for the same rows.

    .venv/bin/python bench/bench_list.py            # 500,000 sessions (built once)
    .venv/bin/python bench/bench_list.py --sessions 50000

Each page is fetched through Django's test client (full middleware stack,
template rendering, a logged-in superuser); the naive SQL runs on a plain
sqlite3 connection to the same file.
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import SESSIONS, bench_home, print_table, setup_django, staff_client, timed

COLUMNS = "id, target_key, profile_key, principal_id, title, turn_count, created_at, last_active"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--repeat", type=int, default=30)
    args = parser.parse_args()

    home = bench_home(args.sessions)
    setup_django(home)
    client = staff_client()
    store = home / "data" / "agents" / "store.db"
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)

    target, profile = raw.execute(
        "SELECT target_key, profile_key FROM sessions WHERE rowid = 1000"
    ).fetchone()
    principal = raw.execute("SELECT principal_id FROM sessions WHERE rowid = 2000").fetchone()[0]
    word = "rollback"
    now_ms = raw.execute("SELECT MAX(last_active) FROM sessions").fetchone()[0]

    def deep_cursor(params: dict[str, str], depth: int) -> str:
        url = "/sessions/?" + urlencode(params)
        for _ in range(depth):
            html = client.get(url, headers={"HX-Request": "true"} if "cursor" in url else {})
            match = re.search(r'href="(\?[^"]*cursor=[^"]*)"', html.content.decode())
            url = "/sessions/" + match.group(1).replace("&amp;", "&")
        return url

    order = "ORDER BY last_active DESC LIMIT 50"
    cases = [
        ("default, first page", "/sessions/", f"SELECT {COLUMNS} FROM sessions {order}", ()),
        (
            "default, page 20 (cursor)",
            deep_cursor({}, 20),
            f"SELECT {COLUMNS} FROM sessions {order} OFFSET 950",
            (),
        ),
        (
            "target",
            "/sessions/?" + urlencode({"target": target}),
            f"SELECT {COLUMNS} FROM sessions WHERE target_key = ? {order}",
            (target,),
        ),
        (
            "target + profile",
            "/sessions/?" + urlencode({"target": target, "profile": profile}),
            f"SELECT {COLUMNS} FROM sessions WHERE target_key = ? AND profile_key = ? {order}",
            (target, profile),
        ),
        (
            "profile (all targets)",
            "/sessions/?" + urlencode({"profile": profile}),
            f"SELECT {COLUMNS} FROM sessions WHERE profile_key = ? {order}",
            (profile,),
        ),
        (
            "last day",
            "/sessions/?active=24h",
            f"SELECT {COLUMNS} FROM sessions WHERE last_active >= ? {order}",
            (now_ms - 86_400_000,),
        ),
        (
            "principal",
            "/sessions/?" + urlencode({"principal": principal}),
            f"SELECT {COLUMNS} FROM sessions WHERE principal_id = ? {order}",
            (principal,),
        ),
        (
            "title/id text",
            "/sessions/?" + urlencode({"q": word}),
            f"SELECT {COLUMNS} FROM sessions WHERE title LIKE ? OR id LIKE ? {order}",
            (f"%{word}%", f"%{word}%"),
        ),
        (
            "principal, its count (htmx, after the rows)",
            "/sessions/?" + urlencode({"principal": principal, "count": "1"}),
            "SELECT COUNT(*) FROM (SELECT 1 FROM sessions WHERE principal_id = ? LIMIT 10001)",
            (principal,),
        ),
        (
            "targets overview",
            "/targets/",
            "SELECT target_key, profile_key, COUNT(*), MAX(last_active) FROM sessions "
            "GROUP BY 1, 2",
            (),
        ),
    ]
    rows = []
    for label, url, sql, params in cases:
        headers = {"HX-Request": "true"} if "count=1" in url else {}
        response = client.get(url, headers=headers)
        assert response.status_code == 200, (label, response.status_code, response.content[:300])
        page = timed(lambda url=url, h=headers: client.get(url, headers=h), repeat=args.repeat)
        naive = timed(
            lambda sql=sql, params=params: raw.execute(sql, params).fetchall(), repeat=args.repeat
        )
        rows.append(
            [label, page["median"], page["p95"], naive["median"], page["median"] / naive["median"]]
        )
    count = raw.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    print_table(
        f"Session list on {count:,} sessions ({store}); times in ms, {args.repeat} requests each",
        ["page", "server median", "server p95", "naive SQL median", "ratio"],
        rows,
    )


if __name__ == "__main__":
    main()
