"""Rows of any storage class through the real ``sync_index``: no crash, every page renders.

The feed (:mod:`sessions_admin.store.feed`) promises its listeners ``int`` or
``None`` for integer columns, within SQLite's signed 64 bits; here every
column of a session and its messages draws any storage class and the
extremes around that range (text digits past 2**63, REALs like ``1e300``),
the real management command feeds them to the search index and the rollups,
and the pages built on both still answer.
"""

from __future__ import annotations

import sqlite3

from django.core.management import call_command
from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.demo.hostile import insert
from sessions_admin.ourdata import sync
from sessions_admin.store import feed
from tests.conftest import STORE_DB
from tests.strategies import message_rows, session_rows, sqlite_values

#: Numbers just inside and past what SQLite's INTEGER holds, as INTEGER, REAL and TEXT.
EXTREMES = st.sampled_from(
    [2**63 - 1, -(2**63), 1e300, -1e300, 9.2233720368547758e18, 0.5, -1.5, 1e19]
) | st.integers(min_value=2**63, max_value=10**40).flatmap(
    lambda n: st.sampled_from([str(n), str(-n), f" {n} ", str(n).encode()])
)
NUMBERS = sqlite_values() | EXTREMES
NUMBER_COLUMNS = ("turn_count", "created_at", "last_active")
MESSAGE_NUMBERS = ("ts", "tool_duration_ms")
SESSION_ID = st.text(min_size=1, max_size=20).filter(lambda text: "\x00" not in text)


def _with_numbers(rows: st.SearchStrategy[dict], columns: tuple[str, ...], *, null: bool):
    """Rows whose number columns draw the extremes too (NOT NULL columns never NULL)."""
    numbers = NUMBERS.filter(lambda value: value is not None) if not null else NUMBERS
    return rows.flatmap(
        lambda row: st.fixed_dictionaries({column: numbers for column in columns}).map(
            lambda extra: {**row, **extra}
        )
    )


CASES = SESSION_ID.flatmap(
    lambda sid: st.tuples(
        _with_numbers(session_rows(st.just(sid)), ("turn_count",), null=True).flatmap(
            lambda row: _with_numbers(st.just(row), ("created_at", "last_active"), null=False)
        ),
        st.lists(
            _with_numbers(message_rows(sid), ("tool_duration_ms",), null=True).flatmap(
                lambda row: _with_numbers(st.just(row), ("ts",), null=False)
            ),
            min_size=1,
            max_size=4,
        ),
    )
)


def _refill(store, session: dict, messages: list[dict]) -> None:
    conn = sqlite3.connect(store.path)
    with conn:
        for table in ("session_messages", "session_state", "sessions"):
            conn.execute(f"DELETE FROM {table}")
        insert(conn, "sessions", session)
        for row in messages:
            insert(conn, "session_messages", row)
    conn.close()


def test_the_feed_turns_numbers_sqlite_cannot_hold_into_none():
    assert feed.as_int(2**63 - 1) == 2**63 - 1
    assert feed.as_int(-(2**63)) == -(2**63)
    assert feed.as_int(str(2**63)) is None
    assert feed.as_int(str(-(2**63) - 1)) is None
    assert feed.as_int(1e300) is None
    assert feed.as_int(1.5) is None
    assert feed.as_int(b"12") == 12
    assert feed.as_int(float("inf")) is None


@STORE_DB
@given(case=CASES)
def test_sync_index_takes_any_row_and_the_pages_still_render(store, var_dir, admin_client, case):
    admin_client.raise_request_exception = False
    session, messages = case
    _refill(store, session, messages)
    call_command("sync_index", "--rebuild", "--quiet")
    run = sync.last_run()
    assert not run.failed, run.error
    assert run.finished_at_ms is not None
    for url in ("/", "/?window=all", "/tools/", "/sessions/", "/search/?q=abc", "/search/?q=1"):
        response = admin_client.get(url)
        assert response.status_code < 500, (url, response.content[:300])
