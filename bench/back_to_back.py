"""Benches of another commit and of this checkout, run in turns, and their figures side by side.

    .venv/bin/python bench/back_to_back.py 374563e --rounds 3 \\
        --bench "bench_review.py" --bench "bench_list.py --repeat 20"
    … --side-index var/bench/var-search    # a built side index, shared (same layout only)
    … --report var/b2b/run.log             # the table of a finished run's log, again

A machine's speed drifts by more than the 5 % a change is held to; two commits timed an
hour apart compare the hours, not the code. So each round runs every bench on the other
commit (a worktree at ``<dir>/base``) and then here, and the table gives each round's
figure with the change of the medians. Each side has a bench folder of its own
(``<dir>/bench-base``, ``<dir>/bench-head``) holding a link to the shared generated store,
so neither reads side files the other's code built; ``--side-index`` copies one built
index into the base's folder and links it into this one's, where its layout is the same.
A bench's rows are read from its printed table: the label, then the figure after it
(the median where the bench prints a count first; an export's messages a second).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.common import BENCH_DIR, SESSIONS  # noqa: E402

SIDES = ("base", "head")
_ROUND = re.compile(r"=== round (\d+) (base|head)")
_BENCH = re.compile(r"--- (\S+)")


def prepare(commit: str, work: Path, side_index: Path | None) -> dict[str, Path]:
    """The base's worktree, and each side's bench folder with the shared store linked in."""
    worktree = work / "base"
    if not worktree.exists():
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(worktree), commit], cwd=ROOT, check=True
        )
    else:
        subprocess.run(["git", "checkout", "--detach", commit], cwd=worktree, check=True)
    home = BENCH_DIR / f"home-{SESSIONS}"
    for side in SIDES:
        folder = work / f"bench-{side}"
        folder.mkdir(parents=True, exist_ok=True)
        link = folder / home.name
        if home.exists() and not link.exists():
            link.symlink_to(home.resolve())
        if side_index is not None and not (folder / side_index.name).exists():
            if side == "head":
                (folder / side_index.name).symlink_to(side_index.resolve())
            else:  # the base's code may write to it: a copy of the built files
                (folder / side_index.name).mkdir()
                for name in ("side.sqlite3", "side-text.sqlite3"):
                    shutil.copy2(side_index / name, folder / side_index.name / name)
    return {"base": worktree, "head": ROOT}


def run(commit: str, benches: list[str], rounds: int, work: Path, log: Path, side_index) -> None:
    checkouts = prepare(commit, work, side_index)
    with log.open("w") as out:
        for number in range(1, rounds + 1):
            for side in SIDES:
                out.write(f"=== round {number} {side} {time.strftime('%H:%M:%S')}\n")
                for bench in benches:
                    script, *args = shlex.split(bench)
                    env_var = work / f"{side}-{Path(script).stem}"
                    command = [sys.executable, f"bench/{script}", *args]
                    print(f"round {number} {side}: {' '.join(command[1:])}", flush=True)
                    done = subprocess.run(
                        command,
                        cwd=checkouts[side],
                        capture_output=True,
                        text=True,
                        env={
                            **os.environ,
                            "SESSIONS_ADMIN_BENCH_DIR": str(work / f"bench-{side}"),
                            "SESSIONS_ADMIN_VAR_DIR": str(env_var),
                        },
                    )
                    out.write(f"--- {Path(script).stem}\n{done.stdout}\n")
                    out.flush()
                    if done.returncode:
                        print(done.stderr[-2000:], file=sys.stderr)


def figure(bench: str, line: str) -> tuple[str, float] | None:
    """A table row's label and figure, or None for a line that is no row."""
    if not line.startswith("  ") or set(line.strip()) <= set("- "):
        return None
    parts = re.split(r"\s{2,}|\s\|\s", line.strip())
    label = parts[0]
    if bench == "bench_search":
        if " | " in line:  # the row as it went, printed again in the table at the end
            return None
        found = re.search(r"([\d.]+) / [\d.]+ ms", line)
        return (label, float(found.group(1))) if found else None
    if bench == "bench_sync":
        found = re.match(r"[\d.]+", parts[1]) if len(parts) > 1 else None
        return (label.split(":")[0], float(found.group())) if found else None
    try:
        if bench == "bench_frames_views":
            return label, float(parts[2])
        if re.fullmatch(r"json|jsonl|md", label):
            return f"export {label}, messages/s", float(parts[3].replace(",", ""))
        return label, float(parts[1])
    except (ValueError, IndexError):
        return None


def table(log: str) -> list[str]:
    """The Markdown table of a run's log: each round's figures and the medians' change."""
    seen: dict[tuple[str, str], dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    side = bench = ""
    for line in log.splitlines():
        if found := _ROUND.match(line):
            side = found.group(2)
        elif found := _BENCH.match(line):
            bench = found.group(1)
        elif side and (row := figure(bench, line)) is not None:
            seen[(bench, row[0])][side].append(row[1])
    lines = ["| bench | row | base | head | change |", "| --- | --- | --- | --- | --- |"]
    for (bench, label), sides in seen.items():
        base, head = sides["base"], sides["head"]
        if not base or not head or statistics.median(base) == 0:
            continue
        change = statistics.median(head) / statistics.median(base) - 1
        lines.append(
            f"| {bench} | {label} | {' / '.join(f'{x:g}' for x in base)} | "
            f"{' / '.join(f'{x:g}' for x in head)} | {change:+.1%} |"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("commit", nargs="?", help="the commit to compare this checkout with")
    parser.add_argument("--bench", action="append", default=[], help="a bench and its options")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=ROOT / "var" / "b2b")
    parser.add_argument("--side-index", type=Path, help="a built var-search folder to share")
    parser.add_argument("--report", type=Path, help="only print the table of this log")
    args = parser.parse_args()
    if args.report:
        print("\n".join(table(args.report.read_text())))
        return
    if not args.commit or not args.bench:
        parser.error("name the commit and at least one --bench")
    # Absolute: each side's benches run in its own checkout, where a relative path would
    # name another folder (and the base would generate a store of its own there).
    args.dir = args.dir.resolve()
    args.side_index = args.side_index.resolve() if args.side_index else None
    args.dir.mkdir(parents=True, exist_ok=True)
    log = args.dir / f"run-{time.strftime('%Y%m%d-%H%M%S')}.log"
    run(args.commit, args.bench, args.rounds, args.dir, log, args.side_index)
    print(f"\n{log}\n" + "\n".join(table(log.read_text())))


if __name__ == "__main__":
    main()
