"""The text index holds blocks of a session's messages; the search still walks messages.

Blocks are cut small here (three messages, five ids) so that every store the
tests generate has sessions with several blocks, blocks that interleave, and
blocks cut by their span. Whatever the interleaving, the batches of the
passes, the deletes and the cursor, the walk must name every message that
matches (and passes the filters) below the cursor, newest first, each once;
and paging through the search must show exactly the sessions that say it.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.index import candidates, search, textindex
from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from sessions_admin.ourdata.index.search import SearchQuery
from sessions_admin.ourdata.index.text import contains, fold
from tests.conftest import STORE_DB
from tests.indexdata import matching

SESSIONS = [f"s{n}" for n in range(6)]
WORDS = ["heron", "Heron", "egret", "the", "a", "héron"]
APPEND = st.tuples(
    st.just("append"),
    st.sampled_from(SESSIONS),
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
    st.sampled_from([None, "fs.read"]),
)
OPERATIONS = st.lists(
    st.one_of(
        APPEND,
        APPEND,
        APPEND,
        st.tuples(st.just("sync"), st.integers(1, 12)),
        st.tuples(st.just("delete"), st.sampled_from(SESSIONS)),
    ),
    max_size=40,
)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(textindex, "BLOCK_MESSAGES", 3)
    monkeypatch.setattr(textindex, "SPAN", 5)
    monkeypatch.setattr(candidates, "FIRST_BLOCKS", 1)
    monkeypatch.setattr(candidates, "MOST_BLOCKS", 2)
    monkeypatch.setattr(candidates, "CANDIDATE_BATCH", 3)
    monkeypatch.setattr(search, "PAGE_SESSIONS", 2)


def run(store, operations) -> None:
    """The operations on an empty store, then a last pass."""
    for table in ("session_messages", "session_state", "sessions"):
        store.execute(f"DELETE FROM {table}")
    sync.rebuild()
    for operation in operations:
        if operation[0] == "append":
            _, sid, text, tool = operation
            if not store.execute("SELECT 1 FROM sessions WHERE id = ?", (sid,)):
                store.add_session(sid)
            store.add_message(sid, "tool" if tool else "user", text, tool_name=tool)
        elif operation[0] == "sync":
            sync.sync_once(batch_size=operation[1])
        else:
            for table in ("session_messages", "session_state"):
                store.execute(f"DELETE FROM {table} WHERE session_id = ?", (operation[1],))
            store.execute("DELETE FROM sessions WHERE id = ?", (operation[1],))
    sync.sync_once(batch_size=4)


def matching_ids(store, query: str, tool: str | None = None) -> list[int]:
    rows = store.execute(
        "SELECT m.id, m.content, m.tool_name FROM session_messages m "
        "JOIN sessions s ON s.id = m.session_id"
    )
    return sorted(
        (
            mid
            for mid, content, tool_name in rows
            if contains(fold(query), (content, tool_name)) and tool in (None, tool_name)
        ),
        reverse=True,
    )


@STORE_DB
@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    operations=OPERATIONS,
    query=st.sampled_from(["heron", "egret", "héron", "the"]),
    tool=st.sampled_from([None, "fs.read"]),
    pick=st.integers(0, 200) | st.none(),
)
def test_the_walk_names_every_matching_message_below_the_cursor_once_newest_first(
    store, var_dir, small_blocks, operations, query, tool, pick
):
    run(store, operations)
    # The cursor at a message's id or just above it (ids grow across examples).
    ids = [row[0] for row in store.execute("SELECT id FROM session_messages ORDER BY id")]
    cursor = None if pick is None or not ids else ids[pick % len(ids)] + pick % 2
    side = sidedb.connect_readonly()
    try:
        walk = candidates.candidates(side, SearchQuery(q=query, tool=tool), cursor)
        named = [] if walk is None else [mid for batch in walk for mid, _ in batch]
    finally:
        side.close()
    assert named == sorted(set(named), reverse=True)
    assert all(cursor is None or mid < cursor for mid in named)
    want = [mid for mid in matching_ids(store, query, tool) if cursor is None or mid < cursor]
    assert set(want) <= set(named)


@STORE_DB
@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS, query=st.sampled_from(["heron", "egret", "the"]))
def test_paging_through_the_search_shows_exactly_the_sessions_and_hits_that_say_it(
    store, var_dir, small_blocks, operations, query
):
    run(store, operations)
    want = matching_ids(store, query)
    pages = every_page(query)
    assert all(page.mode == "index" for page in pages)
    sessions = [group.session_id for page in pages for group in page.groups]
    shown = [hit.message.id for page in pages for group in page.groups for hit in group.hits]
    rows = store.execute("SELECT id, session_id FROM session_messages")
    session_of = dict(rows)
    assert sorted(sessions) == sorted({session_of[mid] for mid in want})  # each once
    assert set(shown) <= set(want)
    assert len(shown) == len(set(shown))


def every_page(query: str) -> list[search.SearchPage]:
    """The first page and every "More sessions" page after it."""
    pages: list[search.SearchPage] = []
    before = None
    for _ in range(100):
        pages.append(search.search(SearchQuery(q=query, before_id=before)))
        before = pages[-1].next_before_id
        if before is None:
            return pages
    raise AssertionError("the pages never ended")


@STORE_DB
@pytest.mark.parametrize("query", ["heron", "he"])
def test_following_every_page_shows_each_session_once_when_their_messages_interleave(
    store, var_dir, small_blocks, query
):
    """Two sessions a page: s0 and s1 say it again after s2 and s3 did (a store that
    changed between passes), so their older messages fall on the second page."""
    says = [("append", f"s{n}", "heron", None) for n in (0, 1, 2, 3, 0, 1)]
    run(store, [says[0], says[1], ("sync", 1), says[2], says[3], ("sync", 2), says[4], says[5]])
    pages = every_page(query)
    assert pages[0].mode == ("index" if query == "heron" else "scan-short")
    shown = [group.session_id for page in pages for group in page.groups]
    assert sorted(shown) == ["s0", "s1", "s2", "s3"]


@STORE_DB
def test_a_session_with_more_messages_than_a_block_holds_is_found_in_each(store, var_dir):
    sid = store.add_session("long")
    other = store.add_session("other")
    for n in range(textindex.BLOCK_MESSAGES * 2 + 5):
        store.add_message(sid, "user", f"line {n}" + (" kingfisher" if n % 40 == 7 else ""))
        store.add_message(other, "user", "nothing here")
    sync.sync_once()
    side = sidedb.connect()
    try:
        blocks = side.execute("SELECT high, low FROM search_blocks ORDER BY high").fetchall()
    finally:
        side.close()
    assert len(blocks) == 6  # each session's 133 messages in three blocks
    assert all(high - low < textindex.SPAN for high, low in blocks)
    want = matching_ids(store, "kingfisher")
    side = sidedb.connect_readonly()
    try:
        walk = candidates.candidates(side, SearchQuery(q="kingfisher"), None)
        named = [mid for batch in walk for mid, _ in batch]
    finally:
        side.close()
    assert set(want) <= set(named)
    assert named == sorted(named, reverse=True)


@STORE_DB
def test_a_block_reaching_below_the_cursor_is_read_from_above_it(store, var_dir, small_blocks):
    """One block holds s0's messages 1 and 3 (s1's 2 between them): a page resuming
    below 2 still finds 1, from a block whose rowid is above the cursor."""
    heron, egret = ("append", "s0", "heron", None), ("append", "s1", "egret", None)
    run(store, [heron, egret, heron])
    first, second, third = [
        row[0] for row in store.execute("SELECT id FROM session_messages ORDER BY id")
    ]
    side = sidedb.connect_readonly()
    try:
        assert side.execute(
            "SELECT high, low FROM search_blocks WHERE high = ?", (third,)
        ).fetchall() == [(third, first)]
        walk = candidates.candidates(side, SearchQuery(q="heron"), second)
        assert [mid for batch in walk for mid, _ in batch] == [first]
    finally:
        side.close()


@STORE_DB
def test_forgetting_some_messages_keeps_the_rest_of_their_block_found(store, var_dir):
    sid = store.add_session("kept")
    ids = [store.add_message(sid, "user", f"osprey {n}") for n in range(5)]
    sync.sync_once()
    side = sidedb.connect()
    try:
        assert side.execute("SELECT count(*) FROM search_blocks").fetchone() == (1,)
        with side:
            SEARCH_INDEX.forget_messages(side, [ids[2]])
    finally:
        side.close()
    assert matching("osprey") == [mid for mid in ids if mid != ids[2]]


@settings(max_examples=60, deadline=None)
@given(
    sessions=st.lists(st.sampled_from("abcd"), min_size=1, max_size=40),
    size=st.integers(min_value=1, max_value=5),
)
def test_blocks_come_in_rowid_order_each_holding_one_sessions_run(sessions, size):
    """FTS5 writes a segment whenever a rowid is lower than the last: a batch's blocks
    go in by rowid, whatever order their sessions interleave in."""
    from sessions_admin.store.feed import FeedMessage

    messages = [
        FeedMessage(mid, sid, "user", f"m{mid}", *[None] * 7, None, None, None, None)
        for mid, sid in enumerate(sessions, start=1)
    ]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(textindex, "BLOCK_MESSAGES", size)
        rows = textindex.blocks(messages)
    highs = [high for high, _, _ in rows]
    assert highs == sorted(highs)
    by_id = {m.id: m.session_id for m in messages}
    covered = []
    for high, low, body in rows:
        held = [mid for mid in range(low, high + 1) if by_id[mid] == by_id[high]]
        assert len(held) <= size and body.count(textindex.MESSAGE_SEPARATOR) == len(held) - 1
        covered.extend(held)
    assert sorted(covered) == list(by_id)
