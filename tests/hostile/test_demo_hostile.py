"""``make_demo_store --hostile`` plants every hostile case into the demo home."""

from __future__ import annotations

import os
import sqlite3
import stat

from django.core.management import call_command

from sessions_admin.demo.hostile import STORAGE_SAMPLES


def test_hostile_plants_every_storage_class_in_every_column(tmp_path):
    home = tmp_path / "home"
    call_command("make_demo_store", str(home), "--sessions", "5", "--hostile", verbosity=0)
    conn = sqlite3.connect(home / "data" / "agents" / "store.db")
    # TEXT affinity turns numbers into text; INTEGER columns keep every class.
    integer = {"integer", "real", "text", "blob"}
    for table, column, wanted in (
        ("sessions", "title", {"text", "blob", "null"}),
        ("sessions", "principal_id", {"text", "blob", "null"}),
        ("sessions", "turn_count", integer | {"null"}),
        ("sessions", "created_at", integer),
        ("sessions", "last_active", integer),
        ("session_messages", "content", {"text", "blob"}),
        ("session_messages", "tool_args", {"text", "blob", "null"}),
        ("session_messages", "tool_duration_ms", integer | {"null"}),
        ("session_messages", "ts", integer),
        ("session_state", "value", {"text", "blob"}),
        ("session_state", "updated_at", integer),
        ("session_state", "key", {"text", "blob"}),
    ):
        classes = {row[0] for row in conn.execute(f"SELECT typeof({column}) FROM {table}")}
        assert wanted <= classes, (table, column, classes)
    assert conn.execute("SELECT COUNT(*) FROM sessions WHERE id IS NULL").fetchone()[0] == 1
    assert (
        conn.execute("SELECT COUNT(*) FROM sessions WHERE turn_count = 'many'").fetchone()[0] == 1
    )
    conn.close()
    frames = os.fsencode(home / "sessions")
    assert stat.S_ISFIFO(os.lstat(os.path.join(frames, b"fifo-in-root")).st_mode)
    assert os.path.isdir(os.path.join(frames, b"orphan-\xff\xfe"))
    odd = os.path.join(frames, b"hostile-frames")
    assert os.path.getsize(os.path.join(odd, b"activity-empty.jsonl")) == 0
    assert os.path.isdir(os.path.join(odd, b"activity-adir.jsonl"))
    assert len(STORAGE_SAMPLES) >= 12
