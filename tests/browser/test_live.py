"""A live session page in a browser: what a test appender writes appears within
seconds, without a reload, the reader's place kept and the count said."""

from sessions_admin import clock
from sessions_admin.ids import session_url
from tests.conftest import STORE_DB


@STORE_DB
def test_new_messages_appear_without_moving_the_reader(store, logged_in_page, live_server):
    now = clock.now_ms()
    sid = store.add_session("sess_live", last_active=now)
    for n in range(40):
        store.add_message(sid, "user", f"earlier message {n}", ts=now - 40 + n)
    page = logged_in_page
    page.set_viewport_size({"width": 1440, "height": 700})
    page.goto(live_server.url + session_url(sid))
    page.locator("li.live-row").wait_for(state="attached")
    page.evaluate("window.scrollTo(0, 300)")
    place = page.evaluate("window.scrollY")
    for n in range(3):  # the runtime appends meanwhile
        store.add_message(sid, "assistant", f"written live {n}", ts=now + n)
    pill = page.locator("#live-pill")
    pill.wait_for(state="visible", timeout=6000)
    assert pill.inner_text() == "3 new messages ↓"
    assert page.locator("#messages li", has_text="written live 2").count() == 1
    assert page.evaluate("window.scrollY") == place  # the reader stays where they were
    assert page.locator("li.live-row").count() == 1  # and the page keeps following
    pill.click()
    assert pill.is_hidden()
    assert page.console_errors == []
