"""Deletes on the 500,000-session store while a "runtime" keeps appending.

    .venv/bin/python bench/bench_deletes.py [--keep-copy]

Works on a COPY of bench_home()'s store (the file plus any -wal/-shm, so the
copy is consistent). A separate process appends messages the whole time, as
the runtime would: each write is ``BEGIN IMMEDIATE; INSERT; COMMIT`` with its
own 5 s busy timeout and foreign keys on. It appends to sessions created for
it (newest rowids, so a clear-all reaches them last), and switches to fresh
sessions once the clear-all has started (those are outside the clear-all's
snapshot, as a new conversation would be).

Measured, each while the appender runs:

1. delete ``sess_big`` (50,000 messages) — one transaction, target < 1 s;
2. delete a 10,000-session filtered set (one principal, older than a cutoff);
3. clear all (~490,000 sessions, ~10 million messages).

For each: the operation's time, its batches and longest batch, the appender's
writes, longest wait for the write lock and longest whole write, its errors;
at the end, that no appended message was lost (rows counted in the store).
Target for the bulk operations: longest writer wait < 500 ms.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import (  # noqa: E402
    BENCH_DIR,
    RuntimeAppender,
    bench_home,
    peak_rss_mb,
    print_table,
    setup_django,
)


def copy_home(source: Path, dest: Path) -> Path:
    if dest.exists():
        shutil.rmtree(dest)
    store = source / "data" / "agents" / "store.db"
    target = dest / "data" / "agents"
    target.mkdir(parents=True)
    # Checkpoint nothing and copy the WAL too: the copy holds exactly what the source does.
    for suffix in ("", "-wal", "-shm"):
        part = Path(f"{store}{suffix}")
        if part.exists():
            shutil.copyfile(part, target / f"store.db{suffix}")
            # Flush the copy now: otherwise the first fsync of the measured deletes
            # (the commit's checkpoint) pays for writing gigabytes of fresh copy.
            fd = os.open(target / f"store.db{suffix}", os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    (dest / "sessions").mkdir()
    return dest


def appender(
    path: str,
    phase: mp.Value,
    switch: mp.Event,
    stop: mp.Event,
    pause: mp.Event,
    paused: mp.Event,
    results: mp.Queue,
) -> None:
    """The runtime (:class:`bench.common.RuntimeAppender`) until ``stop``; it pauses while
    ``pause`` is set and moves to new sessions once ``switch`` is. Each write is recorded
    with the phase the bench was in."""
    writer = RuntimeAppender(path, "appender_a")
    written: dict[str, int] = dict.fromkeys(writer.sessions, 0)
    samples: list[tuple[int, float, float]] = []  # (phase, wait ms, whole write ms)
    results.put(("ready", None))
    while not stop.is_set():
        if pause.is_set():
            if not paused.is_set():
                results.put(("paused", dict(written)))
                paused.set()
            time.sleep(0.01)
            continue
        paused.clear()
        if switch.is_set() and not writer.sessions[0].startswith("appender_b"):
            written.update(dict.fromkeys(writer.create("appender_b"), 0))
            results.put(("switched", None))
        if (done := writer.write()) is not None:
            sid, wait_ms, whole_ms = done
            written[sid] += 1
            samples.append((phase.value, wait_ms, whole_ms))
    writer.close()
    results.put(("done", (written, samples, writer.errors)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep-copy", action="store_true", help="leave the copy on disk")
    args = parser.parse_args()

    source = bench_home()
    copy_dir = BENCH_DIR / "deletes-copy"
    print(f"copying {source} → {copy_dir} …", flush=True)
    started = time.perf_counter()
    home = copy_home(source, copy_dir)
    print(f"  copied and flushed in {time.perf_counter() - started:.0f} s", flush=True)
    store_path = home / "data" / "agents" / "store.db"
    setup_django(home)

    from sessions_admin import deletion
    from sessions_admin.store.queries import SessionFilter

    actor = deletion.Actor(name="bench_deletes")
    ctx = mp.get_context("spawn")
    phase = ctx.Value("i", 0)
    switch, stop, pause, paused = ctx.Event(), ctx.Event(), ctx.Event(), ctx.Event()
    results: mp.Queue = ctx.Queue()
    proc = ctx.Process(
        target=appender, args=(str(store_path), phase, switch, stop, pause, paused, results)
    )
    proc.start()
    assert results.get(timeout=60)[0] == "ready"
    time.sleep(1.0)  # the appender is in its stride before we start

    # A 10,000-session set: the busiest principal's 10,000 least recently active sessions.
    raw = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    principal = raw.execute(
        "SELECT principal_id FROM sessions WHERE principal_id IS NOT NULL "
        "GROUP BY principal_id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()[0]
    cutoff = raw.execute(
        "SELECT last_active FROM sessions WHERE principal_id = ? ORDER BY last_active "
        "LIMIT 1 OFFSET 9999",
        (principal,),
    ).fetchone()[0]
    big_messages = raw.execute(
        "SELECT COUNT(*) FROM session_messages WHERE session_id = 'sess_big'"
    ).fetchone()[0]
    raw.close()
    the_set = SessionFilter(principal=principal, active_before_ms=cutoff + 1)

    rows = []

    def measure(number: int, label: str, operation) -> None:
        phase.value = number
        began = time.perf_counter()
        result = operation()
        seconds = time.perf_counter() - began
        phase.value = 0
        rows.append([label, result, seconds])
        print(f"  {label}: {seconds:.2f} s ({result.describe()})", flush=True)
        time.sleep(0.5)

    print("deleting …", flush=True)
    measure(
        1,
        f"delete sess_big ({big_messages:,} messages)",
        lambda: deletion.delete_session("sess_big", actor=actor),
    )
    measure(
        2,
        "delete a 10,000-session filtered set",
        lambda: deletion.delete_filtered(the_set, actor=actor),
    )

    # Before the clear-all deletes the appender's first sessions, check their rows.
    pause.set()
    kind, written_at_pause = results.get(timeout=60)
    assert kind == "paused", kind

    def switch_on_first_batch(counts, batches):
        if batches == 1:
            switch.set()

    check = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    before_clear = dict(
        check.execute(
            "SELECT session_id, COUNT(*) FROM session_messages "
            "WHERE session_id LIKE 'appender_a_%' GROUP BY session_id"
        ).fetchall()
    )
    check.close()
    pause.clear()
    measure(3, "clear all", lambda: deletion.clear_all(actor=actor, on_batch=switch_on_first_batch))
    time.sleep(1.0)
    stop.set()
    kind, payload = results.get(timeout=120)
    while kind != "done":
        kind, payload = results.get(timeout=60)
    proc.join(timeout=30)
    written, samples, errors = payload

    check = sqlite3.connect(f"file:{store_path}?mode=ro", uri=True)
    stored_b = dict(
        check.execute(
            "SELECT session_id, COUNT(*) FROM session_messages "
            "WHERE session_id LIKE 'appender_b_%' GROUP BY session_id"
        ).fetchall()
    )
    left = check.execute("SELECT COUNT(*) FROM sessions").fetchone()[0]
    check.close()
    # Writes to the first sessions up to the pause were all in the store before the clear;
    # writes to the second sessions are all in the store now.
    a_ok = all(before_clear.get(sid, 0) == count for sid, count in written_at_pause.items())
    b_written = {sid: c for sid, c in written.items() if sid.startswith("appender_b")}
    b_ok = all(stored_b.get(sid, 0) == c for sid, c in b_written.items())
    a_before = sum(before_clear.values())

    table = []
    for number, (label, result, seconds) in enumerate(rows, start=1):
        waits = [w for p, w, _ in samples if p == number]
        whole = [t for p, _, t in samples if p == number]
        table.append(
            [
                label,
                seconds,
                f"{result.counts.sessions:,}",
                f"{result.counts.messages:,}",
                result.batches,
                result.longest_batch_ms,
                len(waits),
                max(waits, default=0.0),
                max(whole, default=0.0),
            ]
        )
    print_table(
        "Deletes on a copy of the 500,000-session store, with a concurrent appender",
        [
            "operation",
            "seconds",
            "sessions",
            "messages",
            "batches",
            "longest batch ms",
            "appender writes",
            "longest wait ms",
            "longest write ms",
        ],
        table,
    )
    all_waits = [w for _, w, _ in samples]
    print(
        f"\nappender: {len(samples):,} writes, {len(errors)} errors"
        f"{' (' + errors[0] + ')' if errors else ''}, longest wait overall "
        f"{max(all_waits, default=0):.1f} ms"
    )
    print(
        f"no write lost: first sessions {a_before:,} rows stored before the clear-all "
        f"{'= written' if a_ok else 'MISMATCH'}; second sessions "
        f"{sum(stored_b.values()):,} rows stored / {sum(b_written.values()):,} written "
        f"{'(equal)' if b_ok else 'MISMATCH'}"
    )
    print(f"sessions left after clear all: {left} (the appender's {len(b_written)} new ones)")
    print(f"peak RSS {peak_rss_mb():.0f} MB")
    targets_met = (
        rows[0][2] < 1.0
        and max([w for p, w, _ in samples if p in (2, 3)], default=0) < 500
        and not errors
        and a_ok
        and b_ok
    )
    print(
        "targets: one session < 1 s, longest writer wait < 500 ms during bulk, no errors, "
        f"no lost writes: {'MET' if targets_met else 'NOT MET'}"
    )
    if not args.keep_copy:
        shutil.rmtree(copy_dir)


if __name__ == "__main__":
    main()
