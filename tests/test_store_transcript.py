"""sessions_admin.store.transcript: keyset pages, truncation, pairing, stats, export rows."""

from __future__ import annotations

import json

import pytest

from sessions_admin.params import BadParameter
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def _long_session(store, n: int, *, ties: bool = True, session_id: str = "long") -> list[int]:
    """``n`` messages, many sharing a timestamp, ids not in ts order; returns ids by (ts, id)."""
    store.add_session(session_id)
    with store.connect() as conn:
        for i in range(n):
            # Every third message shares its ts with the previous one, and the ts
            # run backwards in blocks so id order differs from ts order.
            ts = BASE_MS + ((i // 3) if ties else i) * 1000 + (5_000_000 if i % 10 < 5 else 0)
            conn.execute(
                "INSERT INTO session_messages (session_id, role, content, ts) VALUES (?, ?, ?, ?)",
                (session_id, ("user", "assistant", "tool")[i % 3], f"message {i}", ts),
            )
    return [
        row[0]
        for row in store.execute(
            "SELECT id FROM session_messages WHERE session_id = ? ORDER BY ts, id", (session_id,)
        )
    ]


@STORE_DB
def test_forward_pages_cover_every_message_once_in_order(store):
    expected = _long_session(store, 257)
    seen: list[int] = []
    page = T.message_page("long", limit=20)
    assert not page.has_before
    while True:
        seen += [m.id for m in page.messages]
        if not page.has_after:
            break
        page = T.message_page("long", after=page.last_id, limit=20)
        assert page.has_before
    assert seen == expected


@STORE_DB
def test_backward_pages_from_the_end_cover_every_message_once(store):
    expected = _long_session(store, 133)
    page = T.message_page("long", end=True, limit=15)
    assert not page.has_after
    seen = [m.id for m in page.messages]
    while page.has_before:
        page = T.message_page("long", before=page.first_id, limit=15)
        seen = [m.id for m in page.messages] + seen
    assert seen == expected


@STORE_DB
def test_filtered_pages_neither_skip_nor_repeat(store):
    expected = _long_session(store, 200)
    tools = [
        mid
        for mid in expected
        if store.execute("SELECT role FROM session_messages WHERE id = ?", (mid,))[0][0] == "tool"
    ]
    flt = T.MessageFilter(role="tool")
    page = T.message_page("long", flt, limit=9)
    seen = [m.id for m in page.messages]
    while page.has_after:
        page = T.message_page("long", flt, after=page.last_id, limit=9)
        seen += [m.id for m in page.messages]
    assert seen == tools


@STORE_DB
def test_a_permalink_page_holds_the_message_with_context_around_it(store):
    expected = _long_session(store, 3000)
    target = expected[2500]
    page = T.message_page("long", at=target, limit=100)
    ids = [m.id for m in page.messages]
    assert target in ids
    assert page.anchor == target
    assert ids == expected[expected.index(ids[0]) : expected.index(ids[0]) + 100]
    assert ids.index(target) == 10
    assert page.has_before and page.has_after


@STORE_DB
def test_the_end_page_holds_the_last_messages(store):
    expected = _long_session(store, 250)
    page = T.message_page("long", end=True, limit=100)
    assert [m.id for m in page.messages] == expected[-100:]
    assert page.has_before and not page.has_after


@STORE_DB
def test_a_cursor_from_another_session_is_unknown(store):
    _long_session(store, 5)
    other = store.add_session("other")
    foreign = store.add_message(other, "user", "not yours")
    with pytest.raises(T.UnknownMessage):
        T.message_page("long", after=foreign)
    with pytest.raises(T.UnknownMessage):
        T.message_page("long", at=999_999)
    with pytest.raises(T.UnknownMessage):
        T.message_value("long", foreign, "content")


@STORE_DB
def test_a_large_value_arrives_truncated_with_its_size_and_loads_in_full_on_demand(store):
    sid = store.add_session()
    huge = "é" * (T.LARGE_VALUE_CHARS + 10)
    args = json.dumps({"blob": "x" * 100_000})
    mid = store.add_message(sid, "tool", huge, tool_name="t", tool_args=args, tool_result="{}")
    row = T.message_page(sid).messages[0]
    assert row.content.truncated and len(row.content.text) == T.PREVIEW_CHARS
    assert row.content.size == len(huge.encode())
    assert row.tool_args.truncated and row.tool_args.size == len(args)
    assert not row.tool_result.truncated and row.tool_result.text == "{}"
    assert T.message_value(sid, mid, "content") == huge
    assert T.message_value(sid, mid, "tool_args") == args
    with pytest.raises(BadParameter, match="^field: 'session_id'"):
        T.message_value(sid, mid, "session_id")


@pytest.mark.parametrize(
    ("result", "error"),
    [
        ({"ok": False}, True),
        ({"ok": True}, False),
        ({"success": False}, True),
        ({"error": "boom"}, True),
        ({"error": ""}, False),
        ({"error": None}, False),
        ({"error": {}}, False),
        ({"error": []}, False),
        ({"error": {"code": 1}}, True),
        ({"error": 0}, False),
        ({"error": True}, True),
    ],
)
@STORE_DB
def test_a_truncated_result_still_tells_whether_it_reports_an_error(store, result, error):
    sid = store.add_session()
    text = json.dumps({**result, "pad": "x" * (T.LARGE_VALUE_CHARS + 1)})
    store.add_message(sid, "tool", "", tool_name="t", tool_result=text)
    row = T.message_page(sid).messages[0]
    assert row.tool_result.truncated
    assert row.result_error is error
    # The same rule as the untruncated path.
    from sessions_admin.store.jsontext import parse_json_text

    assert parse_json_text(text).reports_error is error


@STORE_DB
def test_a_truncated_broken_result_is_not_an_error(store):
    sid = store.add_session()
    store.add_message(sid, "tool", "", tool_result='{"ok": false, ' + "x" * 70_000)
    assert T.message_page(sid).messages[0].result_error is False


@STORE_DB
def test_neighbours_find_the_other_half_of_a_call_just_off_the_page(store):
    sid = store.add_session()
    for i in range(4):
        store.add_message(sid, "user", f"u{i}")
    call = store.add_message(sid, "assistant", "asks", tool_call_id="c1")
    result = store.add_message(sid, "tool", "", tool_call_id="c1", tool_name="t")
    first = T.message_page(sid, limit=5)
    assert first.messages[-1].id == call
    assert first.neighbours == {"c1": [(result, "tool", False)]}
    second = T.message_page(sid, after=call, limit=5)
    assert second.neighbours == {"c1": [(call, "assistant", True)]}


@STORE_DB
def test_the_text_search_matches_every_text_column_and_escapes_like_wildcards(store):
    sid = store.add_session()
    a = store.add_message(sid, "user", "100% sure")
    b = store.add_message(sid, "tool", "", tool_name="fs.read", tool_args={"path": "/a_b"})
    store.add_message(sid, "user", "100 percent")
    store.add_message(sid, "user", "axb")
    assert [m.id for m in T.message_page(sid, T.MessageFilter(q="0%")).messages] == [a]
    assert [m.id for m in T.message_page(sid, T.MessageFilter(q="a_b")).messages] == [b]
    assert [m.id for m in T.message_page(sid, T.MessageFilter(tool="fs.read")).messages] == [b]


@STORE_DB
def test_stats_count_roles_and_time_tools(store):
    sid = store.add_session()
    store.add_message(sid, "user", "q", ts=BASE_MS)
    for duration in (100, 300, 5000):
        store.add_message(
            sid, "tool", "", tool_name="sql.query", tool_duration_ms=duration, ts=BASE_MS + duration
        )
    store.add_message(sid, "tool", "", tool_name="fs.read", ts=BASE_MS + 6000)
    store.add_message(sid, "critic", "hm", ts=BASE_MS + 60_000)
    stats = T.session_stats(sid)
    assert stats.by_role == [("user", 1), ("tool", 4), ("critic", 1)]
    assert stats.messages == 6
    assert stats.duration_ms == 60_000
    sql = next(t for t in stats.tools if t.name == "sql.query")
    assert (sql.count, sql.total_ms, sql.p50_ms, sql.max_ms) == (3, 5400, 300, 5000)
    fs = next(t for t in stats.tools if t.name == "fs.read")
    assert (fs.count, fs.timed, fs.p50_ms, fs.max_ms) == (1, 0, None, None)


@STORE_DB
def test_stats_of_an_empty_session(store):
    sid = store.add_session()
    stats = T.session_stats(sid)
    assert stats.by_role == [] and stats.tools == [] and stats.duration_ms is None


@STORE_DB
def test_export_iteration_walks_the_session_in_chunks_in_order(store):
    expected = _long_session(store, 101)
    rows = list(T.iter_messages("long", chunk=7))
    assert [row[0] for row in rows] == expected
    assert len(rows[0]) == len(T.MESSAGE_COLUMNS)


@STORE_DB
def test_state_rows_and_values(store):
    sid = store.add_session()
    store.add_state(sid, "snapshot", {"a": 1}, updated_at=BASE_MS + 5)
    store.add_state(sid, "big", "[" + "1," * 40_000 + "1]")
    rows = T.state_rows(sid)
    assert [r.key for r in rows] == ["big", "snapshot"]
    assert rows[0].value.truncated and not rows[1].value.truncated
    assert T.state_value(sid, "big").value.text.endswith("1]")
    assert T.state_keys(sid) == ["big", "snapshot"]
    assert list(T.iter_state(sid))[1] == ("snapshot", '{"a": 1}', BASE_MS + 5)
    with pytest.raises(T.UnknownMessage):
        T.state_value(sid, "nope")


def test_strict_json_rejects_what_python_alone_would_accept():
    assert T.strict_json_valid('{"a": [1, 2.5, "x", null, true]}')
    assert not T.strict_json_valid('{"a": NaN}')
    assert not T.strict_json_valid("Infinity")
    assert not T.strict_json_valid('{"a": 1')
    assert not T.strict_json_valid("")
