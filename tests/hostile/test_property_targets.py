"""The target menu's distinct targets (one recursive statement of index seeks) equal a
brute-force reading of the store, whatever storage class each target_key holds,
TEXT that is not valid UTF-8 included."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.store import queries
from sessions_admin.store.connection import run_sql
from tests.conftest import STORE_DB
from tests.strategies import insert_row, not_utf8_texts, sqlite_values

TARGETS = st.lists(
    sqlite_values(null=False) | not_utf8_texts().map(lambda pair: pair[0]), min_size=0, max_size=25
)


@STORE_DB
@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(targets=TARGETS, limit=st.integers(min_value=1, max_value=30))
def test_distinct_targets_equal_a_brute_force_read(store, targets, limit):
    conn = sqlite3.connect(store.path)
    with conn:
        conn.execute("DELETE FROM sessions")
        for number, target in enumerate(targets):
            insert_row(
                conn,
                "sessions",
                {"id": f"s{number}", "target_key": target, "created_at": 0, "last_active": 0},
            )
    conn.close()
    # Brute force: every row grouped, in the index's order, read as every page reads.
    expected = run_sql(
        "SELECT target_key FROM sessions GROUP BY target_key ORDER BY target_key LIMIT ?",
        [limit],
    )
    assert queries.distinct_targets(limit) == [row[0] for row in expected]
