#!/usr/bin/env python
"""Benchmark ``sessions_admin.store.frames`` on a large activity-frame file and many dirs.

Generates (under ``--out``, default ``var/bench``):

* a ~``--size-mb`` JSONL frame file, written fast by repeating one block of realistic
  frames (with a damaged line and a non-object line per block, and an unterminated last
  line, as a file being written would have);
* ``--dirs`` session directories with one or two small frame files each, plus a few
  symlinks the orphan scan must skip.

Then measures the first page, pages at random offsets (median / p95), filtered scans that
spend the whole scan budget, a tail poll, list_requests on the big file, a filtered scan of
the entire file, the orphan scan, and the process's peak RSS while reading.

Usage::

    .venv/bin/python bench/bench_frames.py                 # 1 GB, 10,000 dirs
    .venv/bin/python bench/bench_frames.py --size-mb 64 --dirs 1000 --keep

Generated data is deleted afterwards unless ``--keep`` is given.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from sessions_admin.store import frames as F  # noqa: E402  (needs the path above)

MB = 1024 * 1024
KINDS = ("request.start", "model.call", "tool.call", "tool.call", "model.call", "request.end")


def make_block(lines: int, rng: random.Random) -> bytes:
    """One block of frames shaped like the runtime's, ~400 bytes a line on average."""
    out: list[bytes] = []
    ts = 1_700_000_000_000
    trace = f"{rng.getrandbits(128):032x}"
    for i in range(lines):
        kind = KINDS[i % len(KINDS)]
        ts += rng.randint(1, 900)
        frame: dict[str, object] = {
            "ts": ts,
            "kind": kind,
            "traceId": trace,
            "spanId": f"{rng.getrandbits(64):016x}",
            "parentSpanId": f"{rng.getrandbits(64):016x}",
            "name": kind if kind != "tool.call" else "tool.search",
            "durationMs": rng.randint(1, 5000),
            "payload": {
                "model": "model-large",
                "inputTokens": rng.randint(800, 24_000),
                "args": {"query": "lorem ipsum " * rng.randint(1, 20)},
            },
        }
        out.append(json.dumps(frame).encode() + b"\n")
        if i == lines // 3:
            out.append(b'{"ts": 1700000000000, "kind": "tool.call", "broken\n')
        if i == 2 * lines // 3:
            out.append(b"[1, 2, 3]\n")
    return b"".join(out)


def generate_file(path: Path, size: int, seed: int) -> tuple[int, float]:
    """Write ~``size`` bytes by repeating one block; returns (size, seconds)."""
    block = make_block(1000, random.Random(seed))
    start = time.perf_counter()
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb", buffering=0) as fh:
        written = 0
        while written + len(block) <= size:
            fh.write(block)
            written += len(block)
        fh.write(b'{"ts": 1700000000000, "kind": "still.being.writ')  # unterminated
        fh.flush()
        os.fsync(fh.fileno())
    return path.stat().st_size, time.perf_counter() - start


def generate_dirs(root: Path, count: int, seed: int) -> float:
    rng = random.Random(seed)
    small = make_block(8, rng)
    start = time.perf_counter()
    for i in range(count):
        d = root / f"sess_{i:06d}"
        d.mkdir(parents=True, exist_ok=True)
        for r in range(1 + i % 2):
            (d / f"activity-req_{r}.jsonl").write_bytes(small)
    outside = root.parent / "outside"
    outside.mkdir(exist_ok=True)
    for i in range(10):
        link = root / f"link_{i}"
        if not link.is_symlink():
            link.symlink_to(outside)
    return time.perf_counter() - start


def drop_cache(path: Path) -> bool:
    """Ask the kernel to evict the file's pages so the next reads are (closer to) cold."""
    if not hasattr(os, "posix_fadvise"):
        return False
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    return True


def maxrss_mb() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return rss / MB if sys.platform == "darwin" else rss / 1024  # bytes on macOS, KB on Linux


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    start = time.perf_counter()
    result = fn()
    return (time.perf_counter() - start) * 1000, result


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=int, default=1024, help="size of the big frame file")
    ap.add_argument("--dirs", type=int, default=10_000, help="session directories to scan")
    ap.add_argument("--out", type=Path, default=REPO / "var" / "bench", help="work directory")
    ap.add_argument("--pages", type=int, default=50, help="pages read at random offsets")
    ap.add_argument("--limit", type=int, default=F.DEFAULT_LIMIT, help="frames per page")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--no-full-scan", action="store_true", help="skip the whole-file search")
    ap.add_argument("--keep", action="store_true", help="keep the generated data")
    args = ap.parse_args()

    work = args.out.resolve() / "frames"
    root = work / "sessions"
    if work.exists():
        shutil.rmtree(work)
    big = root / "sess_big" / "activity-req_big.jsonl"
    rows: list[tuple[str, str]] = []

    def row(label: str, value: str) -> None:
        rows.append((label, value))
        print(f"  {label:<44} {value}", flush=True)

    print(f"Generating in {work} ...", flush=True)
    size, gen_s = generate_file(big, args.size_mb * MB, args.seed)
    row("generate frame file", f"{size / MB:,.0f} MB in {gen_s:.1f} s")
    dirs_s = generate_dirs(root, args.dirs, args.seed)
    row("generate session dirs", f"{args.dirs:,} dirs in {dirs_s:.1f} s")
    rss_before = maxrss_mb()
    rng = random.Random(args.seed)

    print("Reading ...", flush=True)
    cold = drop_cache(big)
    ms, page = timed(lambda: F.read_page(big, 0, args.limit))
    assert isinstance(page, F.FramePage)
    cache = "cold" if cold else "warm"
    row(f"first page, {cache} cache", f"{ms:.1f} ms ({len(page.frames)} frames)")
    warm = [timed(lambda: F.read_page(big, 0, args.limit))[0] for _ in range(5)]
    row("first page, warm (median of 5)", f"{statistics.median(warm):.2f} ms")

    def random_pages(label: str) -> None:
        times: list[float] = []
        realigned = 0
        for _ in range(args.pages):
            off = rng.randrange(size)
            ms, page = timed(lambda off=off: F.read_page(big, off, args.limit))
            assert isinstance(page, F.FramePage) and (page.frames or page.eof)
            times.append(ms)
            realigned += page.realigned
        row(
            f"random-offset page ({label}, n={args.pages})",
            f"median {statistics.median(times):.2f} ms, p95 {pct(times, 95):.2f} ms, "
            f"max {max(times):.2f} ms",
        )

    if cold:
        drop_cache(big)
        random_pages("cold")
    random_pages("warm")

    seq: list[float] = []
    off = rng.randrange(size // 2)
    for _ in range(100):
        ms, page = timed(lambda off=off: F.read_page(big, off, args.limit))
        assert isinstance(page, F.FramePage) and page.next_offset is not None
        seq.append(ms)
        off = page.next_offset
    row("100 consecutive pages", f"median {statistics.median(seq):.2f} ms")

    miss: list[float] = []
    for _ in range(10):
        off = rng.randrange(size - F.DEFAULT_SCAN_BUDGET * 2)
        ms, page = timed(lambda off=off: F.read_page(big, off, args.limit, q="no such needle"))
        assert isinstance(page, F.FramePage) and page.stop_reason == "scan_budget"
        miss.append(ms)
    budget_mb = F.DEFAULT_SCAN_BUDGET / MB
    med = statistics.median(miss)
    row(
        f"q miss, {budget_mb:.0f} MB scan budget (n=10)",
        f"median {med:.0f} ms ({budget_mb / (med / 1000):,.0f} MB/s), p95 {pct(miss, 95):.0f} ms",
    )
    hits: list[float] = []
    for _ in range(10):
        off = rng.randrange(size // 2)
        ms, page = timed(lambda off=off: F.read_page(big, off, args.limit, kind="tool.call"))
        assert isinstance(page, F.FramePage) and len(page.frames) == args.limit
        hits.append(ms)
    row(f"kind=tool.call, {args.limit} matches (n=10)", f"median {statistics.median(hits):.1f} ms")

    end = F.read_page(big, size - 64 * 1024, args.limit).end_offset
    polls = [timed(lambda: F.tail(big, end, last_size=size))[0] for _ in range(20)]
    row("tail poll at end (nothing new, n=20)", f"median {statistics.median(polls):.2f} ms")

    ms, listed = timed(lambda: F.list_requests(root, "sess_big"))
    assert isinstance(listed, list) and listed[0].last_ts_ms is not None
    row(f"list_requests ({size / MB:,.0f} MB file: first/last ts)", f"{ms:.2f} ms")

    if not args.no_full_scan:
        start = time.perf_counter()
        off, pages = 0, 0
        while True:
            page = F.read_page(big, off, args.limit, q="no such needle")
            pages += 1
            if page.next_offset is None:
                break
            off = page.next_offset
        secs = time.perf_counter() - start
        row(
            "whole-file q search (budget pages)",
            f"{secs:.1f} s for {size / MB:,.0f} MB ({size / MB / secs:,.0f} MB/s, {pages} calls)",
        )
    rss_after = maxrss_mb()
    row("peak RSS before reading / after reading", f"{rss_before:.1f} MB / {rss_after:.1f} MB")

    known = {f"sess_{i:06d}" for i in range(0, args.dirs, 2)}
    batches: list[int] = []

    def known_ids(names: list[str]) -> set[str]:
        batches.append(len(names))
        return {n for n in names if n in known}

    scans = []
    report = None
    for _ in range(3):
        batches.clear()
        ms, report = timed(lambda: F.scan_frame_dirs(root, known_ids))
        scans.append(ms)
    assert isinstance(report, F.OrphanReport)
    row(
        f"orphan scan, {args.dirs:,} dirs (best / worst of 3)",
        f"{min(scans):.0f} ms / {max(scans):.0f} ms "
        f"({len(report.orphans):,} orphans, {len(report.known):,} known, "
        f"{len(report.skipped)} skipped, {len(batches)} batches)",
    )

    if not args.keep:
        shutil.rmtree(work)
    print()
    print(f"{'measure':<46} result")
    print(f"{'-' * 46} {'-' * 50}")
    for label, value in rows:
        print(f"{label:<46} {value}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
