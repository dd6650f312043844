"""A sync pass on the bench store: idle, and one that finds edited rows and new messages.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_sync.py
    … bench_sync.py --edits 1000 --messages 10000 --repeat 3

Works on the side database ``bench_search.py --build`` made
(``$SESSIONS_ADMIN_BENCH_DIR/var-search``) and on the bench store itself, and
copies nothing: it first brings the index up to date (not timed), then times

* idle passes (nothing changed since the last one);
* a pass after the "runtime" (plain sqlite3, ``BEGIN IMMEDIATE`` … ``COMMIT``
  per session, as the runtime writes) edited ``--edits`` session rows (one
  in ten moved to another principal, the rest renamed) and appended
  ``--messages`` messages to half of those sessions, each append also
  moving its session's ``last_active`` and ``turn_count``.

The store grows by ``--messages`` rows a run and keeps every session: a
renamed title loses its " (renamed)" suffix again on the next run.

Beside each figure, in the same run, the naive ways to find the same
changes: every column of every session row read from the store and compared
with the index's copy in Python, and the walk of session ids alone that the
pass did before (1714d09), which is cheaper but blind to edits.
"""

from __future__ import annotations

import argparse
import random
import resource
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_DIR, SESSIONS, bench_home, peak_rss_mb, print_table, setup_django

VAR = BENCH_DIR / "var-search"
SUFFIX = " (renamed)"
COLUMNS = "id, target_key, profile_key, principal_id, title, turn_count, created_at, last_active"


def naive_compare(store: Path) -> tuple[float, float, int]:
    """Every session row's columns against the index's copy, in Python: seconds, CPU seconds,
    rows differing.

    The index keeps the folded title, not the title, so the title is
    compared through the same folding; what matters here is the cost of
    reading and comparing everything, which any brute-force check pays.
    """
    from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, fold

    started, cpu = time.perf_counter(), time.process_time()
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    side = sqlite3.connect(f"file:{VAR / 'side.sqlite3'}?mode=ro", uri=True)
    ours = {
        row[0]: row[1:]
        for row in side.execute(
            "SELECT id, target_key, profile_key, principal_id, fold, turn_count, created_at, "
            "last_active FROM search_sessions"
        )
    }
    differing = 0
    for sid, target, profile, principal, title, turns, created, last in raw.execute(
        f"SELECT {COLUMNS} FROM sessions"
    ):
        folded = fold(title or "") + FIELD_SEPARATOR + fold(sid) if isinstance(sid, str) else None
        if ours.get(sid) != (target, profile, principal, folded, turns, created, last):
            differing += 1
    raw.close()
    side.close()
    return time.perf_counter() - started, time.process_time() - cpu, differing


def id_walk(store: Path) -> float:
    """The pass's walk before issue 17: every session id in key order, nothing else."""
    started = time.perf_counter()
    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    for _ in raw.execute("SELECT id FROM sessions ORDER BY id"):
        pass
    raw.close()
    return time.perf_counter() - started


def runtime_writes(store: Path, edits: int, messages: int, seed: int) -> None:
    """Edit ``edits`` session rows and append ``messages`` messages, as the runtime writes."""
    rng = random.Random(seed)
    conn = sqlite3.connect(store, isolation_level=None, timeout=5)
    top = conn.execute("SELECT MAX(rowid) FROM sessions").fetchone()[0]
    rowids = rng.sample(range(1, top + 1), edits * 2)
    rows = []
    for chunk in range(0, len(rowids), 500):
        part = rowids[chunk : chunk + 500]
        marks = ", ".join("?" * len(part))
        rows += conn.execute(
            f"SELECT id, title, principal_id FROM sessions WHERE rowid IN ({marks}) "
            "AND typeof(id) = 'text'",
            part,
        ).fetchall()
    rows = rows[:edits]
    assert len(rows) == edits, "the store has too few session rows for --edits"
    principals = [r[0] for r in conn.execute("SELECT DISTINCT principal_id FROM sessions LIMIT 50")]
    now = int(time.time() * 1000)
    with_messages = rows[: edits // 2]
    per_session = messages // max(len(with_messages), 1)
    for n, (sid, title, principal) in enumerate(rows):
        conn.execute("BEGIN IMMEDIATE")
        if n % 10 == 0:
            # Another principal than its own, or the "edit" would change nothing.
            others = [p for p in principals if p != principal]
            conn.execute(
                "UPDATE sessions SET principal_id = ? WHERE id = ?", (rng.choice(others), sid)
            )
        else:
            title = title or ""
            renamed = title[: -len(SUFFIX)] if title.endswith(SUFFIX) else title + SUFFIX
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (renamed, sid))
        if n < len(with_messages):
            count = per_session + (1 if n < messages - per_session * len(with_messages) else 0)
            conn.executemany(
                "INSERT INTO session_messages (session_id, role, content, tool_name, "
                "tool_call_id, tool_args, tool_result, tool_duration_ms, ts) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (sid, "user", f"bench sync turn {i}", None, None, None, None, None, now + i)
                    if i % 2 == 0
                    else (
                        sid,
                        "tool",
                        "ok",
                        "fs.read",
                        f"call_sync_{now}_{n}_{i}",
                        '{"path": "/srv/app/config.yaml"}',
                        '{"ok": true}',
                        rng.randrange(5, 900),
                        now + i,
                    )
                    for i in range(count)
                ],
            )
            conn.execute(
                "UPDATE sessions SET last_active = ?, turn_count = coalesce(turn_count, 0) + ? "
                "WHERE id = ?",
                (now + count, count, sid),
            )
        conn.execute("COMMIT")
    conn.close()


def _cpu() -> float:
    """CPU seconds of this process and of the children it waited for (the walk reads
    the store in a process of its own)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed_pass(sync) -> tuple[float, object, float, float]:
    """One pass: seconds, its report, the seconds its session walk took, and the
    CPU seconds of the process (every thread) and of its children (the walk's
    read of the store), which say more than wall time on a machine other work
    shares."""
    from sessions_admin.ourdata import sessionwalk

    spent: list[float] = []
    original = sessionwalk.walk

    def walk(side):
        started = time.perf_counter()
        try:
            return original(side)
        finally:
            spent.append(time.perf_counter() - started)

    sessionwalk.walk = walk
    try:
        started, cpu = time.perf_counter(), _cpu()
        report = sync.sync_once()
        cpu = _cpu() - cpu
        return time.perf_counter() - started, report, sum(spent), cpu
    finally:
        sessionwalk.walk = original


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--sessions", type=int, default=SESSIONS)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--edits", type=int, default=1000)
    parser.add_argument("--messages", type=int, default=10_000)
    args = parser.parse_args()

    home = bench_home(args.sessions)
    store = home / "data" / "agents" / "store.db"
    if not (VAR / "side.sqlite3").exists():
        sys.exit(f"no side database in {VAR}: run bench/bench_search.py --build first")
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(VAR))
    from sessions_admin.ourdata import sync

    catch_up = sync.sync_once()
    print(f"catch-up pass (not timed): {catch_up.messages:,} messages, {catch_up.seconds:.1f} s")
    rows = []
    idle = [timed_pass(sync) for _ in range(args.repeat)]
    naive_s, naive_cpu, differing = naive_compare(store)
    ids_s = id_walk(store)
    assert all(r.messages == 0 and r.sessions_updated == 0 for _, r, _, _ in idle), "not idle"
    rows.append(
        [
            f"idle pass, {args.sessions:,} sessions (median of {args.repeat})",
            f"{statistics.median(s for s, _, _, _ in idle):.2f} s "
            f"(walk {statistics.median(w for _, _, w, _ in idle):.2f} s; "
            f"CPU {statistics.median(c for _, _, _, c in idle):.2f} s)",
            f"compare every column: {naive_s:.2f} s (CPU {naive_cpu:.2f} s; {differing} differ); "
            f"id walk only (1714d09, blind to edits): {ids_s:.2f} s",
            "< 2 s",
            "ok" if statistics.median(s for s, _, _, _ in idle) < 2 else "MISSED",
        ]
    )
    runtime_writes(store, args.edits, args.messages, seed=time.time_ns())
    naive_s, naive_cpu, differing = naive_compare(store)
    seconds, report, walk_s, cpu = timed_pass(sync)
    found = report.sessions_updated + report.sessions_retaken
    rows.append(
        [
            f"pass after {args.edits:,} rows edited ({report.sessions_retaken} moved to another "
            f"principal) and {args.messages:,} messages appended: found {found:,} edits, "
            f"{report.messages:,} messages",
            f"{seconds:.2f} s (walk {walk_s:.2f} s; CPU {cpu:.2f} s)",
            f"compare every column: {naive_s:.2f} s (CPU {naive_cpu:.2f} s; {differing} differ), "
            "before reading one message",
            "< 3 s",
            "ok"
            if seconds < 3 and found == args.edits and report.messages == args.messages
            else "MISSED",
        ]
    )
    print_table(
        f"Sync passes on the bench store ({args.sessions:,} sessions; shared 2-core machine; "
        f"peak RSS {peak_rss_mb():.0f} MB)",
        ["pass", "sync_once", "naive", "goal", "result"],
        rows,
    )


if __name__ == "__main__":
    main()
