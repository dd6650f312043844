"""Run every benchmark, one after the other, and keep their tables.

    .venv/bin/python bench/run.py            # or: make bench
    .venv/bin/python bench/run.py --fresh    # rebuild the 500,000-session store first

The first run generates var/bench/home-500000 (500,000 sessions, about ten
million messages, and sess_big with 50,000 messages: a few minutes, ~4.5 GB)
and the frame-file fixtures; later runs reuse them. The benchmarks run in
sequence because this machine has two cores. Output also goes to
var/bench/results.txt.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BENCHES = [
    ("session list", ["bench/bench_list.py"]),
    ("transcript", ["bench/bench_transcript.py"]),
    ("frames (store)", ["bench/bench_frames.py"]),
    ("frames (pages)", ["bench/bench_frames_views.py"]),
    ("deletes", ["bench/bench_deletes.py"]),
    ("search", ["bench/bench_search.py"]),
    # After search: it times passes on the side index search built (and edits the store).
    ("sync passes", ["bench/bench_sync.py"]),
    ("search index layouts", ["bench/bench_search_variants.py"]),
    ("the text index's inserts alone", ["bench/bench_text_insert.py"]),
    ("review (notes, labels, queues)", ["bench/bench_review.py"]),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--fresh", action="store_true", help="regenerate the benchmark store")
    parser.add_argument("--only", action="append", help="run only benches whose name has this")
    args = parser.parse_args()

    from bench.common import BENCH_DIR

    # Generate in a child process: Linux carries a process's peak RSS over to
    # the children it starts, which would inflate every benchmark's memory figure.
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from bench.common import bench_home; bench_home(fresh={args.fresh})",
        ],
        cwd=ROOT,
        check=True,
    )
    BENCH_DIR.mkdir(parents=True, exist_ok=True)
    results = BENCH_DIR / "results.txt"
    failed = []
    with results.open("w") as out:
        for name, command in BENCHES:
            if args.only and not any(word in name for word in args.only):
                continue
            header = f"\n===== {name}: {' '.join(command)} ====="
            print(header, flush=True)
            out.write(header + "\n")
            started = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, *command],
                cwd=ROOT,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
            assert process.stdout is not None
            for line in process.stdout:
                if "UserWarning: No directory at" in line or "mw_instance = middleware" in line:
                    continue
                print(line, end="", flush=True)
                out.write(line)
            if process.wait() != 0:
                failed.append(name)
            footer = f"({name}: {time.perf_counter() - started:.0f} s)"
            print(footer)
            out.write(footer + "\n")
    print(f"\nTables saved in {results}")
    if failed:
        sys.exit(f"failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
