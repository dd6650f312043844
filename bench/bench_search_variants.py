"""Which SQLite and which FTS5 layout for the side index: measured, not guessed.

    SESSIONS_ADMIN_BENCH_DIR=/work/bench .venv/bin/python bench/bench_search_variants.py
    .venv/bin/python bench/bench_search_variants.py --messages 300000

Indexes the first N messages of the bench store (folded text, as the real
index does) into each candidate layout, on the system SQLite (3.40) and on
pysqlite3-binary's bundled one, and prints build rate, size, query time for a
few substrings, and whether a deleted session's rows can be dropped without
their text (which the runtime has already deleted when we learn of it).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.common import BENCH_DIR, SESSIONS, bench_home, print_table

TRIGRAM = "tokenize='trigram case_sensitive 1'"
VARIANTS = [
    ("system 3.40, stores the text", "sqlite3", f"fts5(t, {TRIGRAM})"),
    (
        "system 3.40, contentless, detail=none",
        "sqlite3",
        f"fts5(t, content='', detail=none, {TRIGRAM})",
    ),
    (
        "3.51, contentless_delete, detail=full",
        "pysqlite3",
        f"fts5(t, content='', contentless_delete=1, {TRIGRAM})",
    ),
    (
        "3.51, contentless_delete, detail=column",
        "pysqlite3",
        f"fts5(t, content='', contentless_delete=1, detail=column, {TRIGRAM})",
    ),
    (
        "3.51, contentless_delete, detail=none (chosen)",
        "pysqlite3",
        f"fts5(t, content='', contentless_delete=1, detail=none, {TRIGRAM})",
    ),
]
QUERIES = ["timeout", "permission denied", "invoice-render.internal", "upstream timeout after 6s"]


def documents(store: Path, count: int) -> list[tuple[int, str]]:
    from sessions_admin.ourdata.index.text import document

    raw = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    rows = raw.execute(
        "SELECT id, content, tool_name, tool_args, tool_result FROM session_messages "
        "WHERE id <= ? ORDER BY id",
        (count,),
    )
    return [(row[0], document(row[1:])) for row in rows]


def query_text(ddl: str, text: str) -> str:
    from sessions_admin.ourdata.index.text import fts_query

    if "detail=" not in ddl:  # detail=full: FTS5 can match the phrase itself
        return '"' + text.replace('"', '""') + '"'
    return fts_query(text)


def measure(name: str, module_name: str, ddl: str, docs: list, workdir: Path) -> list[object]:
    module = sqlite3 if module_name == "sqlite3" else __import__("pysqlite3.dbapi2").dbapi2
    path = workdir / "variant.sqlite3"
    for part in workdir.glob("variant.sqlite3*"):
        part.unlink()
    conn = module.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute(f"CREATE VIRTUAL TABLE f USING {ddl}")
    started = time.perf_counter()
    for start in range(0, len(docs), 20_000):
        conn.execute("BEGIN")
        conn.executemany("INSERT INTO f (rowid, t) VALUES (?, ?)", docs[start : start + 20_000])
        conn.execute("COMMIT")
    rate = len(docs) / (time.perf_counter() - started)
    conn.execute("INSERT INTO f (f) VALUES ('optimize')")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = path.stat().st_size
    times = []
    for text in QUERIES:
        match = query_text(ddl, text)
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            conn.execute(
                "SELECT rowid FROM f WHERE f MATCH ? ORDER BY rowid DESC LIMIT 200", (match,)
            ).fetchall()
            samples.append((time.perf_counter() - t0) * 1000)
        times.append(f"{statistics.median(samples):.2f}")
    try:
        conn.execute("DELETE FROM f WHERE rowid = ?", (docs[0][0],))
        deletes = "yes"
    except Exception as exc:  # the error names why
        deletes = f"no ({str(exc)[:40]})"
    conn.close()
    return [
        name,
        f"{module.sqlite_version}",
        f"{rate:,.0f}",
        f"{size / 1e6:.0f} MB",
        " / ".join(times),
        deletes,
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--messages", type=int, default=300_000)
    args = parser.parse_args()
    home = bench_home(SESSIONS)
    store = home / "data" / "agents" / "store.db"
    workdir = BENCH_DIR / "var-search-variants"
    workdir.mkdir(parents=True, exist_ok=True)
    docs = documents(store, args.messages)
    text_mb = sum(len(d.encode()) for _, d in docs) / 1e6
    share = store.stat().st_size * len(docs) / 10_012_038 / 1e6
    rows = [measure(name, module, ddl, docs, workdir) for name, module, ddl in VARIANTS]
    for part in workdir.glob("variant.sqlite3*"):
        part.unlink()
    print_table(
        f"FTS5 layouts over the first {len(docs):,} messages ({text_mb:.0f} MB of folded text; "
        f"their share of the store ~{share:.0f} MB; shared 2-core machine)",
        [
            "layout",
            "SQLite",
            "msg/s",
            "size",
            f"ms per query: {' / '.join(QUERIES)}",
            "drops a deleted row",
        ],
        rows,
    )


if __name__ == "__main__":
    main()
