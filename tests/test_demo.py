"""Tests for sessions_admin.demo: the demo host-home generator.

Plain pytest, no Django database. Runs either inside the normal suite or
alone: ``pytest tests/test_demo.py -p no:django --noconftest``.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest

from sessions_admin import demo
from sessions_admin.demo import BIG_SESSION_ID, SCHEMA_PATH, DemoSummary, build_demo_home

NOW_MS = 1_750_000_000_000  # fixed, so builds are comparable
SMALL = {"sessions": 60, "messages_per_session": 12, "seed": 3, "now_ms": NOW_MS}
BIG_MESSAGES = 500
NEIGHBOUR_TABLES = {"memory_records", "memory_embeddings"}
SESSION_TABLES = ("sessions", "session_messages", "session_state")
PROFILES = {"default", "explain", "edit", "propose", "evaluate", "monitor"}


# --- helpers -------------------------------------------------------------------------


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.row_factory = sqlite3.Row
    return conn


def dump_tables(store: Path) -> dict[str, list[tuple]]:
    """Every row of the three session tables, in storage order."""
    with sqlite3.connect(store) as conn:
        return {
            t: conn.execute(f"SELECT * FROM {t} ORDER BY rowid").fetchall() for t in SESSION_TABLES
        }


def schema_objects(conn: sqlite3.Connection) -> set[tuple[str, str, str, str | None]]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master")
    return {tuple(r) for r in rows}


def frame_files(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under root."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


# --- a shared store, built once ---------------------------------------------------------


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> DemoSummary:
    home = tmp_path_factory.mktemp("demo") / "home"
    return build_demo_home(home, big_session_messages=BIG_MESSAGES, frames_fraction=0.5, **SMALL)


@pytest.fixture
def db(built: DemoSummary) -> Iterator[sqlite3.Connection]:
    conn = connect(built.store_path)
    yield conn
    conn.close()


# --- determinism -----------------------------------------------------------------------


def test_same_seed_and_now_give_identical_tables_and_frames(tmp_path: Path) -> None:
    first = build_demo_home(tmp_path / "a", **SMALL)
    second = build_demo_home(tmp_path / "b", **SMALL)
    assert dump_tables(first.store_path) == dump_tables(second.store_path)
    assert frame_files(first.frames_root) == frame_files(second.frames_root)
    assert first.messages > 0


def test_a_different_seed_gives_different_tables(tmp_path: Path) -> None:
    first = build_demo_home(tmp_path / "a", **SMALL)
    other = build_demo_home(tmp_path / "b", **{**SMALL, "seed": SMALL["seed"] + 1})
    first_rows, other_rows = dump_tables(first.store_path), dump_tables(other.store_path)
    for table in SESSION_TABLES:
        assert first_rows[table] != other_rows[table], table


def test_tables_do_not_depend_on_the_frames_fraction(tmp_path: Path) -> None:
    with_frames = build_demo_home(tmp_path / "a", frames_fraction=1.0, **SMALL)
    without = build_demo_home(tmp_path / "b", frames_fraction=0.0, **SMALL)
    assert dump_tables(with_frames.store_path) == dump_tables(without.store_path)
    assert without.frame_files == 0
    assert list(without.frames_root.iterdir()) == []


# --- refusing to overwrite, failing cleanly ----------------------------------------------


def test_refuses_to_overwrite_an_existing_store(tmp_path: Path) -> None:
    summary = build_demo_home(tmp_path / "home", **SMALL)
    before = summary.store_path.read_bytes()
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        build_demo_home(tmp_path / "home", **{**SMALL, "seed": 99})
    assert summary.store_path.read_bytes() == before


def test_refuses_even_a_store_it_did_not_build(tmp_path: Path) -> None:
    store = tmp_path / "home" / "data" / "agents" / "store.db"
    store.parent.mkdir(parents=True)
    store.write_bytes(b"precious")
    with pytest.raises(FileExistsError, match=str(store)):
        build_demo_home(tmp_path / "home", **SMALL)
    assert store.read_bytes() == b"precious"


def test_refuses_a_home_with_a_leftover_wal_file(tmp_path: Path) -> None:
    # SQLite would replay a stale -wal into the new store on first open.
    wal = tmp_path / "home" / "data" / "agents" / "store.db-wal"
    wal.parent.mkdir(parents=True)
    wal.write_bytes(b"stale")
    with pytest.raises(FileExistsError, match="refusing to overwrite"):
        build_demo_home(tmp_path / "home", **SMALL)
    assert not (wal.parent / "store.db").exists()


def test_a_failed_build_leaves_no_store_behind(tmp_path: Path) -> None:
    def explode(done: int) -> None:
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        build_demo_home(tmp_path / "home", progress=explode, **SMALL)
    agents_dir = tmp_path / "home" / "data" / "agents"
    assert list(agents_dir.iterdir()) == []
    assert build_demo_home(tmp_path / "home", **SMALL).messages > 0


# --- schema ------------------------------------------------------------------------------


def test_schema_objects_are_those_of_schema_sql_plus_the_neighbour_tables(
    db: sqlite3.Connection,
) -> None:
    reference = sqlite3.connect(":memory:")
    reference.executescript(SCHEMA_PATH.read_text())
    expected = schema_objects(reference)
    actual = schema_objects(db)
    neighbours = {o for o in actual if o[2] in NEIGHBOUR_TABLES}
    assert actual - neighbours == expected
    assert {(o[0], o[1]) for o in neighbours} == {("table", t) for t in NEIGHBOUR_TABLES}
    assert {o[0] for o in expected} >= {"table", "index", "trigger"}


def test_neighbour_tables_hold_a_handful_of_rows(db: sqlite3.Connection) -> None:
    records = db.execute("SELECT count(*) FROM memory_records").fetchone()[0]
    embeddings = db.execute(
        "SELECT count(*), min(length(vector)) FROM memory_embeddings"
    ).fetchone()
    assert 3 <= records <= 50
    assert embeddings[0] == records and embeddings[1] > 0


def test_store_has_user_version_2_and_runs_in_wal_mode(db: sqlite3.Connection) -> None:
    assert db.execute("PRAGMA user_version").fetchone()[0] == 2
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_the_trigger_is_live_after_the_build(built: DemoSummary, tmp_path: Path) -> None:
    copy = tmp_path / "store.db"
    copy.write_bytes(built.store_path.read_bytes())
    with sqlite3.connect(copy) as conn:
        sid, turns = conn.execute(
            "SELECT id, turn_count FROM sessions WHERE id != ? LIMIT 1", (BIG_SESSION_ID,)
        ).fetchone()
        conn.execute(
            "INSERT INTO session_messages (session_id, role, content, ts)"
            " VALUES (?, 'user', 'hi', ?)",
            (sid, NOW_MS + 1),
        )
        row = conn.execute("SELECT turn_count, last_active FROM sessions WHERE id = ?", (sid,))
        assert row.fetchone() == (turns + 1, NOW_MS + 1)


# --- content -----------------------------------------------------------------------------


def test_all_six_profiles_appear(tmp_path: Path) -> None:
    summary = build_demo_home(
        tmp_path / "home", **{**SMALL, "sessions": 300, "messages_per_session": 2}
    )
    with sqlite3.connect(summary.store_path) as conn:
        profiles = {r[0] for r in conn.execute("SELECT DISTINCT profile_key FROM sessions")}
    assert profiles == PROFILES


def test_sessions_look_like_the_runtime_s(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT * FROM sessions WHERE id != ?", (BIG_SESSION_ID,)).fetchall()
    assert len(rows) == SMALL["sessions"]
    assert all(r["id"].startswith("sess_") and len(r["id"]) == 29 for r in rows)
    assert len({r["target_key"] for r in rows}) >= 4
    assert all("." in r["target_key"] for r in rows)
    assert all(
        r["principal_id"] is None or r["principal_id"].split(":")[0] in {"user", "agent"}
        for r in rows
    )
    assert all(
        NOW_MS - 120 * 86_400_000 < r["created_at"] <= r["last_active"] <= NOW_MS for r in rows
    )


def test_tool_messages_carry_parsable_json_args_and_results(db: sqlite3.Connection) -> None:
    tools = db.execute("SELECT * FROM session_messages WHERE role = 'tool'").fetchall()
    assert tools
    for m in tools:
        assert m["tool_name"] and m["tool_target"] and m["tool_op"]
        assert isinstance(json.loads(m["tool_args"]), dict)
        result = json.loads(m["tool_result"])
        assert isinstance(result["ok"], bool)
        assert m["tool_duration_ms"] > 0
        assert len(m["trace_id"]) == 32 and len(m["span_id"]) == 16
    # Each tool message answers the assistant message that asked for it.
    unmatched = db.execute(
        "SELECT count(*) FROM session_messages t WHERE t.role = 'tool' AND NOT EXISTS ("
        " SELECT 1 FROM session_messages a WHERE a.role = 'assistant'"
        " AND a.session_id = t.session_id AND a.tool_call_id = t.tool_call_id"
        " AND a.trace_id = t.trace_id AND a.ts < t.ts)"
    ).fetchone()[0]
    assert unmatched == 0


def test_only_assistant_messages_name_a_model(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT role, count(*), count(model_id) FROM session_messages GROUP BY role"
    ).fetchall()
    by_role = {r[0]: (r[1], r[2]) for r in rows}
    assert set(by_role) == {"user", "assistant", "tool"}
    assert by_role["assistant"][0] == by_role["assistant"][1]
    assert by_role["user"][1] == by_role["tool"][1] == 0


def test_turn_count_equals_the_number_of_user_messages(db: sqlite3.Connection) -> None:
    wrong = db.execute(
        "SELECT count(*) FROM sessions s WHERE turn_count != ("
        " SELECT count(*) FROM session_messages m WHERE m.session_id = s.id AND m.role = 'user')"
    ).fetchone()[0]
    assert wrong == 0


def test_last_active_equals_the_last_message_timestamp(db: sqlite3.Connection) -> None:
    wrong = db.execute(
        "SELECT count(*) FROM sessions s WHERE last_active != coalesce("
        " (SELECT max(ts) FROM session_messages m WHERE m.session_id = s.id), created_at)"
    ).fetchone()[0]
    assert wrong == 0


def test_titles_come_from_the_first_user_message(db: sqlite3.Connection) -> None:
    rows = db.execute(
        "SELECT s.title, (SELECT content FROM session_messages m WHERE m.session_id = s.id"
        " ORDER BY ts LIMIT 1) AS first FROM sessions s WHERE s.title IS NOT NULL"
    ).fetchall()
    assert rows
    for title, first in rows:
        assert title.rstrip("…") in first


def test_state_rows_hold_json_and_belong_to_sessions(db: sqlite3.Connection) -> None:
    rows = db.execute("SELECT * FROM session_state").fetchall()
    keys = {r["key"] for r in rows}
    assert {"repl_state", "snapshot"} <= keys
    for r in rows:
        json.loads(r["value"])
    orphans = db.execute(
        "SELECT count(*) FROM session_state WHERE session_id NOT IN (SELECT id FROM sessions)"
    ).fetchone()[0]
    assert orphans == 0


def test_summary_counts_match_the_store(built: DemoSummary, db: sqlite3.Connection) -> None:
    def count(table: str) -> int:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]

    assert built.sessions == count("sessions") == SMALL["sessions"] + 1
    assert built.messages == count("session_messages")
    assert built.state_rows == count("session_state")
    assert built.frame_files == sum(1 for p in built.frames_root.rglob("*") if p.is_file())
    assert built.seconds > 0


# --- frames ------------------------------------------------------------------------------


def test_frame_files_are_valid_jsonl(built: DemoSummary) -> None:
    files = sorted(built.frames_root.glob("*/activity-*.jsonl"))
    assert files
    for path in files:
        lines = path.read_text(encoding="utf-8").splitlines()
        assert lines, path
        for line in lines:
            frame = json.loads(line)
            assert isinstance(frame, dict)
            assert isinstance(frame.get("ts", frame.get("timestamp")), int)
            assert frame.get("kind", frame.get("type"))


def test_frames_share_trace_ids_with_their_session_s_messages(
    built: DemoSummary, db: sqlite3.Connection
) -> None:
    checked = 0
    for directory in built.frames_root.iterdir():
        traces = {
            r[0]
            for r in db.execute(
                "SELECT DISTINCT trace_id FROM session_messages WHERE session_id = ?",
                (directory.name,),
            )
        }
        if not traces:
            continue  # an orphan directory
        for path in directory.glob("activity-*.jsonl"):
            frames = [json.loads(line) for line in path.read_text().splitlines()]
            assert {f["traceId"] for f in frames} <= traces
            assert [f["kind"] for f in frames][0] == "request.start"
            assert [f["kind"] for f in frames][-1] == "request.end"
            checked += 1
    assert checked > 0


def test_some_frame_directories_belong_to_no_session(
    built: DemoSummary, db: sqlite3.Connection
) -> None:
    ids = {r[0] for r in db.execute("SELECT id FROM sessions")}
    dirs = {d.name for d in built.frames_root.iterdir()}
    orphans = dirs - ids
    assert 1 <= len(orphans) <= 10
    assert all(name.startswith("sess_") for name in orphans)


def test_frames_are_capped_for_large_stores(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The real threshold is 20,000 sessions; scaled down to keep the test fast.
    monkeypatch.setattr(demo.rows, "FRAMES_CAP_THRESHOLD", 40)
    monkeypatch.setattr(demo.rows, "FRAMES_CAP_SESSIONS", 5)
    summary = build_demo_home(tmp_path / "home", frames_fraction=1.0, **SMALL)
    with sqlite3.connect(summary.store_path) as conn:
        ids = {r[0] for r in conn.execute("SELECT id FROM sessions")}
    with_frames = {d.name for d in summary.frames_root.iterdir()} & ids
    assert 1 <= len(with_frames) <= 5


# --- the big session ---------------------------------------------------------------------


def test_big_session_gets_its_message_count(db: sqlite3.Connection) -> None:
    count, users = db.execute(
        "SELECT count(*), count(*) FILTER (WHERE role = 'user') FROM session_messages"
        " WHERE session_id = ?",
        (BIG_SESSION_ID,),
    ).fetchone()
    session = db.execute("SELECT * FROM sessions WHERE id = ?", (BIG_SESSION_ID,)).fetchone()
    assert count == BIG_MESSAGES
    assert session["turn_count"] == users > 0
    assert session["created_at"] < session["last_active"] <= NOW_MS


def test_no_big_session_unless_asked_for(tmp_path: Path) -> None:
    summary = build_demo_home(tmp_path / "home", **SMALL)
    with sqlite3.connect(summary.store_path) as conn:
        assert (
            conn.execute(
                "SELECT count(*) FROM sessions WHERE id = ?", (BIG_SESSION_ID,)
            ).fetchone()[0]
            == 0
        )


# --- the management command ----------------------------------------------------------------


def run_command(*argv: str) -> str:
    """Run make_demo_store in-process without touching Django's database connections."""
    from sessions_admin.management.commands.make_demo_store import Command

    out = StringIO()
    command = Command(stdout=out, stderr=StringIO())
    options = vars(command.create_parser("manage.py", "make_demo_store").parse_args(argv))
    command.execute(**options)
    return out.getvalue()


def test_the_command_builds_a_store_and_reports_its_speed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    output = run_command(
        str(home),
        "--sessions",
        "20",
        "--messages-per-session",
        "4",
        "--seed",
        "5",
        "--big-session",
        "50",
        "--now-ms",
        str(NOW_MS),
    )
    assert "21 sessions" in output
    assert "messages/s" in output
    assert (home / "data" / "agents" / "store.db").is_file()


def test_the_command_refuses_to_overwrite_an_existing_store(tmp_path: Path) -> None:
    from django.core.management.base import CommandError

    build_demo_home(tmp_path / "home", **SMALL)
    with pytest.raises(CommandError, match="refusing to overwrite"):
        run_command(str(tmp_path / "home"), "--sessions", "1")
