"""The transcript's outline of tool calls (store.transcript.tool_outline and its
geometry in views.transcript_items), and a tool result shown once."""

from __future__ import annotations

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from sessions_admin.store.transcript import OutlineCall, OutlineRows
from sessions_admin.views import transcript_items as TI
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


def add_calls(store, sid: str, n: int, *, every: int = 1, start: int = BASE_MS) -> None:
    """``n`` messages; every ``every``-th is a failed or good tool call, the rest plain."""
    with store.connect() as conn:
        for i in range(n):
            is_call = i % every == 0
            conn.execute(
                "INSERT INTO session_messages (session_id, role, content, tool_name, "
                "tool_result, tool_duration_ms, ts) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    sid,
                    "tool" if is_call else "user",
                    "",
                    "t" if is_call else None,
                    ('{"ok": false}' if i % 3 == 0 else '{"ok": true}') if is_call else None,
                    10 if is_call else None,
                    start + i * 1000,
                ),
            )


@STORE_DB
def test_the_outline_reads_calls_in_order_with_failures_and_durations(store):
    sid = store.add_session("s")
    store.add_message(sid, "user", "hi", ts=BASE_MS)
    first = store.add_message(
        sid,
        "tool",
        "",
        ts=BASE_MS + 5,
        tool_name="a",
        tool_result={"error": "x"},
        tool_duration_ms=4,
    )
    store.add_message(sid, "tool", "", ts=BASE_MS + 9, tool_name="b", tool_duration_ms="slowish")
    rows = T.tool_outline(sid)
    assert [(c.message_id, c.name, c.failed) for c in rows.calls] == [
        (first, "a", True),
        (first + 1, "b", False),
    ]
    assert [c.duration_ms for c in rows.calls] == [4, None]  # a text duration is not a number
    assert not rows.cut and not rows.long_session


@STORE_DB
def test_a_call_written_as_two_rows_is_one_call_at_the_first(store):
    sid = store.add_session("s")
    asked = store.add_message(sid, "assistant", "", ts=BASE_MS, tool_name="t", tool_call_id="c")
    store.add_message(
        sid,
        "tool",
        "",
        ts=BASE_MS + 50,
        tool_name="t",
        tool_call_id="c",
        tool_result={"ok": False},
        tool_duration_ms=50,
    )
    (call,) = T.tool_outline(sid).calls
    assert (call.message_id, call.duration_ms, call.failed) == (asked, 50, True)


@STORE_DB
def test_the_outline_of_a_long_session_stops_at_its_call_limit_and_says_so(store):
    sid = store.add_session("s")
    add_calls(store, sid, 40)
    rows = T.tool_outline(sid, max_calls=25)
    assert len(rows.calls) == 25 and rows.cut and not rows.long_session
    assert len(T.tool_outline(sid, max_calls=40).calls) == 40
    assert not T.tool_outline(sid, max_calls=40).cut


@STORE_DB
def test_the_outline_reads_only_the_first_messages_of_a_huge_session(store):
    sid = store.add_session("s")
    add_calls(store, sid, 30_000, every=100)
    rows = T.tool_outline(sid, max_calls=300, max_messages=5_000)
    assert len(rows.calls) == 50  # one call in a hundred, among the first 5,000 messages
    assert rows.cut and rows.long_session


def call(mid: int, ts: int | None, duration: int | None, failed: bool = False) -> OutlineCall:
    return OutlineCall(mid, "t", ts, duration, failed)


def test_bars_are_as_long_as_their_calls_on_one_scale():
    rows = OutlineRows(
        [call(1, 1_000, 1_000), call(2, 5_000, 250), call(3, None, 10)], False, False
    )
    outline = TI.tool_outline("s", rows, {1, 2, 3}, slow_ms=800)
    assert [(b.x, b.width, b.drawn) for b in outline.bars] == [
        ("0.0", "1000.0", True),
        ("0.0", "250.0", True),
        ("0.0", "0.0", False),  # no time: no bar, but still a row that jumps to its message
    ]
    assert not outline.overlapping
    assert outline.slow == 1 and "is-slow" in outline.bars[0].classes


def test_calls_that_overlap_in_time_are_drawn_as_a_waterfall():
    # Three calls: 0-400, 100-300 and 200-600 ms overlap; one later call alone.
    rows = OutlineRows(
        [call(1, 400, 400), call(2, 300, 200), call(3, 600, 400), call(4, 10_000, 100)],
        False,
        False,
    )
    outline = TI.tool_outline("s", rows, set(), slow_ms=10_000)
    assert outline.overlapping
    assert [(b.x, b.width) for b in outline.bars] == [
        ("0.0", "666.7"),
        ("166.7", "333.3"),
        ("333.3", "666.7"),
        ("0.0", "166.7"),
    ]


def test_a_bar_links_to_its_message_on_the_page_or_to_the_page_around_it():
    rows = OutlineRows([call(7, 10, 1, failed=True), call(9, 20, 1)], True, False)
    outline = TI.tool_outline("s/1", rows, {7}, slow_ms=100)
    assert outline.bars[0].href == "#message-7"
    assert outline.bars[1].href == session_url("s/1", at=9) + "#message-9"
    assert outline.failed == 1 and outline.cut
    assert 'class="outline-call is-error"' in outline.rows_html


def test_outline_rows_escape_the_tool_name():
    rows = OutlineRows([OutlineCall(1, "<b>x</b>", 10, 1, False)], False, False)
    html = TI.tool_outline("s", rows, {1}, slow_ms=100).rows_html
    assert "<b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html


def test_content_that_repeats_the_result_keeps_only_what_it_adds():
    result = '{"ok": false, "error": {"code": "E", "message": "boom"}}'
    shown = TI.content_without_result("t failed: E: boom\n" + result[:30] + "…", result)
    assert shown == "t failed: E: boom"
    assert TI.content_without_result(result, result) == ""
    # Anything else is left as it is: a short tail may agree by chance.
    assert TI.content_without_result('note\n{"ok"', result) == 'note\n{"ok"'
    assert TI.content_without_result("a summary only", result) == "a summary only"


def test_an_off_page_link_of_a_session_with_an_odd_id_is_escaped_in_the_rows():
    rows = OutlineRows([call(9, 20, 1)], False, False)
    outline = TI.tool_outline(".", rows, set(), slow_ms=100)
    assert outline.bars[0].href == session_url(".", at=9) + "#message-9"
    assert "&amp;at=9#message-9" in outline.rows_html and "&at=" not in outline.rows_html
