"""The list's principal and title filters: from the side index when fresh, same rows as the scan."""

from __future__ import annotations

import random

import pytest

from sessions_admin.ourdata import sync
from sessions_admin.store import queries
from sessions_admin.store.queries import SORTS, SessionFilter
from sessions_admin.views.sessions import index_page
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


@STORE_DB
def test_a_stale_index_is_not_used(store, var_dir):
    fill(store, count=10)
    sync.sync_once()
    alice = SessionFilter(principal="user:alice")
    fresh = index_page(alice, "-last_active", None)
    assert fresh is not None and fresh.rows  # used while it is fresh
    store.add_message("sess_0001", "user", "newer than the index")
    assert index_page(SessionFilter(principal="user:alice"), "-last_active", None) is None


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
