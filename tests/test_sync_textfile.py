"""The trigram index's own file: written beside each batch, never ahead or behind for good."""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.ourdata.index import search, textindex
from tests.conftest import STORE_DB
from tests.indexdata import matching


def found(query: str) -> tuple[str, set[str]]:
    """How the search answered (from the index or a scan) and the sessions it found."""
    page = search.search(search.SearchQuery(q=query))
    return page.mode, {group.session_id for group in page.groups}


def some_sessions(store, sessions: int = 4, per: int = 5) -> None:
    for s in range(sessions):
        sid = store.add_session(f"sess_{s}")
        for m in range(per):
            store.add_message(sid, "user", f"osprey {s} {m}")


@STORE_DB
def test_the_text_index_is_a_file_of_its_own_beside_the_side_database(store, var_dir):
    some_sessions(store)
    sync.sync_once()
    assert sidedb.text_path() == var_dir / "side-text.sqlite3"
    assert len(matching("osprey")) == 20
    assert found("osprey") == ("index", {"sess_0", "sess_1", "sess_2", "sess_3"})


@STORE_DB
def test_a_batch_taken_in_again_after_a_crash_between_the_commits_is_indexed_once(store, var_dir):
    some_sessions(store)
    sync.sync_once()
    # The side database lost the last pass (killed after the text file committed):
    # forget it there alone, and take everything in again.
    side = sidedb.connect()
    side.execute("DELETE FROM sync_state WHERE key = 'last_id'")
    for table in ("sync_sessions", "search_messages", "search_sessions"):
        side.execute(f"DELETE FROM {table}")
    side.execute("DELETE FROM rollup_session")
    side.close()
    sync.sync_once()
    assert matching("osprey") == sorted(set(matching("osprey")))
    assert len(matching("osprey")) == 20


@STORE_DB
def test_a_failed_text_write_rolls_the_batch_back_in_both_files(store, var_dir, monkeypatch):
    some_sessions(store)
    real = textindex.TextIndex.add

    def broken(self, rows):
        raise RuntimeError("disk full")

    monkeypatch.setattr(textindex.TextIndex, "add", broken)
    with pytest.raises(RuntimeError, match="disk full"):
        sync.sync_once()
    monkeypatch.setattr(textindex.TextIndex, "add", real)
    assert matching("osprey") == []
    report = sync.sync_once()
    assert report.messages == 20
    assert len(matching("osprey")) == 20
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()


@STORE_DB
def test_a_new_side_database_never_inherits_an_old_text_file(store, var_dir):
    some_sessions(store)
    sync.sync_once()
    sidedb.side_path().unlink()  # removed by hand; the text file stays
    store.execute("DELETE FROM session_messages")
    store.execute("DELETE FROM sessions")
    sync.sync_once()
    assert matching("osprey") == []


@STORE_DB
def test_a_deleted_session_leaves_the_text_file_too(store, var_dir):
    from sessions_admin.ourdata.sync import forget_sessions

    some_sessions(store)
    sync.sync_once()
    # The dashboard's delete: the store's rows first, then the side data.
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_0'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_0'")
    assert forget_sessions(["sess_0"])
    assert len(matching("osprey")) == 15
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_1'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_1'")
    sync.sync_once()  # the runtime's delete, found by the pass's walk
    assert len(matching("osprey")) == 10


@STORE_DB
@pytest.mark.parametrize("how", ["removed", "an older copy"])
def test_a_text_file_that_is_not_the_side_databases_own_is_never_searched(store, var_dir, how):
    some_sessions(store, sessions=2)
    sync.sync_once()
    old_copy = sidedb.text_path().read_bytes()
    assert found("osprey") == ("index", {"sess_0", "sess_1"})
    sidedb.side_path().unlink()  # a new side database (and with it a new pair)
    sync.sync_once()
    for suffix in ("", "-wal", "-shm"):
        sidedb.text_path().with_name(f"side-text.sqlite3{suffix}").unlink(missing_ok=True)
    if how == "an older copy":
        sidedb.text_path().write_bytes(old_copy)
    # Searched as it is, the text file would miss every message: the page says
    # the index is not built and scans; a pass refuses and names the cure.
    mode, sessions = found("osprey")
    assert (mode, sessions) != ("index", set())
    assert sessions == {"sess_0", "sess_1"}
    assert not search.freshness(sidedb.connect_readonly()).built
    with pytest.raises(sync.SideLayoutChanged, match="--rebuild"):
        sync.sync_once()
    sync.rebuild()
    sync.sync_once()
    assert found("osprey") == ("index", {"sess_0", "sess_1"})
    assert len(matching("osprey")) == 10
