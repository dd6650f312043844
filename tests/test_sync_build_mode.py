"""A long pass runs in build mode (no fsync per batch) and stays exact and resumable."""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from tests.conftest import STORE_DB
from tests.indexdata import fill, indexed_ids, matching


@pytest.fixture
def build_mode(monkeypatch):
    """Every pass of more than 10 messages is a build (the real threshold is a million)."""
    monkeypatch.setattr(sync.passes, "LONG_PASS", 10)


def _index_names() -> set[str]:
    side = sidedb.connect()
    try:
        return {row[0] for row in side.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    finally:
        side.close()


@STORE_DB
def test_an_interrupted_build_keeps_its_index_and_resumes_to_the_same_result(
    store, var_dir, settings, tmp_path, build_mode
):
    fill(store, sessions=6, per_session=7)
    seen = []
    first = sync.sync_once(
        batch_size=5, should_stop=lambda: len(seen) >= 3, on_progress=seen.append
    )
    assert first.interrupted and first.messages == 15
    assert "search_messages_by_session" in _index_names()
    sync.sync_once(batch_size=5)
    resumed = (indexed_ids(), matching("session 3"), matching("wombat5"))
    settings.VAR_DIR = tmp_path / "other"
    sync.sync_once()
    assert (indexed_ids(), matching("session 3"), matching("wombat5")) == resumed
    assert len(resumed[0]) == 42


@STORE_DB
def test_a_build_that_crashes_gets_its_index_back_on_the_next_pass(
    store, var_dir, build_mode, monkeypatch
):
    ids = fill(store, sessions=3, per_session=5)

    def broken(side, batch):
        raise RuntimeError("listener bug")

    monkeypatch.setattr(SEARCH_INDEX, "add_messages", broken)
    with pytest.raises(RuntimeError):
        sync.sync_once()
    monkeypatch.undo()
    assert "search_messages_by_session" in _index_names()
    assert sync.sync_once().messages == 15
    # Forgetting a session (by key, through the restored index) drops its rows.
    assert sync.forget_sessions([ids[0]])
    assert len(indexed_ids()) == 10


@STORE_DB
def test_a_build_hands_its_connection_back_at_normal_durability(store, var_dir, build_mode):
    fill(store, sessions=3, per_session=5)
    side = sidedb.connect()
    try:
        sync.sync_once(side=side)
        assert side.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    finally:
        side.close()
