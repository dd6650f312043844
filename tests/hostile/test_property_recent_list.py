"""The list's principal and title filters while the runtime writes after a pass.

The side index answers with the sessions of messages newer than its last pass
read from the store and merged in (``ourdata.index.sessions``). Whatever the
runtime appends (to old sessions, to sessions it creates, with the row's
principal or title rewritten as it goes, at any time stamp), every page of
that answer, in every sort order, is what a scan of the store gives.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.lists.sessions import index_page
from sessions_admin.ourdata import sidedb, sync
from sessions_admin.store import queries
from sessions_admin.store.queries import SORTS, SessionFilter
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

PRINCIPALS = ["user:alice", "user:bob", None]
TITLES = ["Deploy rollback", "pager storm", None, "RÉSUMÉ"]
OLD = [f"s{n:02d}" for n in range(16)]
WRITES = st.lists(
    st.tuples(
        st.sampled_from([*OLD, "new-a", "new-b"]),
        st.sampled_from(PRINCIPALS),
        st.sampled_from(TITLES),
        st.booleans(),  # the runtime rewrote the row's principal and title too
        st.integers(0, 60),  # the message's minute
    ),
    min_size=1,
    max_size=8,
)
FILTERS = [
    SessionFilter(principal="user:alice"),
    SessionFilter(principal="user:bob", target="ops.pager"),
    SessionFilter(q="rollback"),
    SessionFilter(q="résumé", principal="user:alice"),
]


def walk(list_page, session_filter: SessionFilter, sort: str) -> list[str]:
    seen: list[str] = []
    cursor = None
    for _ in range(50):
        page = list_page(session_filter, sort, cursor, limit=4)
        assert page is not None, "the index was not used"
        seen += [row.id for row in page.rows]
        if page.next_cursor is None:
            return seen
        cursor = page.next_cursor
    raise AssertionError("the list kept paging")


@pytest.fixture
def fresh_store(store, var_dir):
    return store


def planted(store) -> None:
    for number, sid in enumerate(OLD):
        store.add_session(
            sid,
            target=("ops.pager", "infra.deployer")[number % 2],
            principal=PRINCIPALS[number % 3],
            title=TITLES[number % 4],
            turn_count=(None, 0, 3)[number % 3],
            created_at=BASE_MS + (number % 5) * 60_000,
        )
        store.add_message(sid, "user", "hi", ts=BASE_MS + (number % 7) * 60_000)


@STORE_DB
@given(writes=WRITES)
def test_every_page_equals_a_scan_while_messages_arrive_after_the_pass(fresh_store, writes):
    store = fresh_store
    for table in ("session_messages", "sessions"):
        store.execute(f"DELETE FROM {table}")
    sidedb.side_path().unlink(missing_ok=True)
    planted(store)
    sync.sync_once()
    for sid, principal, title, rewrite, minute in writes:
        if not store.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
            store.add_session(sid, principal=principal, title=title, created_at=BASE_MS)
        elif rewrite:
            store.execute(
                "UPDATE sessions SET principal_id = ?, title = ? WHERE id = ?",
                (principal, title, sid),
            )
        store.add_message(sid, "user", "newer", ts=BASE_MS + minute * 60_000)
    for session_filter in FILTERS:
        for sort in SORTS:
            expected = walk(queries.list_sessions, session_filter, sort)
            assert walk(index_page, session_filter, sort) == expected, (session_filter, sort)
