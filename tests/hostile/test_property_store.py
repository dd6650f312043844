"""Rows of any storage class in any column: every screen still renders.

For each generated case the three tables are emptied and refilled with one
session (a text id, so its pages have URLs) whose columns, messages and state
rows hold whatever :mod:`tests.strategies` draws, plus a second session whose
id itself is odd. Then the list, the targets page, the session page with its
state tab and statistics, every value endpoint, the three exports (which must
still parse), the delete dialog, the frames pages and the admin's changelists
and change pages must answer without a 5xx.
"""

from __future__ import annotations

import json
import sqlite3
from urllib.parse import quote

from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.demo.hostile import insert
from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.strategies import message_rows, session_rows, sqlite_values, state_rows

SESSION_ID = st.text(min_size=1, max_size=30).filter(lambda text: "\x00" not in text)
CASES = st.tuples(
    SESSION_ID.flatmap(
        lambda sid: st.tuples(
            session_rows(st.just(sid)),
            st.lists(message_rows(sid), max_size=4),
            st.lists(state_rows(sid), max_size=3),
        )
    ),
    session_rows(sqlite_values()),
)


def _refill(store, session: dict, messages: list[dict], states: list[dict], odd: dict) -> None:
    conn = sqlite3.connect(store.path)
    with conn:
        for table in ("session_messages", "session_state", "sessions"):
            conn.execute(f"DELETE FROM {table}")
        insert(conn, "sessions", session)
        insert(conn, "sessions", odd)
        for row in messages:
            insert(conn, "session_messages", row)
        for row in states:
            insert(conn, "session_state", row)
        ids = [row[0] for row in conn.execute("SELECT id FROM session_messages ORDER BY id")]
        keys = [row[0] for row in conn.execute("SELECT key FROM session_state")]
    conn.close()
    return ids, keys


def _urls(session_id: str, message_ids: list[int], keys: list[object]) -> list[str]:
    urls = [
        "/sessions/",
        "/sessions/?sort=-turn_count",
        "/sessions/?sort=created_at",
        "/targets/",
        session_url(session_id),
        session_url(session_id, tab="state"),
        session_url(session_id, "stats"),
        session_url(session_id, "delete"),
        session_url(session_id, "frames"),
        "/frames/orphans/",
        "/admin/sessions_admin/session/",
        "/admin/sessions_admin/message/",
        f"/admin/sessions_admin/session/{quote(session_id, safe='')}/change/",
    ]
    for message_id in message_ids:
        urls.append(session_url(session_id, at=message_id))
        urls.append(f"/admin/sessions_admin/message/{message_id}/change/")
        for field in ("content", "tool_args", "tool_result"):
            urls.append(session_url(session_id, f"messages/{message_id}/{field}"))
    for key in keys:
        if isinstance(key, str) and key:
            urls.append(session_url(session_id, "state", key=key))
    return urls


def _exports_parse(client, session_id: str) -> None:
    response = client.get(session_url(session_id, "export"))
    assert response.status_code == 200, (session_id, response.status_code, response.content[:300])
    body = b"".join(response.streaming_content)
    json.loads(body)
    lines = b"".join(
        client.get(session_url(session_id, "export", format="jsonl")).streaming_content
    )
    for line in lines.splitlines():
        json.loads(line)
    markdown = client.get(session_url(session_id, "export", format="md"))
    assert b"".join(markdown.streaming_content).startswith(b"# Session")


@STORE_DB
@given(case=CASES)
def test_every_screen_renders_whatever_the_rows_hold(store, admin_client, case):
    admin_client.raise_request_exception = False
    (session, messages, states), odd = case
    message_ids, keys = _refill(store, session, messages, states, odd)
    for url in _urls(session["id"], message_ids, keys):
        response = admin_client.get(url)
        assert response.status_code < 500, url
        if url.endswith("/stats/"):
            fragment = admin_client.get(url, headers={"HX-Request": "true"})
            assert fragment.status_code < 500, url
    _exports_parse(admin_client, session["id"])
