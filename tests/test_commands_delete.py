"""``manage.py delete_session`` and ``manage.py clear_sessions``; a bulk delete killed midway."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB, point_store_at

ROOT = Path(__file__).resolve().parent.parent
DAY_MS = 86_400_000


pytestmark = pytest.mark.usefixtures("fast_pacing")


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def populate(
    store,
    n: int,
    *,
    principal: str = "user:alice",
    target: str = "t.a",
    idle_days: int = 0,
    prefix: str = "s",
) -> list[str]:
    now = int(time.time() * 1000)
    ids = []
    for i in range(n):
        sid = store.add_session(
            f"{prefix}{i:03d}",
            principal=principal,
            target=target,
            last_active=now - idle_days * DAY_MS,
        )
        store.add_message(sid, ts=now - idle_days * DAY_MS)
        ids.append(sid)
    return ids


@STORE_DB
def test_delete_session_prints_the_counts_and_audits_the_command(store):
    sid = store.add_session("sess_cmd")
    store.add_message(sid)
    store.add_state(sid, "k", 1)
    out = run("delete_session", sid)
    assert "Deleted 1 sessions, 1 messages, 1 state rows." in out
    assert store.count("sessions") == 0
    audit = DeletionAudit.objects.get()
    assert audit.actor.startswith("manage.py delete_session") and audit.user is None


@STORE_DB
def test_delete_session_wipes_frames_on_request(store):
    sid = store.add_session("sess_f")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-1.jsonl").write_text("{}\n")
    out = run("delete_session", sid, "--wipe-frames")
    assert "Frames: 1 directories removed (3 bytes)." in out
    assert not (store.frames_root / sid).exists()


@STORE_DB
def test_delete_session_fails_with_a_sentence_for_a_missing_session(store):
    with pytest.raises(CommandError, match="No session with id 'nope'"):
        run("delete_session", "nope")


@STORE_DB
def test_delete_session_exits_non_zero_when_the_frames_are_refused(store, tmp_path):
    sid = store.add_session("linked")
    (tmp_path / "elsewhere").mkdir()
    (store.frames_root / sid).symlink_to(tmp_path / "elsewhere")
    with pytest.raises(CommandError) as caught:
        run("delete_session", sid, "--wipe-frames")
    assert caught.value.returncode == 3
    assert store.count("sessions") == 0 and (tmp_path / "elsewhere").is_dir()


@STORE_DB
def test_the_commands_refuse_in_read_only_mode(store):
    sid = store.add_session("ro")
    point_store_at(store.path, read_only=True)
    with pytest.raises(CommandError, match="read-only"):
        run("delete_session", sid)
    with pytest.raises(CommandError, match="read-only"):
        run("clear_sessions", "--all", "--yes")
    assert store.count("sessions") == 1
    assert set(DeletionAudit.objects.values_list("outcome", flat=True)) == {"refused"}


@STORE_DB
def test_clear_sessions_dry_run_prints_counts_and_deletes_nothing(store):
    populate(store, 4, principal="user:bob")
    out = run("clear_sessions", "--principal", "user:bob", "--dry-run")
    assert "Would delete 4 sessions, 4 messages, 0 state rows." in out
    assert store.count("sessions") == 4 and not DeletionAudit.objects.exists()


@STORE_DB
def test_clear_sessions_by_principal_deletes_only_theirs(store):
    populate(store, 3, principal="user:bob", prefix="b")
    populate(store, 2, principal="user:alice", prefix="a")
    out = run("clear_sessions", "--principal", "user:bob", "--yes")
    assert "Deleted 3 sessions, 3 messages, 0 state rows." in out
    assert store.execute("SELECT id FROM sessions ORDER BY id") == [("a000",), ("a001",)]
    assert DeletionAudit.objects.get().target["filter"] == {"principal": "user:bob"}


@STORE_DB
def test_clear_sessions_by_target_and_age_combines_the_filters(store):
    populate(store, 2, target="t.a", idle_days=100, prefix="old_a")
    populate(store, 2, target="t.b", idle_days=100, prefix="old_b")
    populate(store, 2, target="t.a", idle_days=1, prefix="new_a")
    run("clear_sessions", "--target", "t.a", "--older-than", "90d", "--yes")
    assert [r[0] for r in store.execute("SELECT id FROM sessions ORDER BY id")] == [
        "new_a000",
        "new_a001",
        "old_b000",
        "old_b001",
    ]


@STORE_DB
def test_clear_sessions_older_than_is_retention(store):
    populate(store, 2, idle_days=100, prefix="old")
    populate(store, 2, idle_days=1, prefix="new")
    out = run("clear_sessions", "--older-than", "90d", "--yes")
    assert "Deleted 2 sessions" in out
    assert DeletionAudit.objects.get().operation == "retention"


@STORE_DB
def test_clear_sessions_all_clears_everything_and_keeps_other_tables(store):
    populate(store, 5)
    before = store.schema_objects(), store.execute("SELECT * FROM memory_records")
    out = run("clear_sessions", "--all", "--yes")
    assert "Deleted 5 sessions, 5 messages" in out
    assert store.count("sessions") == store.count("session_messages") == 0
    assert (store.schema_objects(), store.execute("SELECT * FROM memory_records")) == before
    assert DeletionAudit.objects.get().operation == "clear_all"


@STORE_DB
def test_clear_sessions_refuses_without_yes_when_not_on_a_terminal(store, monkeypatch):
    populate(store, 1)
    monkeypatch.setattr("sys.stdin", StringIO(""))
    with pytest.raises(CommandError, match="pass --yes"):
        run("clear_sessions", "--all")
    assert store.count("sessions") == 1


@pytest.mark.parametrize(
    "args", [[], ["--all", "--principal", "x"], ["--older-than", "soon"], ["--older-than", "0d"]]
)
@STORE_DB
def test_clear_sessions_rejects_unclear_requests(store, args):
    with pytest.raises(CommandError):
        run("clear_sessions", *args, "--yes")


@STORE_DB
def test_clear_sessions_reports_and_removes_orphaned_children(store):
    populate(store, 1)
    with sqlite3.connect(store.path) as conn:
        conn.execute(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES ('ghost', 'user', 'x', 1)"
        )
    report = run("clear_sessions", "--orphans", "--dry-run")
    assert "1 messages and 0 state rows under 1 missing session ids" in report
    out = run("clear_sessions", "--orphans", "--yes")
    assert "Deleted 0 sessions, 1 messages, 0 state rows." in out
    assert store.count("sessions") == 1 and store.count("session_messages") == 1


KILLED_CHILD = textwrap.dedent("""
    import sys, time, django
    django.setup()
    from django.core.management import call_command
    call_command("migrate", verbosity=0, skip_checks=True)
    from sessions_admin import deletion
    deletion.bulk.INITIAL_ROW_BUDGET = deletion.bulk.MAX_ROW_BUDGET = 12
    deletion.bulk.MIN_PAUSE_MS = 20
    def tick(counts, batches):
        print(batches, flush=True)
    deletion.clear_all(actor=deletion.Actor(name="child"), on_batch=tick)
    print("finished", flush=True)
""")


@STORE_DB
def test_a_bulk_delete_killed_midway_leaves_every_session_whole_or_gone(store, tmp_path):
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO sessions (id, target_key, created_at, last_active) VALUES (?, 't', 0, 0)",
            [(f"k{i:04d}",) for i in range(600)],
        )
        conn.executemany(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES (?, 'user', 'x', 0)",
            [(f"k{i:04d}",) for i in range(600) for _ in range(5)],
        )
        conn.executemany(
            "INSERT INTO session_state (session_id, key, value, updated_at) "
            "VALUES (?, 'k', '1', 0)",
            [(f"k{i:04d}",) for i in range(600)],
        )
    (tmp_path / "var").mkdir()
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "sessions_admin.settings",
        "AGENTS_HOST_HOME": str(store.home),
        "SESSIONS_ADMIN_VAR_DIR": str(tmp_path / "var"),
        "DJANGO_SECRET_KEY": "k" * 50,
    }
    for name in (
        "SESSIONS_ADMIN_STORE",
        "SESSIONS_ADMIN_FRAMES_DIR",
        "SESSIONS_ADMIN_DJANGO_DB",
        "SESSIONS_ADMIN_READ_ONLY",
    ):
        env.pop(name, None)
    child = subprocess.Popen(
        [sys.executable, "-c", KILLED_CHILD],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        for line in child.stdout:
            if line.strip() == "20":
                child.send_signal(signal.SIGKILL)
                break
    finally:
        child.wait(timeout=60)
    assert child.returncode == -signal.SIGKILL, child.stderr.read()
    per_session = store.execute(
        "SELECT s.id, (SELECT COUNT(*) FROM session_messages m WHERE m.session_id = s.id), "
        "(SELECT COUNT(*) FROM session_state t WHERE t.session_id = s.id) FROM sessions s"
    )
    assert 0 < len(per_session) < 600
    assert {(m, s) for _, m, s in per_session} == {(5, 1)}
    assert store.count("session_messages") == 5 * len(per_session)
    assert store.count("session_state") == len(per_session)
    assert store.execute("PRAGMA integrity_check") == [("ok",)]
    # The killed run left its trace: an audit row still saying "running".
    django_db = sqlite3.connect(tmp_path / "var" / "django.sqlite3")
    rows = django_db.execute(
        "SELECT operation, outcome, actor FROM sessions_admin_deletionaudit"
    ).fetchall()
    assert rows == [("clear_all", "running", "child")]
