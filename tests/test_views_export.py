"""``/sessions/<id>/export/``: JSON, JSONL and Markdown, streamed, parsing back to the store."""

from __future__ import annotations

import json

import pytest

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS
from tests.transcript_pages import XSS, export_text


def _store_messages(store, sid):
    cols = ", ".join(T.MESSAGE_COLUMNS)
    return [
        dict(zip(T.MESSAGE_COLUMNS, row, strict=True))
        for row in store.execute(
            f"SELECT {cols} FROM session_messages WHERE session_id = ? ORDER BY ts, id", (sid,)
        )
    ]


def _check_exported_message(exported, stored):
    for column, value in stored.items():
        if column in ("tool_args", "tool_result"):
            if value is None:
                assert exported[column] is None
            elif T.strict_json_valid(value):
                assert exported[column] == json.loads(value)
            else:
                assert exported[column] is None and exported[f"{column}_raw"] == value
        else:
            assert exported[column] == value, column


@pytest.fixture
def export_session(store):
    sid = store.add_session("x?y#z", title=XSS)
    store.add_message(sid, "user", "multi\nline ```code``` " + XSS)
    store.add_message(
        sid,
        "tool",
        "",
        tool_name="t",
        tool_call_id="c",
        tool_args='{\n"a": 1\n}',
        tool_result='{"ok": false',
        tool_duration_ms=5,
    )
    store.add_message(sid, "tool", "", tool_name="t", tool_args='{"n": NaN}', tool_result='"s"')
    for i in range(30):
        store.add_message(sid, "assistant", f"reply {i} ünïcødé 🙂", model_id="m")
    store.add_state(sid, "snapshot", {"a": [1, 2]})
    store.add_state(sid, "repl_state", "not json")
    return sid


@STORE_DB
def test_the_json_export_parses_back_to_the_store(export_session, store, viewer_client):
    sid = export_session
    document = json.loads(export_text(viewer_client, sid, "json"))
    assert document["session"]["id"] == sid and document["session"]["title"] == XSS
    stored = _store_messages(store, sid)
    assert len(document["messages"]) == len(stored)
    for exported, row in zip(document["messages"], stored, strict=True):
        _check_exported_message(exported, row)
    state = {item["key"]: item for item in document["state"]}
    assert state["snapshot"]["value"] == {"a": [1, 2]}
    assert state["repl_state"]["value"] is None
    assert state["repl_state"]["value_raw"] == "not json"


@STORE_DB
def test_the_jsonl_export_has_one_message_a_line(export_session, store, viewer_client):
    sid = export_session
    lines = export_text(viewer_client, sid, "jsonl").splitlines()
    stored = _store_messages(store, sid)
    assert len(lines) == len(stored)
    for line, row in zip(lines, stored, strict=True):
        _check_exported_message(json.loads(line), row)


@STORE_DB
def test_the_markdown_export_is_a_readable_transcript(export_session, store, viewer_client):
    sid = export_session
    text = export_text(viewer_client, sid, "md")
    assert text.startswith("# Session `x?y#z`")
    for row in _store_messages(store, sid):
        assert f"message {row['id']}" in text
        if row["content"]:
            assert row["content"] in text
    # Content holding a fence is wrapped in a longer one.
    assert "````\nmulti\nline ```code```" in text
    assert "*(not valid JSON)*" in text
    assert "## State" in text and "`snapshot`" in text


@STORE_DB
def test_the_export_streams_a_long_session_in_chunks(store, viewer_client):
    sid = store.add_session()
    with store.connect() as conn:
        conn.executemany(
            "INSERT INTO session_messages (session_id, role, content, ts) VALUES (?, ?, ?, ?)",
            [(sid, "user", f"m{i}", BASE_MS + i // 3) for i in range(T.EXPORT_CHUNK * 2 + 17)],
        )
    lines = export_text(viewer_client, sid, "jsonl").splitlines()
    assert [json.loads(line)["content"] for line in lines] == [
        f"m{i}" for i in range(T.EXPORT_CHUNK * 2 + 17)
    ]


@STORE_DB
def test_an_unknown_export_format_is_400(store, viewer_client):
    sid = store.add_session()
    assert viewer_client.get(session_url(sid, "export", format="xml")).status_code == 400


HOSTILE_TITLE = "# x\n[link](javascript:alert(1)) ``code`` <b>*bold*</b> &amp; ~~s~~ #"


@STORE_DB
def test_the_markdown_export_escapes_raw_values_in_headings_and_lines(store, viewer_client):
    sid = store.add_session("id`with``ticks", title=HOSTILE_TITLE, principal="`p`")
    store.add_message(sid, "[r](javascript:x)\n# h", "hello")
    text = export_text(viewer_client, sid, "md")
    heading, _, rest = text.partition("\n")
    assert heading == (
        "# Session ```id`with``ticks```: \\# x \\[link\\](javascript:alert(1)) "
        "\\`\\`code\\`\\` \\<b\\>\\*bold\\*\\</b\\> \\&amp; \\~\\~s\\~\\~ \\#"
    )
    assert "- principal: `` `p` ``\n" in rest
    role_heading = next(line for line in text.splitlines() if "· message" in line)
    assert role_heading.startswith("### \\[r\\](javascript:x) \\# h · ")
    # No line but the first is a level-one heading, whatever the values held.
    assert [line for line in text.splitlines() if line.startswith("# ")] == [heading]
