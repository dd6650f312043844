"""Erase one principal (1,000 sessions, 20,000 messages) while a "runtime" keeps appending.

    .venv/bin/python bench/bench_erase.py [--sessions N] [--fresh] [--profile]

Builds once, under ``$SESSIONS_ADMIN_BENCH_DIR/erase-<N>`` (default
``var/bench``), a demo host home of N other sessions (default 20,000, about
400,000 messages, with the demo writer), adds the principal
``bench:erase-me`` with 1,000 sessions of 20 messages each (tool calls among
them), a state row and a frames directory each, and syncs the side index over
it all. Each run erases on a fresh copy of that home (store, frames, side
database), so it can be repeated.

While a separate process appends as the runtime does (``BEGIN IMMEDIATE;
INSERT; COMMIT``, 5 s busy timeout, foreign keys on, ~150 writes/s to
sessions of another principal), it measures:

* the erasure end to end, as the view runs it (phrase checked against the
  store's count, the paced cascade, frames, side index and rollups, our
  records, verification, receipt), its batches and the receipt's status;
* the appender's writes, longest wait for the write lock, errors, and that
  no appended message was lost;
* ``/principals/`` (the side index only) on that side database, median and p95.

Targets: erasure < 5 s, longest writer wait < 500 ms, no error; list < 50 ms.
"""

from __future__ import annotations

import argparse
import cProfile
import multiprocessing as mp
import pstats
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    BENCH_DIR,
    RuntimeAppender,
    peak_rss_mb,
    print_table,
    setup_django,
    staff_client,
    timed,
)

PRINCIPAL = "bench:erase-me"
ERASE_SESSIONS = 1_000
ERASE_MESSAGES = 20


def base_dir(sessions: int) -> Path:
    return BENCH_DIR / f"erase-{sessions}"


def add_principal(store: Path, frames: Path) -> None:
    """The principal to erase: sessions, messages (a tool call in every fifth), state, frames."""
    now = int(time.time() * 1000) - 86_400_000
    conn = sqlite3.connect(store)
    conn.execute("PRAGMA foreign_keys = ON")
    with conn:
        for n in range(ERASE_SESSIONS):
            sid = f"sess_erase_{n:05d}"
            start = now + n * 60_000
            conn.execute(
                "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, "
                "turn_count, created_at, last_active) VALUES (?, 'bench.erase', 'default', ?, "
                "?, 10, ?, ?)",
                (sid, PRINCIPAL, f"erase me {n}", start, start),
            )
            rows = []
            for m in range(ERASE_MESSAGES):
                tool = m % 5 == 4
                rows.append(
                    (
                        sid,
                        "tool" if tool else ("user" if m % 2 == 0 else "assistant"),
                        f"message {m} of {sid}: private words of {PRINCIPAL}",
                        "fs.read" if tool else None,
                        f"call_{n}_{m}" if tool else None,
                        '{"ok": true}' if tool else None,
                        start + m * 1000,
                    )
                )
            conn.executemany(
                "INSERT INTO session_messages (session_id, role, content, tool_name, "
                "tool_call_id, tool_result, ts) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            conn.execute(
                "INSERT INTO session_state (session_id, key, value, updated_at) "
                "VALUES (?, 'repl_state', '{}', ?)",
                (sid, start),
            )
            folder = frames / sid
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "activity-req_1.jsonl").write_text('{"ts": 1, "kind": "x"}\n' * 20)
    conn.close()


def build(sessions: int) -> None:
    """Run in its own process: the demo home, the principal, the first sync."""
    from sessions_admin.demo import build_demo_home

    home = base_dir(sessions)
    print(f"building {sessions:,} demo sessions in {home} …", flush=True)
    started = time.perf_counter()
    build_demo_home(home, sessions=sessions, messages_per_session=20, seed=7)
    add_principal(home / "data" / "agents" / "store.db", home / "sessions")
    print(f"  store in {time.perf_counter() - started:.0f} s; syncing the side index …")
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(home / "var"))
    from sessions_admin.ourdata import sync

    report = sync.sync_once()
    print(f"  synced {report.messages:,} messages in {report.seconds:.0f} s", flush=True)


def copy_home(source: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    # Frames: only the principal's directories and the demo's are copied (small files).
    # The copy is a store of its own: its data folder must not say it was made for the
    # original's (store-identity.json), or every delete is refused as another store's.
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.lock", "store-identity.json"))
    return dest


def appender(path: str, stop, results) -> None:
    """The runtime (:class:`bench.common.RuntimeAppender`) until ``stop``: writes, waits, errors."""
    writer = RuntimeAppender(path, "appender")
    results.put(("ready", None))
    waits: list[float] = []
    while not stop.is_set():
        if (done := writer.write()) is not None:
            waits.append(done[1])
    writer.close()
    results.put(("done", (len(waits), waits, writer.errors)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20_000, help="other sessions")
    parser.add_argument("--fresh", action="store_true", help="rebuild the base home")
    parser.add_argument("--profile", action="store_true", help="print the erasure's profile")
    parser.add_argument("--build", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.build:
        build(args.sessions)
        return
    base = base_dir(args.sessions)
    if args.fresh and base.exists():
        shutil.rmtree(base)
    if not (base / "var" / "side.sqlite3").exists():
        command = [sys.executable, __file__, "--build", "--sessions", str(args.sessions)]
        subprocess.run(command, check=True)
    home = copy_home(base, BENCH_DIR / f"erase-{args.sessions}-copy")
    store_path = home / "data" / "agents" / "store.db"
    setup_django(home, SESSIONS_ADMIN_VAR_DIR=str(home / "var"))
    run(home, store_path, args.profile)
    shutil.rmtree(home)


def run(home: Path, store_path: Path, profile: bool) -> None:
    from sessions_admin.deletion import Actor
    from sessions_admin.deletion.erasure import erase_principal, erasure_phrase

    client = staff_client()
    listing = timed(lambda: client.get("/principals/"), repeat=30)
    searching = timed(lambda: client.get("/principals/?q=ERASE"), repeat=30)

    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    results = ctx.Queue()
    proc = ctx.Process(target=appender, args=(str(store_path), stop, results))
    proc.start()
    assert results.get(timeout=60)[0] == "ready"
    time.sleep(1.0)  # the appender in its stride
    profiler = cProfile.Profile() if profile else None
    started = time.perf_counter()
    if profiler:
        profiler.enable()
    receipt = erase_principal(
        PRINCIPAL, actor=Actor(name="bench_erase"), confirm=erasure_phrase(PRINCIPAL, 1000)
    )
    if profiler:
        profiler.disable()
    seconds = time.perf_counter() - started
    time.sleep(0.5)
    stop.set()
    kind, payload = results.get(timeout=120)
    proc.join(timeout=30)
    written, waits, errors = payload
    check = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    stored = check.execute(
        "SELECT count(*) FROM session_messages WHERE session_id LIKE 'appender_%'"
    ).fetchone()[0]
    check.close()
    print_table(
        "Erasing a principal of 1,000 sessions / 20,000 messages, with a concurrent appender",
        ["what", "value"],
        [
            ["erasure, end to end (s)", seconds],
            ["receipt status", receipt.status],
            [
                "sessions / messages / state erased",
                f"{receipt.sessions:,} / {receipt.messages:,} / {receipt.state_rows:,}",
            ],  # fmt: skip
            ["frame dirs erased", receipt.frame_dirs],
            [
                "index entries / rollup rows erased",
                f"{receipt.index_entries:,} / {receipt.rollup_rows:,}",
            ],  # fmt: skip
            ["verification (left)", sum(receipt.verification.values())],
            ["appender writes", written],
            ["appender longest wait (ms)", max(waits, default=0.0)],
            ["appender errors", len(errors)],
            ["appended rows stored", f"{stored:,} of {written:,}"],
            ["/principals/ median / p95 (ms)", f"{listing['median']:.1f} / {listing['p95']:.1f}"],
            [
                "/principals/?q= median / p95 (ms)",
                f"{searching['median']:.1f} / {searching['p95']:.1f}",
            ],  # fmt: skip
            ["peak RSS (MB)", peak_rss_mb()],
        ],
    )
    met = (
        seconds < 5
        and receipt.status == "ok"
        and max(waits, default=0) < 500
        and not errors
        and stored == written
        and listing["p95"] < 50
    )
    print(
        "targets: erasure < 5 s and ok, longest writer wait < 500 ms, no error, no lost "
        f"write, list < 50 ms: {'MET' if met else 'NOT MET'}"
    )
    if profiler:
        pstats.Stats(profiler).sort_stats("cumulative").print_stats(30)


if __name__ == "__main__":
    main()
