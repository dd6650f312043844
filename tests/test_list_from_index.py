"""The list's principal and title filters: from the side index after a recent pass (the
sessions of newer messages merged in from the store), the same rows as the scan."""

from __future__ import annotations

import random

import pytest

from sessions_admin import clock
from sessions_admin.lists.sessions import index_page
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index import sessions as index_sessions
from sessions_admin.store import queries
from sessions_admin.store.queries import SORTS, SessionFilter
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def fill(store, count: int = 120) -> None:
    rng = random.Random(5)
    for number in range(count):
        created = BASE_MS + rng.randrange(0, 40) * 60_000
        sid = store.add_session(
            f"sess_{number:04d}",
            target=rng.choice(["ops.pager", "infra.deployer"]),
            principal=rng.choice(["user:alice", "user:bob", None]),
            title=rng.choice(["Deploy rollback", "pager storm", None, "RÉSUMÉ of 50% off"]),
            turn_count=rng.choice([None, 0, 2]),
            created_at=created,
            last_active=created + rng.randrange(0, 3) * 60_000,
        )
        store.add_message(sid, "user", "hi", ts=created)
        # The runtime's trigger moved last_active to the message's ts: put it back.
        store.execute(
            "UPDATE sessions SET last_active = ? WHERE id = ?",
            (created + rng.randrange(0, 3) * 60_000, sid),
        )


def walk(list_page, session_filter: SessionFilter, sort: str) -> list[str]:
    seen: list[str] = []
    cursor = None
    while True:
        page = list_page(session_filter, sort, cursor, limit=9)
        assert page is not None
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


@pytest.mark.parametrize(
    "session_filter",
    [
        SessionFilter(principal="user:alice"),
        SessionFilter(principal="user:bob", target="ops.pager"),
        SessionFilter(q="rollback"),
        SessionFilter(q="50%"),
        SessionFilter(q="sess_00"),
        SessionFilter(q="de", principal="user:alice"),
    ],
)
@STORE_DB
def test_index_pages_equal_the_store_scan_in_every_sort(store, var_dir, session_filter):
    fill(store)
    sync.sync_once()
    for sort in SORTS:
        expected = walk(queries.list_sessions, session_filter, sort)
        assert walk(index_page, session_filter, sort) == expected, sort


@STORE_DB
def test_the_title_filter_from_the_index_folds_every_script(store, var_dir):
    fill(store, count=30)
    sync.sync_once()
    page = index_page(SessionFilter(q="résumé"), "-last_active", None)
    assert page.rows and all("RÉSUMÉ" in row.title for row in page.rows)


def runtime_moves_on(store) -> None:
    """After a pass: messages to old sessions (one of them now alice's), and a session
    created with its first message, as the runtime writes them."""
    store.execute("UPDATE sessions SET principal_id = 'user:alice' WHERE id = 'sess_0002'")
    for sid in ("sess_0002", "sess_0005", "sess_0007", "sess_0007"):
        store.add_message(sid, "user", "newer than the index", ts=BASE_MS + 90 * 60_000)
    store.add_session(
        "sess_new", principal="user:alice", title="Deploy rollback", created_at=BASE_MS
    )
    store.add_message("sess_new", "user", "first", ts=BASE_MS + 91 * 60_000)


@pytest.mark.parametrize(
    "session_filter",
    [
        SessionFilter(principal="user:alice"),
        SessionFilter(principal="user:bob", target="ops.pager"),
        SessionFilter(q="rollback"),
        SessionFilter(q="sess_00", principal="user:alice"),
    ],
)
@STORE_DB
def test_messages_newer_than_the_pass_are_read_from_the_store_and_merged_in(
    store, var_dir, session_filter
):
    fill(store, count=40)
    sync.sync_once()
    runtime_moves_on(store)
    for sort in SORTS:
        expected = walk(queries.list_sessions, session_filter, sort)
        assert walk(index_page, session_filter, sort) == expected, sort


@STORE_DB
def test_too_many_messages_newer_than_the_pass_make_the_list_scan(store, var_dir, monkeypatch):
    fill(store, count=10)
    sync.sync_once()
    alice = SessionFilter(principal="user:alice")
    monkeypatch.setattr(index_sessions, "RECENT_MESSAGES", 2)
    store.add_message("sess_0001", "user", "one")
    store.add_message("sess_0002", "user", "two")
    assert index_page(alice, "-last_active", None) is not None  # two: still merged
    store.add_message("sess_0003", "user", "three")
    assert index_page(alice, "-last_active", None) is None


@STORE_DB
def test_an_index_whose_last_pass_is_old_is_not_used(store, var_dir, monkeypatch):
    fill(store, count=10)
    sync.sync_once()
    alice = SessionFilter(principal="user:alice")
    assert index_page(alice, "-last_active", None) is not None
    later = clock.now_ms() + (index_sessions.FRESH_FOR_S + 1) * 1000
    monkeypatch.setattr(clock, "now_ms", lambda: later)
    assert index_page(alice, "-last_active", None) is None


@STORE_DB
def test_without_an_index_the_list_scans_the_store(store, var_dir, staff_client):
    fill(store, count=10)
    assert index_page(SessionFilter(q="pager"), "-last_active", None) is None
    response = staff_client.get("/sessions/?q=pager")
    assert response.status_code == 200
    scanned = queries.list_sessions(SessionFilter(q="pager"), "-last_active", None)
    body = response.content.decode()
    assert scanned.rows and body.count("data-session-id=") == len(scanned.rows)
    assert all(f'data-session-id="{row.id}"' in body for row in scanned.rows)


@STORE_DB
def test_the_list_page_serves_the_principal_filter_from_a_fresh_index(store, var_dir, staff_client):
    fill(store, count=40)
    sync.sync_once()
    body = staff_client.get("/sessions/?principal=user:alice").content.decode()
    expected = queries.list_sessions(SessionFilter(principal="user:alice"), "-last_active", None)
    assert [row.id for row in expected.rows][0] in body
    assert body.count("data-session-id=") == len(expected.rows)
