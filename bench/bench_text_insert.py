"""What FTS5's trigram index costs on its own, per character: the floor under a first build.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_text_insert.py
    … bench_text_insert.py --messages 400000 --after 5000000

Reads ``--messages`` messages of the bench store from ``--after`` on, cuts
them into the text index's blocks as a pass does
(:func:`sessions_admin.ourdata.index.textindex.blocks`), then, untimed so
far, inserts those documents into a fresh ``search_text`` table (the same
FTS5 options, a build's settings) in a temporary folder, timing only the
inserts and their commits, a batch per transaction, at several hash sizes:

* by one statement over a JSON array, as the pass does (``json_each``);
* by ``executemany``, one row per block;
* in session order, as the pass did before 2026-12-02: FTS5 writes a segment
  whenever a rowid is lower than the last, so that cost 2.4 times as much.

It prints the CPU per character each way and what inserting the whole
store's text would cost at that rate: the part of a first build that no
change of ours can remove while every character of every transcript is
indexed. Beside it, the naive alternative in the same run: the same
characters as one document per message (the layout before blocks).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import bench_home, print_table, setup_django

#: Hash sizes tried (bytes): FTS5's default and the build's.
HASH_SIZES = (1024 * 1024, 8 * 1024 * 1024)


def read_batches(after: int, messages: int, batch: int) -> list[list]:
    from sessions_admin.store import feed

    batches, last = [], after
    while last < after + messages:
        rows = feed.messages_after(last, batch)
        if not rows:
            break
        batches.append(rows)
        last = rows[-1].id
    return batches


def insert_cpu(docs: list[list[tuple[int, int, str]]], hash_size: int, how: str) -> float:
    """CPU seconds to insert ``docs`` (a list of batches) into a fresh table."""
    from sessions_admin.ourdata import sidedb
    from sessions_admin.ourdata.index.textindex import FTS

    with tempfile.TemporaryDirectory() as folder:
        conn = sidedb.driver().connect(str(Path(folder) / "text.sqlite3"), isolation_level=None)
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute(f"CREATE VIRTUAL TABLE search_text {FTS}")
        for key, value in (("automerge", 0), ("crisismerge", 64), ("hashsize", hash_size)):
            conn.execute("INSERT INTO search_text (search_text, rank) VALUES (?, ?)", (key, value))
        started = time.process_time()
        for rows in docs:
            conn.execute("BEGIN")
            if how == "json":
                conn.execute(
                    "INSERT INTO search_text (rowid, body) "
                    "SELECT value ->> 0, value ->> 2 FROM json_each(?)",
                    [json.dumps(rows, ensure_ascii=False)],
                )
            else:
                conn.executemany(
                    "INSERT INTO search_text (rowid, body) VALUES (?, ?)",
                    [(high, body) for high, _, body in rows],
                )
            conn.execute("COMMIT")
        spent = time.process_time() - started
        conn.close()
    return spent


def naive_row(per_message: list, chars: int, whole: float) -> tuple[str, ...]:
    """The layout before blocks, in the same run (first and last: drift shows)."""
    cpu = insert_cpu(per_message, 8 * 1024 * 1024, "json")
    return (
        "naive: a document per message, json, 8 MB",
        f"{cpu:.2f} s",
        f"{cpu / chars * 1e9:.0f} ns",
        f"{cpu / chars * whole:.0f} CPU-s",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--messages", type=int, default=400_000)
    parser.add_argument("--after", type=int, default=5_000_000, help="first message id - 1")
    args = parser.parse_args()
    setup_django(bench_home())
    from sessions_admin.ourdata.index.text import document
    from sessions_admin.ourdata.index.textindex import blocks
    from sessions_admin.store import feed

    batches = read_batches(args.after, args.messages, 20_000)
    docs = [blocks(batch) for batch in batches]
    # Each block's session, by its rowid (its highest message id), and each
    # session's first appearance in its batch: the order blocks came in before.
    session_of: dict[int, int] = {}
    for batch in batches:
        first: dict[str, int] = {}
        for message in batch:
            first.setdefault(message.session_id, len(first))
            session_of[message.id] = first[message.session_id]
    per_message = [
        [
            (m.id, m.id, document((m.content, m.tool_name, m.tool_args, m.tool_result)))
            for m in batch
        ]
        for batch in batches
    ]
    messages = sum(len(batch) for batch in batches)
    chars = sum(len(body) for rows in docs for _, _, body in rows)
    store_messages = feed.last_message_id()
    whole = chars / messages * store_messages  # the store's text, at this sample's density
    print(
        f"{messages:,} messages (ids {args.after + 1:,} on) in "
        f"{sum(map(len, docs)):,} blocks: {chars:,} characters, {chars / messages:.0f} a message"
    )
    table = [naive_row(per_message, chars, whole)]
    # How the pass ordered them before 2026-12-02: by session (each session's runs together).
    by_session = [sorted(rows, key=lambda row: (session_of[row[0]], row[0])) for rows in docs]
    cpu = insert_cpu(by_session, 8 * 1024 * 1024, "json")
    table.append(
        (
            "blocks in session order, json, 8 MB",
            f"{cpu:.2f} s",
            f"{cpu / chars * 1e9:.0f} ns",
            f"{cpu / chars * whole:.0f} CPU-s",
        )
    )
    for hash_size in HASH_SIZES:
        for how in ("json", "executemany"):
            cpu = insert_cpu(docs, hash_size, how)
            table.append(
                (
                    f"blocks, {how}, hashsize {hash_size // 1024 // 1024} MB",
                    f"{cpu:.2f} s",
                    f"{cpu / chars * 1e9:.0f} ns",
                    f"{cpu / chars * whole:.0f} CPU-s",
                )
            )
    table.append(naive_row(per_message, chars, whole))
    print_table(
        f"FTS5 trigram inserts alone (the store: {store_messages:,} messages, "
        f"about {whole / 1e9:.2f} G characters)",
        ("inserted", "CPU", "CPU per character", "the whole store at this rate"),
        table,
    )


if __name__ == "__main__":
    main()
