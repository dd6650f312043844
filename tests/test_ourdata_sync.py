"""sync_index: incremental, resumable, forgets deleted sessions, never touches the store."""

from __future__ import annotations

import hashlib
import io
import sqlite3

import pytest
from django.core.management import CommandError, call_command

from sessions_admin import deletion
from sessions_admin.deletion import Actor
from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from tests.conftest import STORE_DB
from tests.indexdata import fill, indexed_ids, matching


@STORE_DB
def test_new_messages_appear_after_a_sync(store, var_dir):
    sid = store.add_session("sess_a")
    store.add_message(sid, "user", "first words")
    sync.sync_once()
    assert matching("first") and not matching("later")
    new = store.add_message(sid, "assistant", "later words")
    report = sync.sync_once()
    assert report.messages == 1
    assert matching("later") == [new]


@STORE_DB
def test_sessions_deleted_by_the_runtime_disappear_after_a_sync(store, var_dir):
    fill(store)
    sync.sync_once()
    assert matching("wombat1")
    # The runtime's own cascade, behind the dashboard's back.
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_1'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_1'")
    report = sync.sync_once()
    assert report.sessions_forgotten == 1
    assert matching("wombat1") == []
    assert matching("wombat0") and matching("wombat2")


@STORE_DB
def test_a_dashboard_delete_drops_the_sessions_rows_at_once(store, var_dir):
    fill(store)
    sync.sync_once()
    deletion.delete_session("sess_2", actor=Actor.command("test"))
    assert matching("wombat2") == []
    side = sidedb.connect()
    assert (
        side.execute("SELECT COUNT(*) FROM search_sessions WHERE id = 'sess_2'").fetchone()[0] == 0
    )
    side.close()


@STORE_DB
def test_forget_sessions_without_a_side_database_does_nothing_and_succeeds(store, var_dir):
    assert sync.forget_sessions(["sess_x"]) is True
    assert not sidedb.exists()


@STORE_DB
def test_an_interrupted_build_resumed_gives_the_same_index(store, var_dir, settings, tmp_path):
    fill(store, sessions=6, per_session=7)
    calls = []
    first = sync.sync_once(
        batch_size=5, should_stop=lambda: len(calls) >= 2, on_progress=calls.append
    )
    assert first.interrupted and first.messages == 10
    sync.sync_once(batch_size=5)
    resumed = (indexed_ids(), matching("session 3"), matching("wombat5"))
    settings.VAR_DIR = tmp_path / "other"
    sync.sync_once()
    assert (indexed_ids(), matching("session 3"), matching("wombat5")) == resumed
    assert len(resumed[0]) == 42


@STORE_DB
def test_a_failing_listener_rolls_the_whole_batch_back(store, var_dir, monkeypatch):
    fill(store, sessions=1, per_session=3)

    def broken(side, batch):
        raise RuntimeError("listener bug")

    monkeypatch.setattr(SEARCH_INDEX, "add_messages", broken)
    with pytest.raises(RuntimeError):
        sync.sync_once()
    monkeypatch.undo()
    side = sidedb.connect()
    assert sync.read_state(side).last_id == sync.SyncState().last_id  # none taken in
    side.close()
    assert sync.sync_once().messages == 3


@STORE_DB
def test_rebuild_starts_over(store, var_dir):
    fill(store, sessions=2, per_session=2)
    sync.sync_once()
    sync.rebuild()
    assert indexed_ids() == []
    assert sync.sync_once().messages == 4


@STORE_DB
def test_indexing_leaves_the_store_file_schema_and_folder_unchanged(store, var_dir):
    fill(store)
    folder = sorted(p.name for p in store.path.parent.iterdir())
    before = (store.schema_objects(), hashlib.sha256(store.path.read_bytes()).hexdigest())
    call_command("sync_index", stdout=io.StringIO())
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_0'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_0'")
    before = (store.schema_objects(), hashlib.sha256(store.path.read_bytes()).hexdigest())
    call_command("sync_index", stdout=io.StringIO())
    call_command("sync_index", "--rebuild", stdout=io.StringIO())
    from django.db import connections

    connections["agents"].close()
    assert (store.schema_objects(), hashlib.sha256(store.path.read_bytes()).hexdigest()) == before
    assert sorted(p.name for p in store.path.parent.iterdir()) == folder
    assert sidedb.side_path().parent == var_dir


@STORE_DB
def test_the_command_reports_what_it_did(store, var_dir):
    fill(store, sessions=2, per_session=3)
    out = io.StringIO()
    call_command("sync_index", stdout=out)
    assert "Indexed 6 new messages" in out.getvalue()
    assert "up to message #6" in out.getvalue()


def test_the_progress_line_shows_rate_and_eta():
    from sessions_admin.management.commands.sync_index import progress_line

    line = progress_line(sync.Progress(done=50_000, total=200_000, elapsed_s=2.0, last_id=1))
    assert "25%" in line and "50,000/200,000" in line and "25,000/s" in line
    assert "ETA 6s" in line


def test_the_side_database_runs_an_sqlite_with_contentless_delete():
    version = tuple(int(p) for p in sidedb.sqlite_version().split("."))
    assert version >= sidedb.MIN_SQLITE
    assert sqlite3  # the system one may be older: that is why sidedb picks a driver


@STORE_DB
def test_a_long_pass_ends_by_merging_the_index_and_still_finds_everything(
    store, var_dir, monkeypatch
):
    fill(store, sessions=3, per_session=5)
    monkeypatch.setattr(sync.passes, "LONG_PASS", 10)
    assert sync.sync_once(batch_size=4).messages == 15
    assert matching("wombat2") and len(matching("session 1")) == 5
    side = sidedb.connect()
    assert side.execute("PRAGMA freelist_count").fetchone()[0] == 0  # pages given back
    side.close()


@STORE_DB
def test_follow_keeps_syncing_until_stopped(store, var_dir, monkeypatch):
    from sessions_admin.management.commands import sync_index

    fill(store, sessions=1, per_session=2)
    naps = []
    real_sleep = sync_index.time.sleep

    def nap(seconds):
        naps.append(seconds)
        if len(naps) == 1:
            store.add_message("sess_0", "user", "arrived while following")
        elif matching("while following"):
            raise KeyboardInterrupt  # Ctrl-C while waiting for the next pass
        real_sleep(seconds)

    monkeypatch.setattr(sync_index.time, "sleep", nap)
    out = io.StringIO()
    call_command("sync_index", "--follow", "--interval", "0.01", stdout=out)
    assert "Indexed 2 new messages" in out.getvalue()
    assert "Indexed 1 new messages" in out.getvalue()
    assert "Stopped" in out.getvalue()
    assert matching("while following")


@STORE_DB
def test_it_refuses_a_data_folder_that_is_the_stores_own(store, settings):
    settings.VAR_DIR = store.path.parent
    err = io.StringIO()
    with pytest.raises(CommandError, match="store's own folder"):
        call_command("sync_index", stdout=io.StringIO(), stderr=err)
    assert sorted(p.name for p in store.path.parent.iterdir()) == ["store.db"]


@STORE_DB
def test_a_side_database_of_another_layout_asks_for_a_rebuild_and_pages_ignore_it(
    store, var_dir, staff_client
):
    fill(store, sessions=1, per_session=1)
    sync.sync_once()
    side = sidedb.connect()
    side.execute("PRAGMA user_version = 99")
    side.close()
    with pytest.raises(CommandError, match="--rebuild"):
        call_command("sync_index", stdout=io.StringIO())
    assert "No search index yet" in staff_client.get("/search/?q=wombat0").content.decode()
    call_command("sync_index", "--rebuild", stdout=io.StringIO())
    assert matching("wombat0")
