"""The transcript, for reading: the outline of tool calls, copy buttons, times with their
zone, each value once."""

from __future__ import annotations

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB

RESULT = '{"ok":false,"error":{"code":"ETIMEDOUT","message":"request timed out after 5000 ms"}}'


def calls_session(store) -> tuple[str, dict[str, int]]:
    sid = store.add_session("sess_read", title="reading")
    ids = {"user": store.add_message(sid, "user", "why is it slow?", ts=1_700_000_000_000)}
    ids["slow"] = store.add_message(
        sid,
        "tool",
        "",
        ts=1_700_000_010_000,
        tool_name="sql.query",
        tool_call_id="c1",
        tool_args={"q": "select 1"},
        tool_result={"ok": True, "rows": 1},
        tool_duration_ms=9_000,
    )
    ids["failed"] = store.add_message(
        sid,
        "tool",
        "http.get failed: ETIMEDOUT\n" + RESULT[:60] + "…",
        ts=1_700_000_020_000,
        tool_name="http.get",
        tool_call_id="c2",
        tool_args={"url": "https://example.test/"},
        tool_result=RESULT,
        tool_duration_ms=300,
    )
    for n in range(T.PAGE_SIZE + 5):
        store.add_message(
            sid, ("user", "assistant")[n % 2], f"filler {n}", ts=1_700_000_030_000 + n
        )
    ids["deep"] = store.add_message(
        sid, "tool", "", ts=1_700_001_000_000, tool_name="fs.read", tool_duration_ms=5
    )
    return sid, ids


@STORE_DB
def test_the_outline_lists_the_calls_with_bars_and_jumps_to_each(
    store, logged_in_page, live_server
):
    sid, ids = calls_session(store)
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))
    rows = page.locator("#outline li.outline-call")
    assert rows.count() == 3
    assert rows.nth(0).inner_text().startswith("sql.query")
    assert "is-slow" in rows.nth(0).get_attribute("class")
    assert "is-error" in rows.nth(1).get_attribute("class")
    # A bar as long as its call: the 9 s call spans the width, the 300 ms one a thirtieth.
    widths = rows.locator("rect").evaluate_all("rs => rs.map(r => r.getBBox().width)")
    assert widths[0] == 1000 and 30 <= widths[1] <= 34
    colours = rows.locator("rect").evaluate_all("rs => rs.map(r => getComputedStyle(r).fill)")
    assert colours[0] != colours[1] and colours[1] == "rgb(179, 38, 30)"
    rows.nth(1).locator("a").click()
    page.wait_for_url(f"**#message-{ids['failed']}")
    assert page.locator(f"#message-{ids['failed']}").is_visible()
    # A call beyond this page opens the page around it.
    rows.nth(2).locator("a").click()
    page.wait_for_url(f"**?at={ids['deep']}#message-{ids['deep']}")
    page.locator(f"#message-{ids['deep']}").wait_for()
    assert page.console_errors == []


@STORE_DB
def test_copy_buttons_copy_a_message_a_value_and_a_permalink(store, logged_in_page, live_server):
    sid, ids = calls_session(store)
    page = logged_in_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.goto(live_server.url + session_url(sid))
    message = page.locator(f"#message-{ids['failed']}")
    message.get_by_role("button", name="copy text").click()
    assert page.evaluate("navigator.clipboard.readText()") == "http.get failed: ETIMEDOUT"
    message.locator("details").nth(1).locator("summary").click()
    message.get_by_role("button", name="copy result").click()
    page.wait_for_function("navigator.clipboard.readText().then(t => t.includes('ETIMEDOUT'))")
    copied = page.evaluate("navigator.clipboard.readText()")
    assert '"code": "ETIMEDOUT"' in copied or '"code":"ETIMEDOUT"' in copied
    message.get_by_role("button", name="copy link").click()
    page.wait_for_function("navigator.clipboard.readText().then(t => t.startsWith('http'))")
    link = page.evaluate("navigator.clipboard.readText()")
    assert link.startswith(live_server.url) and link.endswith(f"#message-{ids['failed']}")
    # Every message, every value and every permalink has one.
    messages = page.locator("#messages > li.msg").count()
    assert page.locator("#messages button[data-copy-link]").count() == messages
    assert page.locator("#messages details button.copy").count() == 4
    assert page.console_errors == []


@STORE_DB
def test_times_show_their_zone_and_a_result_is_shown_once(store, logged_in_page, live_server):
    sid, ids = calls_session(store)
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))
    message = page.locator(f"#message-{ids['failed']}")
    assert message.locator("time").inner_text() == "2023-11-14 22:13:40 UTC"
    # The content keeps its summary line; the copy of the result is in the result block only.
    assert message.locator("pre.content").inner_text() == "http.get failed: ETIMEDOUT"
    assert message.inner_text().count("request timed out") == 1  # the summary line of the block
    assert page.console_errors == []
