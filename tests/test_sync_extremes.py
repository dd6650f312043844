"""Ids and times at the ends of SQLite's integers, and principals of any kind, through the sync.

The runtime's ids only grow from 1, but a row can hold any rowid (``-5``,
``-2**63``), any time and any principal (none, the empty text, a number). The
index, the rollups and ``sync_index --verify`` must agree with a brute-force
reading of the store for each of them.
"""

from __future__ import annotations

import io
import sqlite3

from django.core.management import call_command
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.ourdata.index.search import SearchQuery, search
from sessions_admin.store.feed import as_int
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import BASE_MS

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
#: Times the store may hold: the ends of INTEGER, -1, zero, text and REALs.
TIMES = st.sampled_from([INT_MIN, -1, 0, 1, BASE_MS, INT_MAX, "late", "17", 2.0, 1.5])
PRINCIPALS = st.sampled_from([None, "", INT_MIN, -1, "user:a", "-9223372036854775808"])


def assert_no_drift() -> None:
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()
    assert verdict.pending == 0


def insert_message(store, message_id: int | None, session_id: str, content: str, ts=BASE_MS):
    store.execute(
        "INSERT INTO session_messages (id, session_id, role, content, ts) "
        "VALUES (?, ?, 'user', ?, ?)",
        (message_id, session_id, content, ts),
    )


def hit_ids(q: str) -> set[int]:
    return {hit.message.id for group in search(SearchQuery(q=q)).groups for hit in group.hits}


@STORE_DB
def test_messages_with_negative_ids_are_indexed_counted_and_found(store, var_dir):
    store.add_session("s-neg")
    insert_message(store, -5, "s-neg", "kestrel below zero")
    insert_message(store, INT_MIN, "s-neg", "kestrel at the very bottom")
    insert_message(store, None, "s-neg", "kestrel after them")
    sync.sync_once()
    assert_no_drift()
    side = sidedb.connect()
    try:
        assert side.execute("SELECT count(*) FROM search_messages").fetchone()[0] == 3
        rollup = side.execute("SELECT messages FROM rollup_session").fetchall()
    finally:
        side.close()
    assert rollup == [(3,)]
    assert hit_ids("kestrel") == {INT_MIN, -5, 1}
    assert hit_ids("ke") == {INT_MIN, -5, 1}  # the scan of one or two characters


@STORE_DB
def test_a_rebuild_after_a_negative_id_arrived_takes_it_in(store, var_dir):
    store.add_session("s-late")
    store.add_message("s-late", "user", "kestrel first")
    sync.sync_once()
    insert_message(store, -7, "s-late", "kestrel planted below")
    sync.sync_once()
    assert not verify.verify().ok  # the mark is past it: only a rebuild takes it in
    sync.rebuild()
    sync.sync_once()
    assert_no_drift()
    assert hit_ids("kestrel") == {-7, 1}


def store_principals(store) -> dict[str, tuple]:
    """Each principal's sessions, messages and first and last activity, from the store
    by brute force: a time is any whole number but -1 (the rollups' "no time")."""
    sessions = store.execute("SELECT id, principal_id, created_at FROM sessions")
    messages = store.execute("SELECT session_id, ts FROM session_messages")
    totals: dict[str, list] = {}
    for sid, principal, created in sessions:
        key = "" if principal is None else str(principal)
        total = totals.setdefault(key, [0, 0, []])
        total[0] += 1
        times = [as_int(created)] + [as_int(ts) for owner, ts in messages if owner == sid]
        total[1] += sum(owner == sid for owner, _ in messages)
        total[2] += [t for t in times if t is not None and t != -1]
    return {
        key: (n, m, min(times, default=None), max(times, default=-1))
        for key, (n, m, times) in totals.items()
    }


def side_principals() -> dict[str, tuple]:
    side = sidedb.connect()
    try:
        rows = side.execute(
            "SELECT principal, sessions, messages, first_ts, last_ts FROM rollup_principal"
        ).fetchall()
    finally:
        side.close()
    return {principal: tuple(rest) for principal, *rest in rows}


OPERATIONS = st.lists(
    st.one_of(
        st.tuples(st.just("session"), st.integers(0, 3), PRINCIPALS, TIMES),
        st.tuples(st.just("message"), st.integers(0, 3), TIMES),
        st.tuples(st.just("delete"), st.integers(0, 3)),
        st.tuples(st.just("sync")),
    ),
    max_size=14,
)


@STORE_DB
@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(operations=OPERATIONS)
# A session with no readable created_at whose one message is at -2**63: its last
# activity is that time, not the "no time" the totals row starts from.
@example(operations=[("session", 0, None, -1), ("message", 0, -(2**63))])
def test_principal_totals_equal_the_store_whatever_principal_and_time(store, var_dir, operations):
    for table in ("session_messages", "session_state", "sessions"):
        store.execute(f"DELETE FROM {table}")
    sync.rebuild()
    conn = sqlite3.connect(store.path, isolation_level=None)
    try:
        for operation in operations:
            kind, *args = operation
            if kind == "session":
                sid, principal, created = f"s{args[0]}", args[1], args[2]
                conn.execute(
                    "INSERT OR IGNORE INTO sessions (id, target_key, principal_id, created_at, "
                    "last_active) VALUES (?, 't', ?, ?, 0)",
                    (sid, principal, created),
                )
            elif kind == "message":
                conn.execute(
                    "INSERT INTO session_messages (session_id, role, content, ts) "
                    "SELECT id, 'user', 'x', ? FROM sessions WHERE id = ?",
                    (args[1], f"s{args[0]}"),
                )
            elif kind == "delete":
                conn.execute("DELETE FROM session_messages WHERE session_id = ?", (f"s{args[0]}",))
                conn.execute("DELETE FROM sessions WHERE id = ?", (f"s{args[0]}",))
            else:
                sync.sync_once(batch_size=2)
    finally:
        conn.close()
    sync.sync_once(batch_size=2)
    assert side_principals() == store_principals(store)
    assert_no_drift()


@STORE_DB
def test_verify_compares_principal_totals_with_the_store_not_only_their_rows(store, var_dir):
    store.add_session("s-1", principal="user:a", created_at=BASE_MS)
    store.add_message("s-1", "user", "hello", ts=BASE_MS + 5)
    sync.sync_once()
    side = sidedb.connect()
    side.execute("UPDATE rollup_principal SET last_ts = ? WHERE principal = 'user:a'", [BASE_MS])
    side.close()
    lines = verify.verify().lines()
    assert lines[0] == "principals: 1 drifted"
    assert lines[1].startswith(f"  'user:a': totals (1, 1, 0, 0, {BASE_MS}, {BASE_MS}), store")


@STORE_DB
def test_the_hostile_demo_store_verifies_after_a_pass(store, tmp_path, var_dir):
    home = tmp_path / "hostile-home"
    call_command("make_demo_store", str(home), "--sessions", "20", "--hostile", verbosity=0)
    point_store_at(home / "data" / "agents" / "store.db")
    call_command("sync_index", "--quiet")
    call_command("sync_index", "--verify", stdout=io.StringIO())
