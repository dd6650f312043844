"""TEXT that is not valid UTF-8 in every TEXT column of the three tables: nothing stops.

Each case stores cut text (``CAST(x'…' AS TEXT)``, as a writer that cut a
multi-byte character leaves it) in every TEXT column of a session with a
plain id, of a session whose id itself is such text, of their messages and
their state. Then the sync finishes and the search finds the valid part of
the text, every screen answers (and says "not valid UTF-8" where the value
shows), the exports are complete and say what they kept, and clear-all
empties the store.
"""

from __future__ import annotations

import json
import sqlite3

from django.core.management import call_command
from hypothesis import given, settings
from hypothesis import strategies as st

from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index import search as index_search
from sessions_admin.ourdata.index.search import SearchQuery
from tests.conftest import STORE_DB
from tests.strategies import insert_row, not_utf8_texts

MARK = b"not valid UTF-8"
PLAIN_ID = "sess_plain"
SESSION_TEXT = ("target_key", "profile_key", "principal_id", "title")
MESSAGE_TEXT = (
    "role",
    "content",
    "tool_name",
    "tool_call_id",
    "tool_target",
    "tool_op",
    "tool_args",
    "tool_result",
    "trace_id",
    "span_id",
    "model_id",
)
FEW = settings(max_examples=12)  # each case syncs and walks a dozen pages


def _columns(names: tuple[str, ...]) -> st.SearchStrategy[dict]:
    return st.fixed_dictionaries({name: not_utf8_texts() for name in names})


CASES = st.tuples(
    not_utf8_texts(),  # the second session's id
    _columns(SESSION_TEXT),
    _columns(SESSION_TEXT),
    _columns(MESSAGE_TEXT),
    _columns(MESSAGE_TEXT),
    st.tuples(not_utf8_texts(), not_utf8_texts()),  # a state key and value
)


def _fill(path, case) -> tuple[str, str]:
    """Store the case; returns the valid parts of the two messages' content."""
    (bad_id, _), plain_session, odd_session, plain_message, odd_message, (key, value) = case
    conn = sqlite3.connect(path)
    with conn:
        for table in ("session_messages", "session_state", "sessions"):
            conn.execute(f"DELETE FROM {table}")
        for sid, columns in ((PLAIN_ID, plain_session), (bad_id, odd_session)):
            row = {name: text for name, (text, _) in columns.items()}
            insert_row(conn, "sessions", {"id": sid, **row, "created_at": 1, "last_active": 2})
            insert_row(
                conn,
                "session_state",
                {"session_id": sid, "key": key[0], "value": value[0], "updated_at": 1},
            )
        for sid, columns in ((PLAIN_ID, plain_message), (bad_id, odd_message)):
            row = {name: text for name, (text, _) in columns.items()}
            insert_row(conn, "session_messages", {"session_id": sid, **row, "ts": 3})
    conn.close()
    return plain_message["content"][1], odd_message["content"][1]


def _body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def _found(query: str) -> set[int]:
    page = index_search.search(SearchQuery(q=query))
    return {hit.message.id for group in page.groups for hit in group.hits}


def _check_pages(client) -> None:
    for url in (
        "/sessions/",
        f"/sessions/{PLAIN_ID}/",
        f"/sessions/{PLAIN_ID}/state/",
        f"/sessions/{PLAIN_ID}/stats/",
        "/search/?q=%EF%BF%BD",  # U+FFFD: the replacement character is searchable text
    ):
        response = client.get(url)
        assert response.status_code == 200, url
        assert MARK in _body(response), url
    for url in ("/", "/tools/", "/targets/", "/admin/sessions_admin/session/"):
        assert client.get(url).status_code == 200, url
    assert client.get("/admin/sessions_admin/message/").status_code == 200


def _check_exports(client) -> None:
    document = json.loads(_body(client.get(f"/sessions/{PLAIN_ID}/export/?format=json")))
    (message,) = document["messages"]
    assert message["content"]["not_valid_utf8"] is True
    assert (
        bytes.fromhex(message["content"]["hex"]).decode("utf-8", "replace")
        == (message["content"]["text"])
    )
    assert document["session"]["title"]["not_valid_utf8"] is True
    assert message["tool_args"] is None and message["tool_args_raw"]["not_valid_utf8"]
    (state,) = document["state"]
    assert state["key"]["not_valid_utf8"] and state["value_raw"]["not_valid_utf8"]
    lines = _body(client.get(f"/sessions/{PLAIN_ID}/export/?format=jsonl")).splitlines()
    assert [json.loads(line)["id"] for line in lines] == [message["id"]]
    markdown = _body(client.get(f"/sessions/{PLAIN_ID}/export/?format=md"))
    assert MARK in markdown and b"## State" in markdown and b"incomplete" not in markdown


@STORE_DB
@FEW
@given(case=CASES)
def test_text_that_is_not_utf8_in_every_column_stops_nothing(store, var_dir, admin_client, case):
    admin_client.raise_request_exception = False
    plain_part, odd_part = _fill(store.path, case)
    call_command("sync_index", "--rebuild", "--quiet")
    # And a pass after the build: it walks every session row, ids not UTF-8 included.
    call_command("sync_index", "--quiet")
    run = sync.last_run()
    assert not run.failed, run.error
    ids = dict(
        store.execute(
            "SELECT CAST(session_id AS BLOB) = ?, id FROM session_messages", (PLAIN_ID.encode(),)
        )
    )
    for part, message_id in ((plain_part, ids[1]), (odd_part, ids[0])):
        if part.strip():
            assert message_id in _found(part.strip()), part
    _check_pages(admin_client)
    _check_exports(admin_client)
    call_command("clear_sessions", "--all", "--yes")
    counts = [store.count(t) for t in ("sessions", "session_messages", "session_state")]
    assert counts == [0, 0, 0]
