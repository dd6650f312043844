"""A whole-list walk (what a review queue's source reads) gives every session the list's
pages give, in the same order, whatever the sort, filter and storage classes."""

from __future__ import annotations

import pytest

from sessions_admin.store import queries
from sessions_admin.store.queries import SORTS, SessionFilter
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def paged(session_filter: SessionFilter, sort: str) -> list:
    seen, cursor = [], None
    while True:
        page = queries.list_sessions(session_filter, sort, cursor, limit=7)
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor


@pytest.fixture
def sessions(store):
    for number in range(90):
        created = BASE_MS + (number * 11 % 30) * 60_000
        store.add_session(
            f"sess_{number:04d}",
            target=("ops.pager", "infra.deployer", "system.registry")[number % 3],
            principal=("user:alice", "user:bob")[number % 5 == 0],
            turn_count=(None, 0, 3)[number % 3],
            created_at=created,
            last_active=created + (number % 4) * 60_000,  # ties across targets
        )
    with store.connect() as conn:  # what a buggy writer leaves: text and a fraction
        conn.execute("UPDATE sessions SET last_active = 'later' WHERE id = 'sess_0007'")
        conn.execute("UPDATE sessions SET last_active = 1.5 WHERE id = 'sess_0008'")


@pytest.mark.parametrize("sort", list(SORTS))
@pytest.mark.parametrize(
    "session_filter",
    [SessionFilter(), SessionFilter(target="ops.pager"), SessionFilter(principal="user:bob")],
    ids=["all", "target", "principal"],
)
@STORE_DB
def test_the_walk_gives_what_the_pages_give(sessions, monkeypatch, session_filter, sort):
    monkeypatch.setattr(queries.listing, "WALK_STEP", 2)  # many steps, on every target
    walked = [row.id for row in queries.walk_sessions(session_filter, sort)]
    assert walked == paged(session_filter, sort)
    assert len(walked) == len(set(walked)) > 0
