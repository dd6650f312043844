"""Rows and files the way a buggy runtime could leave them, planted into a demo home.

``make_demo_store --hostile`` calls :func:`plant_hostile` after the normal build so
anyone can see how every page shows data we did not make: SQLite's type affinity lets
any column hold any storage class, a crashed writer leaves odd rows, the file backend
leaves empty, cut or binary files, and names on disk need not be UTF-8. The property
tests (``tests/hostile/``) plant the same cases and generate many more.

Like the rest of :mod:`sessions_admin.demo` this is plain ``sqlite3``: it writes
only to a store it is handed (a demo or test store, never the runtime's).
"""

from __future__ import annotations

import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from sessions_admin.sqlhelpers import placeholders
from sessions_admin.store.spec import TABLE_COLUMNS

#: One value per SQLite storage class, and the edges that break naive code.
STORAGE_SAMPLES: dict[str, object] = {
    "null": None,
    "int-zero": 0,
    "int-negative": -1,
    "int-past-9999": 99_999_999_999_999_999,
    "int-max": 2**63 - 1,
    "int-min": -(2**63),
    "real": 1.5,
    "real-huge": 1e308,
    "text-not-number": "many",
    "text-unicode-digit": "²",
    "text-empty": "",
    "text-nul": "a\x00b",
    "blob-not-utf8": b"\xff\xfe\x00binary\x80\x81\x82",  # 12 bytes
}

#: JSON that is valid but hard to show: deep, wide, with huge numbers.
DEEP_JSON_LEVELS = 20_000
JSON_SAMPLES: dict[str, str] = {
    "deep-array": "[" * DEEP_JSON_LEVELS + "]" * DEEP_JSON_LEVELS,
    "deep-object": '{"a":' * DEEP_JSON_LEVELS + "1" + "}" * DEEP_JSON_LEVELS,
    "huge-int": "1" * 400,
    "huge-float": "1e999",
    "huge-in-object": '{"n": ' + "9" * 300 + ', "f": -1e400, "ok": false}',
    "nan": '{"x": NaN, "y": Infinity}',
    "broken": '{"a": [1, 2',
    "wide": "[" + ",".join(str(i) for i in range(20_000)) + "]",
}

SESSION_COLUMNS = TABLE_COLUMNS["sessions"]
# Without ``id``: AUTOINCREMENT gives each planted message its id.
MESSAGE_COLUMNS = tuple(c for c in TABLE_COLUMNS["session_messages"] if c != "id")
STATE_COLUMNS = TABLE_COLUMNS["session_state"]

#: The session every odd message and state row hangs off, with sane columns itself.
MESSAGES_SESSION = "hostile-messages"
STATE_SESSION = "hostile-state"
FRAMES_SESSION = "hostile-frames"
BASE_MS = 1_764_000_000_000


@dataclass(frozen=True)
class HostileSummary:
    sessions: int
    messages: int
    state_rows: int
    frame_entries: int


def sane_session(session_id: object) -> dict[str, object]:
    return {
        "id": session_id,
        "target_key": "hostile.target",
        "profile_key": "default",
        "principal_id": "user:hostile",
        "title": f"hostile {session_id!r}"[:80],
        "turn_count": 1,
        "created_at": BASE_MS,
        "last_active": BASE_MS + 1000,
    }


def sane_message(session_id: object) -> dict[str, object]:
    return {
        "session_id": session_id,
        "role": "tool",
        "content": "ok",
        "tool_name": "fs.read",
        "tool_call_id": "call_1",
        "tool_target": "system.fs",
        "tool_op": "read",
        "tool_args": '{"path": "/tmp"}',
        "tool_result": '{"ok": true}',
        "tool_duration_ms": 12,
        "trace_id": "4bf92f3577b34da6a3ce929d0e0e4736",
        "span_id": "00f067aa0ba902b7",
        "model_id": "model-x",
        "ts": BASE_MS + 500,
    }


def insert(conn: sqlite3.Connection, table: str, row: dict[str, object]) -> int:
    columns = ", ".join(row)
    marks = placeholders(len(row))
    return conn.execute(
        f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})", list(row.values())
    ).rowcount


#: Columns the DDL declares NOT NULL: SQLite enforces that one constraint, so a
#: NULL sample keeps the sane value there.
NOT_NULL = {"target_key", "profile_key", "created_at", "last_active"} | {
    "session_id",
    "role",
    "content",
    "ts",
    "key",
    "value",
    "updated_at",
}


def odd_row(sane: dict[str, object], columns: tuple[str, ...], value: object) -> dict[str, object]:
    """``sane`` with every column in ``columns`` holding ``value`` (NOT NULL kept)."""
    row = dict(sane)
    for column in columns:
        if value is not None or column not in NOT_NULL:
            row[column] = value
    return row


def plant_rows(conn: sqlite3.Connection) -> tuple[int, int, int]:
    """Every column of the three tables holding every sample; returns the row counts.

    One session (and one message, one state row) per sample holds it in every
    column at once, and one more per sample holds it in its key column alone,
    so the crawl and the demo stay small while each column meets each class.
    """
    sessions = messages = states = 0
    session_values = tuple(c for c in SESSION_COLUMNS if c != "id")
    message_values = tuple(c for c in MESSAGE_COLUMNS if c != "session_id")
    for name, value in STORAGE_SAMPLES.items():
        row = odd_row(sane_session(f"hostile-{name}"), session_values, value)
        sessions += insert(conn, "sessions", row)
        sessions += insert(conn, "sessions", sane_session(value))
    for session_id in (MESSAGES_SESSION, STATE_SESSION, FRAMES_SESSION):
        sessions += insert(conn, "sessions", sane_session(session_id))
    for name, value in STORAGE_SAMPLES.items():
        row = odd_row(sane_message(MESSAGES_SESSION), message_values, value)
        messages += insert(conn, "session_messages", row)
        # A message whose session id is odd: an orphan no page can name.
        messages += insert(conn, "session_messages", sane_message(value))
        row = {"session_id": STATE_SESSION, "key": f"odd-{name}"}
        row |= {"value": '{"ok": true}', "updated_at": BASE_MS}
        states += insert(conn, "session_state", odd_row(row, ("value", "updated_at"), value))
        states += insert(conn, "session_state", {**row, "key": value})
        states += insert(conn, "session_state", {**row, "session_id": value})
    for name, text in JSON_SAMPLES.items():
        row = odd_row(sane_message(MESSAGES_SESSION), ("tool_args", "tool_result", "content"), text)
        messages += insert(conn, "session_messages", row)
        states += insert(
            conn,
            "session_state",
            {"session_id": STATE_SESSION, "key": f"json-{name}", "value": text, "updated_at": 1},
        )
    # Ids at the ends of the rowid range; the largest last, since AUTOINCREMENT
    # cannot go past it.
    for message_id in (-5, 2**62):
        row = sane_message(MESSAGES_SESSION) | {"id": message_id}
        messages += insert(conn, "session_messages", row)
    return sessions, messages, states


#: Frame lines a runtime could leave: no ts/kind, wrong types, huge numbers, deep
#: nesting, CRLF, NUL bytes, binary, a cut last line.
FRAME_LINES: tuple[bytes, ...] = (
    b'{"ts": 1764000000000, "kind": "start", "traceId": "t1", "spanId": "s1"}\n',
    b'{"kind": "no-ts"}\n',
    b'{"ts": 1764000000001}\n',
    b'{"ts": "yesterday", "kind": 5, "name": ["x"], "duration": "long"}\n',
    b'{"ts": 99999999999999999999999999999, "kind": "far"}\n',
    b'{"ts": -99999999999999999, "timestamp": 1e308, "kind": null}\n',
    b'{"ts": NaN, "duration": Infinity, "traceId": 7, "spanId": {"a": 1}}\n',
    b'{"ts": 1764000000002, "n": ' + b"9" * 500 + b"}\n",
    b"[" * 5000 + b"]" * 5000 + b"\n",
    b'{"a":' * 5000 + b"1" + b"}" * 5000 + b"\n",
    b'{"ts": 1764000000003, "kind": "crlf"}\r\n',
    b'{"ts": 1764000000004, "kind": "nul\x00inside"}\n',
    b"\x00\x00\x00\x00\n",
    b"\xff\xfe binary \x80\n",
    b"\r\n",
    b"\n",
    b"42\n",
    b'"just a string"\n',
    b'{"ts": 1764000000005, "kind": "cut',
)


def _mkfifo(path: bytes) -> bool:
    try:
        os.mkfifo(path)
    except (AttributeError, OSError):  # no FIFOs on this platform or filesystem
        return False
    return True


def plant_frames(frames_root: Path) -> int:
    """Odd files and names in a session's directory and in the frames root."""
    root = os.fsencode(frames_root)
    session = os.path.join(root, FRAMES_SESSION.encode())
    os.makedirs(session, exist_ok=True)
    made = 0

    def write(path: bytes, data: bytes) -> None:
        nonlocal made
        with open(path, "wb") as handle:
            handle.write(data)
        made += 1

    write(os.path.join(session, b"activity-empty.jsonl"), b"")
    write(os.path.join(session, b"activity-odd.jsonl"), b"".join(FRAME_LINES))
    write(os.path.join(session, b"activity-crlf.jsonl"), b'{"ts": 1, "kind": "a"}\r\n' * 50)
    write(os.path.join(session, b"activity-binary.jsonl"), bytes(range(256)) * 8)
    write(os.path.join(session, b"activity-\xff\xfe.jsonl"), b'{"ts": 1}\n')
    write(os.path.join(session, b"not-a-frame-\xff.txt"), b"x")
    os.makedirs(os.path.join(session, b"activity-adir.jsonl"), exist_ok=True)
    made += 1
    made += _mkfifo(os.path.join(session, b"activity-fifo.jsonl"))
    # In the frames root: a directory whose name is not UTF-8, one holding only a
    # FIFO, one holding only symlinks, and a FIFO where a directory should be.
    bad = os.path.join(root, b"orphan-\xff\xfe")
    os.makedirs(bad, exist_ok=True)
    write(os.path.join(bad, b"activity-x.jsonl"), b'{"ts": 1}\n')
    fifo_only = os.path.join(root, b"orphan-fifo-only")
    os.makedirs(fifo_only, exist_ok=True)
    made += _mkfifo(os.path.join(fifo_only, b"activity-f.jsonl"))
    links_only = os.path.join(root, b"orphan-links-only")
    os.makedirs(links_only, exist_ok=True)
    for name, target in ((b"activity-l.jsonl", b"/etc/hostname"), (b"dangling", b"/nope")):
        link = os.path.join(links_only, name)
        if not os.path.lexists(link):
            os.symlink(target, link)
            made += 1
    made += _mkfifo(os.path.join(root, b"fifo-in-root"))
    # A directory named with white space alone: its link needs a name all the same.
    blank = os.path.join(root, b"  ")
    os.makedirs(blank, exist_ok=True)
    write(os.path.join(blank, b"activity-b.jsonl"), b'{"ts": 2}\n')
    return made


def plant_hostile(store_path: Path, frames_root: Path) -> HostileSummary:
    """Add the hostile rows to ``store_path`` and the odd files under ``frames_root``."""
    conn = sqlite3.connect(store_path)
    try:
        with conn:
            sessions, messages, states = plant_rows(conn)
    finally:
        conn.close()
    frames = plant_frames(frames_root)
    return HostileSummary(sessions, messages, states, frames)
