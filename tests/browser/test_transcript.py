"""The session page in a real browser: htmx paging, lazy stats, tool cards, big values."""

from __future__ import annotations

from sessions_admin.ids import session_url
from sessions_admin.store import transcript as T
from tests.conftest import STORE_DB


@STORE_DB
def test_a_staff_member_reads_a_long_session_expands_a_call_and_loads_more(
    store, logged_in_page, live_server
):
    sid = store.add_session("ops/sess 1?#", title="deploy <b>rollback</b>")
    store.add_message(sid, "user", "Roll back <script>alert(1)</script>")
    store.add_message(sid, "assistant", "Checking.", tool_call_id="call_1", model_id="m-1")
    store.add_message(
        sid,
        "tool",
        "",
        tool_name="registry.lookup",
        tool_call_id="call_1",
        tool_target="system.registry",
        tool_op="lookup",
        tool_args={"path": "/srv/<x>"},
        tool_result={"ok": True, "rows": 3},
        tool_duration_ms=120,
    )
    huge = store.add_message(sid, "tool", "big " * 30_000 + "THE END", tool_name="dump")
    for i in range(T.PAGE_SIZE + 20):
        store.add_message(sid, ("user", "assistant")[i % 2], f"filler message {i}")
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))

    assert page.get_by_text("Roll back <script>alert(1)</script>").is_visible()
    # Statistics arrive by htmx after the first render.
    page.locator("#session-stats table.tool-stats").wait_for()
    assert page.locator("#session-stats").get_by_text("registry.lookup").is_visible()

    # A tool call's args expand into highlighted JSON.
    args = page.locator(".json-block").first
    assert not args.locator("pre.json").is_visible()
    args.locator("summary").click()
    assert args.locator(".j-str", has_text='"/srv/<x>"').is_visible()

    # The call links to its result.
    page.get_by_role("link", name="result ↓").click()
    assert page.url.endswith("#message-3")

    # A huge value is truncated; "show full" loads the rest in place.
    body = page.locator(f"#value-{huge}-content")
    assert "THE END" not in body.inner_text()
    body.get_by_role("link", name="show full").click()
    body.get_by_text("THE END", exact=False).wait_for()

    # Load more appends the next page without leaving it.
    before = page.locator("li.msg").count()
    assert before == T.PAGE_SIZE
    page.get_by_role("link", name="Load more").click()
    page.get_by_text("End of the session").wait_for()
    assert page.locator("li.msg").count() == T.PAGE_SIZE + 24
    assert page.locator(f'[id="message-{huge}"]').count() == 1

    # The export menu opens.
    page.get_by_text("Export ▾").click()
    assert page.get_by_role("link", name="JSONL (one message a line)").is_visible()
    assert page.console_errors == []


@STORE_DB
def test_a_permalink_opens_the_page_scrolled_to_its_message(store, logged_in_page, live_server):
    sid = store.add_session()
    ids = [store.add_message(sid, "user", f"message number {i}") for i in range(400)]
    page = logged_in_page
    target = ids[321]
    page.goto(live_server.url + session_url(sid, at=target) + f"#message-{target}")
    item = page.locator(f"#message-{target}")
    assert "anchored" in item.get_attribute("class")
    assert item.is_visible()
    assert page.evaluate("window.scrollY") > 0
    page.get_by_role("link", name="Load earlier").click()
    page.locator(f"#message-{ids[300]}").wait_for(state="attached")
    assert page.console_errors == []


@STORE_DB
def test_a_bare_message_anchor_deep_in_a_long_session_opens_the_page_at_that_message(
    store, logged_in_page, live_server
):
    sid = store.add_session("sess_long")
    ids = [
        store.add_message(sid, ("user", "assistant")[i % 2], f"message number {i}")
        for i in range(T.PAGE_SIZE * 3)
    ]
    deep = ids[T.PAGE_SIZE * 2 + 7]
    page = logged_in_page
    page.goto(live_server.url + session_url(sid) + f"#message-{deep}")
    page.wait_for_url(f"**/?at={deep}#message-{deep}")
    target = page.locator(f"#message-{deep}")
    target.wait_for()
    assert target.is_visible()
    assert page.get_by_text(f"message number {T.PAGE_SIZE * 2 + 7}", exact=True).is_visible()
    assert page.console_errors == []
