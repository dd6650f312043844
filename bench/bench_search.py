"""Search every transcript: the side index against the naive LIKE scan, in the same run.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_search.py --build
    .venv/bin/python bench/bench_search.py             # reuse the index built before
    .venv/bin/python bench/bench_search.py --skip-sync  # nothing on a copy (no sync, no rare)

The side database lives in ``$SESSIONS_ADMIN_BENCH_DIR/var-search`` (its own
data folder, so other benches and checkouts keep theirs). ``--build`` times
``manage.py sync_index --rebuild`` over the whole store in a child process
(rate, and the child's peak RSS). The sync measure copies the store and the
side database under ``$SESSIONS_ADMIN_BENCH_DIR/search-copy``, appends 10,000
messages (and deletes 100 sessions, as the runtime would) to the copy, times
one ``sync_once`` there, then times the rare-substring page there (the
generated store repeats its values from pools, so no six-hex-character
string in it is rare; three of the new messages share one), and removes the
copy.

Pages go through Django's test client (whole middleware stack, a logged-in
superuser); the naive SQL runs on a plain read-only sqlite3 connection.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_DIR, ROOT, SESSIONS, bench_home, print_table, timed

VAR = BENCH_DIR / "var-search"
FIELDS = ("content", "tool_name", "tool_args", "tool_result")


def naive_sql(limit: int = 60) -> str:
    where = " OR ".join(f"{field} LIKE ? ESCAPE '\\'" for field in FIELDS)
    return f"SELECT id FROM session_messages WHERE {where} ORDER BY id DESC LIMIT {limit}"


def naive(raw: sqlite3.Connection, text: str) -> list[int]:
    pattern = "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    return [row[0] for row in raw.execute(naive_sql(), [pattern] * len(FIELDS))]


def child_env(home: Path) -> dict[str, str]:
    """manage.py in a child process, on the bench store, read-only, our data folder."""
    return {
        "DJANGO_SECRET_KEY": "bench-only-" + "x" * 40,
        **os.environ,
        "AGENTS_HOST_HOME": str(home),
        "SESSIONS_ADMIN_VAR_DIR": str(VAR),
        "SESSIONS_ADMIN_READ_ONLY": "1",
    }


def build(home: Path) -> list[list[object]]:
    """sync_index --rebuild in a child: rate and the child's peak RSS."""
    env = child_env(home)
    for part in VAR.glob("side*.sqlite3*"):
        part.unlink()  # fresh files, so the size measured is the index's own
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), "sync_index", "--rebuild"], env=env, check=True
    )
    seconds = time.perf_counter() - started
    child = resource.getrusage(resource.RUSAGE_CHILDREN)
    rss_mb = child.ru_maxrss / 1024
    # CPU seconds (both threads) say more than wall time on a shared machine.
    cpu = child.ru_utime + child.ru_stime
    raw = sqlite3.connect(f"file:{home / 'data/agents/store.db'}?mode=ro", uri=True)
    messages = raw.execute("SELECT COUNT(*) FROM session_messages").fetchone()[0]
    rate = messages / seconds
    return [
        [
            "first build (sync_index --rebuild)",
            f"{rate:,.0f} msg/s ({seconds:.0f} s; CPU {cpu:.0f} s: {messages / cpu:,.0f}/CPU-s)",
            "",
            ">= 30,000 msg/s",
            "ok" if rate >= 30_000 else "MISSED",
        ],
        [
            "first build, peak RSS",
            f"{rss_mb:.0f} MB",
            "",
            "< 300 MB",
            "ok" if rss_mb < 300 else "MISSED",
        ],
    ]


def size_rows(store: Path) -> list[list[object]]:
    """The side files, and the search index's own tables in them (the rollups share
    ``side.sqlite3``; the trigram index is ``side-text.sqlite3``)."""
    side = sum(p.stat().st_size for p in VAR.glob("side*.sqlite3*"))
    base = store.stat().st_size
    # The system sqlite3 has the dbstat table; FTS5's shadow tables are plain tables.
    raw = sqlite3.connect(f"file:{VAR / 'side.sqlite3'}?mode=ro", uri=True)
    index = raw.execute(
        "SELECT SUM(pgsize) FROM dbstat WHERE name LIKE 'search%' "
        "OR name LIKE 'sqlite_autoindex_search%'"
    ).fetchone()[0]
    raw.close()
    text = VAR / "side-text.sqlite3"
    index += text.stat().st_size if text.exists() else 0
    # The measure is everything kept beside the store: both side files whole.
    ratio = side / base
    return [
        [
            f"side files / store size (the search index alone: {index / 1e9:.2f} GB, "
            f"{index / base:.2f}x)",
            f"{side / 1e9:.2f} GB",
            f"{base / 1e9:.2f} GB",
            "< 0.5x",
            f"{ratio:.2f}x " + ("ok" if ratio < 0.5 else "MISSED"),
        ]
    ]


def search_rows(
    client, raw: sqlite3.Connection, repeat: int, cases: list[tuple[str, str, int]]
) -> list[list[object]]:
    """Each (label, query, goal in ms): the rendered page beside the naive scan."""
    from sessions_admin.ourdata.index import search as index_search
    from sessions_admin.ourdata.index.search import SearchQuery

    rows = []
    for label, text, goal in cases:
        url = "/search/?" + urlencode({"q": text})
        assert client.get(url).status_code == 200
        page = timed(lambda url=url: client.get(url), repeat=repeat)
        scan = timed(lambda text=text: naive(raw, text), repeat=3, warmup=1)
        hits = len(naive(raw, text))
        found = index_search.search(SearchQuery(q=text))
        # Hits checked in the store; candidates of sessions whose group was full are
        # counted apart (messages or blocks of them, not checked: not hits).
        shown = sum(len(g.hits) + g.more for g in found.groups)
        unchecked = sum(g.unchecked for g in found.groups)
        share = page["median"] / scan["median"]
        relative = goal == 20  # the rare substring: also a share of the scan's time
        ok = page["median"] < goal and (not relative or share < 0.01)
        rows.append(
            [
                f"{label}: {shown} hits on page 1 (+{unchecked} unchecked) / naive "
                f"{hits}{'+' if hits == 60 else ''}",
                f"{page['median']:.1f} / {page['p95']:.1f} ms",
                # A common word's naive scan stops at its first 60 rows: milliseconds.
                f"{scan['median']:.1f} ms" if scan["median"] < 10 else f"{scan['median']:.0f} ms",
                f"< {goal} ms" + (", < 1% of scan" if relative else ""),
                (f"{share:.2%} " if relative else "") + ("ok" if ok else "MISSED"),
            ]
        )
    return rows


def list_rows(client, raw: sqlite3.Connection, repeat: int) -> list[list[object]]:
    from sessions_admin.lists.sessions import index_page
    from sessions_admin.views.listparams import parse_filter

    principal = raw.execute("SELECT principal_id FROM sessions WHERE rowid = 2000").fetchone()[0]
    columns = (
        "id, target_key, profile_key, principal_id, title, turn_count, created_at, last_active"
    )
    order = "ORDER BY last_active DESC LIMIT 50"
    rows = []
    for label, params, sql, args in (
        (
            "list filter by principal",
            {"principal": principal},
            f"SELECT {columns} FROM sessions WHERE principal_id = ? {order}",
            (principal,),
        ),
        (
            "list filter by title text",
            {"q": "rollback"},
            f"SELECT {columns} FROM sessions WHERE title LIKE ? OR id LIKE ? {order}",
            ("%rollback%", "%rollback%"),
        ),
    ):
        url = "/sessions/?" + urlencode(params)
        body = client.get(url).content.decode()
        assert "data-session-id" in body
        page = timed(lambda url=url: client.get(url), repeat=repeat)
        scan = timed(lambda sql=sql, args=args: raw.execute(sql, args).fetchall(), repeat=5)
        fresh = index_page(parse_filter(params), "-last_active", None)
        rows.append(
            [
                f"{label} ({'index' if fresh else 'SCAN: index not fresh'})",
                f"{page['median']:.1f} / {page['p95']:.1f} ms",
                f"{scan['median']:.0f} ms",
                "< 10 ms",
                "ok" if page["median"] < 10 and fresh else "MISSED",
            ]
        )
    return rows


def append_messages(store: Path, count: int) -> str:
    """Append ``count`` tool messages (each path has six random hex characters; one
    token is in exactly three of them) and delete 100 sessions as the runtime would.
    Returns that rare token."""
    import random

    rng = random.Random(12)
    tokens = [f"{rng.getrandbits(24):06x}" for _ in range(count)]
    rare = tokens[count // 2]
    tokens[count // 3] = tokens[count // 4] = rare
    conn = sqlite3.connect(store)
    sessions = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY rowid DESC LIMIT 500")]
    now = int(time.time() * 1000)
    conn.executemany(
        "INSERT INTO session_messages (session_id, role, content, tool_name, tool_args, ts) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                sessions[i % len(sessions)],
                "tool",
                f"fs.read ok: {i} lines",
                "fs.read",
                f'{{"path": "/srv/app/{tokens[i]}/config.yaml"}}',
                now + i,
            )
            for i in range(count)
        ],
    )
    gone = [r[0] for r in conn.execute("SELECT id FROM sessions ORDER BY rowid LIMIT 100")]
    for sid in gone:  # the runtime's own cascade
        conn.execute("DELETE FROM session_messages WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM session_state WHERE session_id = ?", (sid,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    conn.commit()
    conn.close()
    return rare


def copy_rows(home: Path, client, repeat: int) -> list[list[object]]:
    """On copies of the store and the index: 10,000 new messages and 100 sessions
    deleted by the runtime, one sync; then a rare substring among the new messages."""
    from django.conf import settings
    from django.db import connections

    from sessions_admin.ourdata import sync

    copy = BENCH_DIR / "search-copy"
    shutil.rmtree(copy, ignore_errors=True)
    store = copy / "home" / "data" / "agents" / "store.db"
    store.parent.mkdir(parents=True)
    saved = settings.VAR_DIR, connections["agents"].settings_dict["NAME"]
    try:
        print("copying the store and the index for the sync measure …", flush=True)
        shutil.copyfile(home / "data" / "agents" / "store.db", store)
        (copy / "var").mkdir()
        for part in VAR.glob("side*.sqlite3*"):
            shutil.copyfile(part, copy / "var" / part.name)
        rare = append_messages(store, 10_000)
        # Let the kernel write the 6.5 GB just copied before timing anything.
        os.sync()
        connections["agents"].close()
        connections["agents"].settings_dict["NAME"] = str(store)
        settings.VAR_DIR = copy / "var"
        report = sync.sync_once()
        raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        started = time.perf_counter()
        raw.execute(
            "SELECT COUNT(*) FROM session_messages WHERE id > "
            "(SELECT MAX(id) - 10000 FROM session_messages) AND tool_args LIKE '%config%'"
        ).fetchone()
        naive_ms = (time.perf_counter() - started) * 1000
        rows = [
            [
                f"sync of {report.messages:,} new messages, {report.sessions_forgotten} "
                "sessions deleted by the runtime (on a copy)",
                f"{report.seconds:.2f} s",
                f"LIKE over those 10,000: {naive_ms:.0f} ms",
                "< 2 s",
                "ok" if report.seconds < 2 and report.messages == 10_000 else "MISSED",
            ]
        ]
        rows += search_rows(
            client, raw, repeat, [(f"rare substring {rare!r} (a path in tool args)", rare, 20)]
        )
    finally:
        connections["agents"].close()
        settings.VAR_DIR, connections["agents"].settings_dict["NAME"] = saved
        shutil.rmtree(copy, ignore_errors=True)
    return rows


class Rows(list):
    """The table's rows, each also printed as soon as it is measured (a long run
    that fails late still shows what it measured)."""

    def __iadd__(self, new):  # type: ignore[override]
        for row in new:
            print("  " + " | ".join(str(cell) for cell in row), flush=True)
        return super().__iadd__(new)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--build", action="store_true", help="time a full rebuild first")
    parser.add_argument("--skip-sync", action="store_true", help="skip the sync on a copy")
    args = parser.parse_args()

    home = bench_home(args.sessions)
    VAR.mkdir(parents=True, exist_ok=True)
    store = home / "data" / "agents" / "store.db"
    rows = Rows()
    if args.build or not (VAR / "side.sqlite3").exists():
        rows += build(home)
    else:
        # Catch up on anything newer, so the list's filters see a fresh index.
        subprocess.run(
            [sys.executable, str(ROOT / "manage.py"), "sync_index", "--quiet"],
            env=child_env(home),
            check=True,
        )
    rows += size_rows(store)

    from bench.common import setup_django, staff_client

    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(VAR))
    client = staff_client()
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows += search_rows(client, raw, args.repeat, [("common word 'timeout'", "timeout", 50)])
    rows += list_rows(client, raw, args.repeat)
    if not args.skip_sync:
        rows += copy_rows(home, client, args.repeat)
    print_table(
        f"Search every transcript ({args.sessions:,} sessions; shared 2-core machine)",
        ["measure", "side index (median / p95)", "naive LIKE scan", "goal", "result"],
        rows,
    )


if __name__ == "__main__":
    main()
