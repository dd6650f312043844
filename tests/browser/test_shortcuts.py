"""The keyboard, the same on every screen: "/", j/k and Enter, [ and ], e, Escape, "?",
and the skip link."""

from __future__ import annotations

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB


def active(page, expression: str = "el => el"):
    return page.evaluate(
        f"(() => {{ const el = document.activeElement; return ({expression})(el); }})()"
    )


def failing_session(store) -> tuple[str, dict[str, int]]:
    sid = store.add_session("sess_keys", title="keyboard")
    ids = {"user": store.add_message(sid, "user", "first question", ts=1_000)}
    for n, ok in enumerate((True, False, True, False)):
        ids[f"call{n}"] = store.add_message(
            sid,
            "tool",
            f"call {n}",
            ts=2_000 + n * 1_000,
            tool_name="http.get",
            tool_call_id=f"c{n}",
            tool_args={"n": n},
            tool_result={"ok": ok, "error": None if ok else f"ETIMEDOUT {n}"},
            tool_duration_ms=100 * (n + 1),
        )
    ids["last"] = store.add_message(sid, "assistant", "done", ts=9_000)
    return sid, ids


@STORE_DB
def test_slash_focuses_the_header_search_with_the_cursor_after_the_query(
    store, logged_in_page, live_server
):
    store.add_session("sess_a", title="one")
    page = logged_in_page
    for path in ("/sessions/", "/tools/", session_url("sess_a")):
        page.goto(live_server.url + path)
        page.locator("#goto-id").fill("timeout")
        page.locator("main").click(position={"x": 5, "y": 5})
        page.keyboard.press("/")
        assert active(page, "el => el.id") == "goto-id", path
        assert active(page, "el => [el.selectionStart, el.selectionEnd]") == [7, 7]
        assert page.locator("#goto-id").input_value() == "timeout"  # no "/" typed into it
    assert page.console_errors == []


@STORE_DB
def test_j_and_k_move_between_rows_and_enter_opens_one(store, logged_in_page, live_server):
    for n in range(3):
        store.add_session(f"sess_{n}", title=f"row {n}", last_active=1_000 + n)
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert active(page, "el => el.dataset.sessionId") == "sess_1"
    page.keyboard.press("k")
    assert active(page, "el => el.dataset.sessionId") == "sess_2"
    assert page.locator("tr.kb-current").count() == 1
    page.keyboard.press("Enter")
    page.wait_for_url("**" + session_url("sess_2"))
    assert page.console_errors == []


@STORE_DB
def test_shortcuts_do_not_fire_while_typing(store, logged_in_page, live_server):
    store.add_session("sess_a", title="one")
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.locator("#filters input[name=q]").focus()
    page.keyboard.type("jk/e?")
    assert page.locator("#filters input[name=q]").input_value() == "jk/e?"
    assert page.locator("dialog#shortcuts[open]").count() == 0
    assert page.locator(".kb-current").count() == 0
    # Escape leaves the box (its text stays), and the keys are shortcuts again.
    page.keyboard.press("Escape")
    assert active(page, "el => el.tagName") == "BODY"
    assert page.locator("#filters input[name=q]").input_value() == "jk/e?"


@STORE_DB
def test_brackets_jump_between_failed_calls_and_e_expands_everything(
    store, logged_in_page, live_server
):
    sid, ids = failing_session(store)
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))
    page.keyboard.press("]")
    assert active(page, "el => el.id") == f"message-{ids['call1']}"
    page.keyboard.press("]")
    assert active(page, "el => el.id") == f"message-{ids['call3']}"
    page.keyboard.press("[")
    assert active(page, "el => el.id") == f"message-{ids['call1']}"
    # j from a failure goes to the next message, failed or not.
    page.keyboard.press("j")
    assert active(page, "el => el.id") == f"message-{ids['call2']}"
    closed = "document.querySelectorAll('#messages details:not([open])').length"
    assert page.evaluate(closed) == 8
    page.keyboard.press("e")
    assert page.evaluate(closed) == 0
    assert page.get_by_role("button", name="Collapse all").is_visible()
    page.keyboard.press("e")
    assert page.evaluate(closed) == 8
    assert page.console_errors == []


@STORE_DB
def test_question_mark_lists_the_shortcuts_and_escape_closes_it(store, logged_in_page, live_server):
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.keyboard.press("?")
    dialog = page.locator("dialog#shortcuts[open]")
    dialog.wait_for()
    text = dialog.inner_text()
    for key in ("/", "j", "k", "Enter", "[", "]", "e", "Esc", "?"):
        assert key in text
    page.keyboard.press("Escape")
    dialog.wait_for(state="hidden")
    assert page.console_errors == []


@STORE_DB
def test_escape_closes_the_export_menu(store, logged_in_page, live_server):
    sid = store.add_session("sess_export", title="export me")
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))
    menu = page.locator("details.export-menu")
    menu.locator("summary").click()
    assert menu.evaluate("d => d.open") is True
    page.keyboard.press("Escape")
    assert menu.evaluate("d => d.open") is False
    # A click elsewhere closes it too.
    menu.locator("summary").click()
    page.locator("main h1").click()
    assert menu.evaluate("d => d.open") is False


@STORE_DB
def test_the_skip_link_is_the_first_tab_stop_and_lands_on_the_main_content(
    store, logged_in_page, live_server
):
    store.add_session("sess_a", title="one")
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.keyboard.press("Tab")
    assert active(page, "el => el.textContent") == "Skip to main content"
    assert page.locator(".skip-link").evaluate("a => a.getBoundingClientRect().top") >= 0
    page.keyboard.press("Enter")
    assert active(page, "el => el.id") == "main"
    page.keyboard.press("Tab")
    assert active(page, "el => el.closest('main') !== null") is True
