"""Each pass sees every change to a session row, read in blocks, in this process or its own."""

from __future__ import annotations

import gc

import pytest
from django.db import connections

from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.store import blockread, feed
from tests.conftest import STORE_DB

BIG = (1 << 63) - 1


def side_rows(sql: str, params: tuple = ()) -> list[tuple]:
    side = sidedb.connect()
    try:
        return side.execute(sql, params).fetchall()
    finally:
        side.close()


def indexed(sid: str) -> tuple | None:
    rows = side_rows("SELECT principal_id, fold FROM search_sessions WHERE id = ?", (sid,))
    return rows[0] if rows else None


def assert_no_drift() -> None:
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()
    assert verdict.pending == 0


def assert_idle() -> None:
    again = sync.sync_once()
    counts = (again.sessions_added, again.sessions_updated, again.sessions_retaken)
    assert counts == (0, 0, 0) and again.sessions_forgotten == 0


@pytest.fixture(params=["here", "own process"])
def walk_where(request, monkeypatch) -> str:
    """The block read in this process (small stores) and in a process of its own,
    its answer in parts of two blocks."""
    if request.param == "own process":
        if blockread.newer_sqlite() is None:
            pytest.skip("no SQLite newer than the standard library's (pysqlite3) here")
        monkeypatch.setattr(feed.blocks, "CHILD_FROM_ROWIDS", 0)
    monkeypatch.setattr(feed.blocks, "PART_BLOCKS", 2)
    return request.param


def many_sessions(store, n: int = 300) -> None:
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, "
            "turn_count, created_at, last_active) VALUES (?, 't.x', 'default', ?, ?, 0, ?, ?)",
            [(f"s{i:04d}", f"user:{i % 3}", f"plan {i}", i, i) for i in range(n)],
        )


@STORE_DB
def test_every_kind_of_row_change_is_seen_once(store, var_dir, walk_where):
    many_sessions(store)
    sync.sync_once()
    assert_idle()  # every block now has a digest: the next edits meet kept digests
    store.execute("UPDATE sessions SET title = 'osprey' WHERE id = 's0010'")
    store.execute("UPDATE sessions SET principal_id = 'user:new' WHERE id = 's0150'")
    store.execute("UPDATE sessions SET last_active = 5.5 WHERE id = 's0151'")
    store.execute("DELETE FROM sessions WHERE id = 's0200'")
    with store.connect() as conn:  # the same id again, at the table's end
        conn.execute("CREATE TEMP TABLE again AS SELECT * FROM sessions WHERE id = 's0003'")
        conn.execute("DELETE FROM sessions WHERE id = 's0003'")
        conn.execute("INSERT INTO sessions SELECT * FROM again")
    report = sync.sync_once()
    assert report.sessions_forgotten == 1
    # s0003 under a new rowid is forgotten and taken in as new; s0150 moved principal.
    counts = (report.sessions_added, report.sessions_updated, report.sessions_retaken)
    assert counts == (1, 2, 1)
    assert indexed("s0010")[1].startswith("osprey")
    assert indexed("s0150")[0] == "user:new" and indexed("s0200") is None
    assert side_rows("SELECT srowid FROM sync_sessions WHERE id = 's0003'") == list(
        store.execute("SELECT rowid FROM sessions WHERE id = 's0003'")
    )
    assert_no_drift()
    assert_idle()


@STORE_DB
def test_rowids_at_both_ends_of_the_range_are_walked(store, var_dir, walk_where):
    many_sessions(store, 5)
    for rowid, sid in ((BIG, "s-top"), (-BIG - 1, "s-bottom"), (-3, "s-minus")):
        store.execute(
            "INSERT INTO sessions (rowid, id, target_key, principal_id, title, created_at, "
            "last_active) VALUES (?, ?, 't.x', 'user:edge', 'edge', 1, 1)",
            (rowid, sid),
        )
    sync.sync_once()
    assert all(indexed(sid) for sid in ("s-top", "s-bottom", "s-minus"))
    assert_idle()
    store.execute("UPDATE sessions SET title = 'kestrel' WHERE id IN ('s-top', 's-bottom')")
    store.execute("DELETE FROM sessions WHERE id = 's-minus'")
    report = sync.sync_once()
    assert (report.sessions_updated, report.sessions_forgotten) == (2, 1)
    assert indexed("s-top")[1].startswith("kestrel") and indexed("s-minus") is None
    assert_no_drift()


@STORE_DB
def test_a_session_we_forgot_that_the_store_still_has_is_taken_in_again(store, var_dir):
    # Our record changed while the store did not (a forget with no delete behind
    # it): the block's kept digest no longer vouches for it, so it is compared.
    many_sessions(store, 100)
    sync.sync_once()
    assert_idle()
    assert sync.forget_sessions(["s0042"])
    assert indexed("s0042") is None
    report = sync.sync_once()
    assert report.sessions_added == 1 and indexed("s0042") is not None
    assert_no_drift()


@STORE_DB
def test_a_side_file_from_before_the_blocks_finds_edits_and_then_idles(store, var_dir):
    many_sessions(store, 200)
    sync.sync_once()
    side = sidedb.connect()
    for name in side.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'").fetchall():
        side.execute(f"DROP TRIGGER {name[0]}")
    side.execute("DROP TABLE sync_blocks")
    side.close()
    store.execute("UPDATE sessions SET title = 'heron' WHERE id = 's0099'")
    report = sync.sync_once()
    assert report.sessions_updated == 1 and indexed("s0099")[1].startswith("heron")
    assert_idle()
    assert_no_drift()


@STORE_DB
def test_unindexable_ids_are_counted_in_kept_and_compared_blocks(store, var_dir, walk_where):
    many_sessions(store, 130)
    store.execute(
        "INSERT INTO sessions (id, target_key, created_at, last_active) "
        "VALUES (CAST(x'ff00' AS TEXT), 't.x', 1, 1), (x'0102', 't.x', 1, 1)"
    )
    sync.sync_once()
    assert side_rows("SELECT value FROM sync_state WHERE key = 'unindexable_sessions'") == [(2,)]
    store.execute("UPDATE sessions SET title = 'x' WHERE id = 's0000'")
    sync.sync_once()  # one block compared, the others' counts as kept
    assert side_rows("SELECT value FROM sync_state WHERE key = 'unindexable_sessions'") == [(2,)]


@STORE_DB
def test_the_walk_in_its_own_process_leaves_nothing_beside_the_store(store, var_dir, monkeypatch):
    # A read-only connection closing last would leave -wal and -shm behind.
    if blockread.newer_sqlite() is None:
        pytest.skip("no SQLite newer than the standard library's (pysqlite3) here")
    monkeypatch.setattr(feed.blocks, "CHILD_FROM_ROWIDS", 0)
    many_sessions(store, 100)
    store.execute("PRAGMA journal_mode = WAL")
    connections["agents"].close()
    folder = sorted(p.name for p in store.path.parent.iterdir())
    assert folder == ["store.db"]
    sync.sync_once()
    store.execute("UPDATE sessions SET title = 'x' WHERE id = 's0001'")
    assert sync.sync_once().sessions_updated == 1
    connections["agents"].close()
    gc.collect()  # the test's own store connections, left in reference cycles
    assert sorted(p.name for p in store.path.parent.iterdir()) == folder


@STORE_DB
def test_a_principals_span_follows_the_sessions_moved_away_from_it(store, var_dir):
    for n, at in enumerate((1_000, 5_000, 9_000)):
        store.add_session(f"s{n}", principal="user:a", created_at=at, last_active=at)
        store.add_message(f"s{n}", "user", "hi", ts=at + 10)
    sync.sync_once()

    def span(principal: str) -> tuple:
        rows = "SELECT first_ts, last_ts FROM rollup_principal WHERE principal = ?"
        return tuple(side_rows(rows, (principal,))[0])

    assert span("user:a") == (1_000, 9_010)
    store.execute("UPDATE sessions SET principal_id = 'user:b' WHERE id = 's1'")
    sync.sync_once()  # neither end of user:a's span went with it
    assert span("user:a") == (1_000, 9_010) and span("user:b") == (5_000, 5_010)
    store.execute("UPDATE sessions SET principal_id = 'user:b' WHERE id = 's2'")
    sync.sync_once()
    assert span("user:a") == (1_000, 1_010) and span("user:b") == (5_000, 9_010)
    assert_no_drift()


def recreate(store, sid: str) -> None:
    """The same row again under a new rowid (its messages kept)."""
    with store.connect() as conn:
        conn.execute("PRAGMA foreign_keys = OFF")
        conn.execute("CREATE TEMP TABLE again AS SELECT * FROM sessions WHERE id = ?", (sid,))
        conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        conn.execute("INSERT INTO sessions SELECT * FROM again")


@STORE_DB
def test_a_session_created_again_after_the_walk_saw_it_gone_is_taken_in(
    store, var_dir, monkeypatch
):
    many_sessions(store, 100)
    store.add_message("s0007", "user", "osprey")
    sync.sync_once()
    store.execute("DELETE FROM session_messages WHERE session_id = 's0007'")
    store.execute("DELETE FROM sessions WHERE id = 's0007'")
    read_blocks = feed.read_blocks

    def then_created_again(kept):
        yield from read_blocks(kept)
        store.add_session("s0007", principal="user:late", title="late")

    monkeypatch.setattr(feed, "read_blocks", then_created_again)
    report = sync.sync_once()
    assert report.sessions_forgotten == 0
    assert indexed("s0007")[0] == "user:late"
    assert side_rows("SELECT messages FROM rollup_session WHERE session_id = 's0007'") == [(0,)]
    assert_no_drift()


@STORE_DB
def test_a_session_seen_at_its_new_rowid_but_not_gone_from_its_old_is_taken_in_again(
    store, var_dir, monkeypatch
):
    # Two snapshots (the halves of a big store) may see a moved row twice.
    many_sessions(store, 100)
    sync.sync_once()
    (old,) = store.execute("SELECT rowid FROM sessions WHERE id = 's0005'")[0]
    recreate(store, "s0005")
    read_blocks = feed.read_blocks

    def old_block_unchanged(kept):
        for part in read_blocks(kept):
            blocks = [b for b in part.blocks if b != old >> feed.BLOCK_BITS]
            rows = [r for r in part.rows if r[0] >> feed.BLOCK_BITS != old >> feed.BLOCK_BITS]
            yield feed.BlockPart(blocks, part.digests, rows)

    monkeypatch.setattr(feed, "read_blocks", old_block_unchanged)
    report = sync.sync_once()
    assert (report.sessions_added, report.sessions_updated) == (1, 0)
    assert side_rows("SELECT srowid FROM sync_sessions WHERE id = 's0005'") == list(
        store.execute("SELECT rowid FROM sessions WHERE id = 's0005'")
    )
    monkeypatch.undo()
    assert_no_drift()
    sync.sync_once()  # the old block, read for real, now settles
    assert_idle()


@STORE_DB
def test_an_edit_after_a_nul_byte_is_seen(store, var_dir, walk_where):
    """SQLite's quote() stops at a NUL in TEXT: a digest of it alone would miss an edit
    after one. Text and blobs that hold NUL bytes are compared whole."""
    many_sessions(store, 40)
    store.execute("UPDATE sessions SET title = 'plan' || char(0) || 'kestrel' WHERE id = 's0007'")
    store.execute("UPDATE sessions SET principal_id = 'user:' || char(0) || 'a' WHERE id = 's0009'")
    sync.sync_once()
    assert_idle()
    store.execute("UPDATE sessions SET title = 'plan' || char(0) || 'osprey' WHERE id = 's0007'")
    store.execute("UPDATE sessions SET principal_id = 'user:' || char(0) || 'b' WHERE id = 's0009'")
    report = sync.sync_once()
    assert (report.sessions_updated, report.sessions_retaken) == (1, 1)
    assert "osprey" in indexed("s0007")[1]
    assert indexed("s0009")[0] == "user:\x00b"
    assert_no_drift()
    assert_idle()
