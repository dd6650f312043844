"""Session ids that are TEXT but not valid UTF-8 and read alike: two sessions, never one.

``odd-\\xe2\\x82`` and ``odd-\\xe2\\x83`` (each a cut "€") both read as
``odd-\\ufffd``. The store holds two sessions; the sync, the search, the
rollups and ``--verify`` must hold and answer two, each by its exact bytes.
"""

from __future__ import annotations

from sessions_admin.ourdata import sync, verify
from sessions_admin.ourdata.index.search import SearchQuery, search
from sessions_admin.store.values import Undecodable, exact_key
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

ALIKE = (b"odd-\xe2\x82", b"odd-\xe2\x83")


def add_alike_sessions(store) -> None:
    """Each id with its own principal, title and two messages saying "kestrel"."""
    for n, raw in enumerate(ALIKE):
        store.execute(
            "INSERT INTO sessions (id, target_key, principal_id, title, created_at, last_active) "
            "VALUES (CAST(? AS TEXT), 't.x', ?, ?, ?, ?)",
            (raw, f"user:{n}", f"title {n}", BASE_MS + n, BASE_MS + n),
        )
        for m in range(2):
            store.execute(
                "INSERT INTO session_messages (session_id, role, content, tool_name, ts) "
                "VALUES (CAST(? AS TEXT), 'tool', ?, 'fs.read', ?)",
                (raw, f"kestrel from {n}, message {m}", BASE_MS + 10 * n + m),
            )


def assert_no_drift() -> None:
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()
    assert verdict.pending == 0


def test_two_undecodable_values_are_equal_only_when_their_bytes_are():
    first, second = (Undecodable(raw) for raw in ALIKE)
    assert first == Undecodable(ALIKE[0]) and hash(first) == hash(Undecodable(ALIKE[0]))
    assert first != second
    assert first != "odd-\ufffd"  # a valid id that reads the same is another id
    assert len({first, second, "odd-\ufffd"}) == 3
    assert exact_key(first) != exact_key(second)


@STORE_DB
def test_search_shows_each_of_two_sessions_whose_ids_differ_only_in_bad_bytes(store, var_dir):
    add_alike_sessions(store)
    sync.sync_once()
    page = search(SearchQuery(q="kestrel"))
    groups = {group.session_id.raw: group for group in page.groups}
    assert set(groups) == set(ALIKE)
    for n, raw in enumerate(ALIKE):
        assert {hit.message.content for hit in groups[raw].hits} == {
            f"kestrel from {n}, message {m}" for m in range(2)
        }


@STORE_DB
def test_verify_finds_nothing_pending_after_a_rebuild_and_every_pass_after(store, var_dir):
    add_alike_sessions(store)
    sync.rebuild()
    sync.sync_once()
    assert_no_drift()
    sync.sync_once()
    assert_no_drift()


@STORE_DB
def test_deleting_one_of_two_alike_sessions_keeps_the_other_indexed(store, var_dir):
    add_alike_sessions(store)
    sync.sync_once()
    for table, column in (("session_messages", "session_id"), ("sessions", "id")):
        store.execute(f"DELETE FROM {table} WHERE {column} = CAST(? AS TEXT)", (ALIKE[0],))
    sync.sync_once()
    assert_no_drift()
    assert [group.session_id.raw for group in search(SearchQuery(q="kestrel")).groups] == [ALIKE[1]]
