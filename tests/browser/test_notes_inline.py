"""A note opens under its message, focused, on any session page: from the message's
"note" link or the n key, with no reload and nothing typed lost."""

from sessions_admin.ids import session_url
from sessions_admin.models import Note
from tests.conftest import STORE_DB


@STORE_DB
def test_a_note_opens_under_its_message_focused_and_saves_there(store, logged_in_page, live_server):
    sid = store.add_session("sess_notes")
    for n in range(3):
        store.add_message(sid, "user", f"message number {n}")
    page = logged_in_page
    page.goto(live_server.url + session_url(sid))
    second = page.locator("#messages > li[id^='message-']").nth(1)
    message_id = second.get_attribute("id").removeprefix("message-")
    url = page.url
    second.locator("a.note-link").click()
    assert page.url == url  # no reload: what was typed elsewhere stays
    assert page.evaluate("document.activeElement.id") == "note-text"
    assert second.locator("#note-form").count() == 1  # right under its message
    page.keyboard.type("this one is wrong")
    page.locator("#note-form button[type=submit]").click()
    page.locator(".note-text", has_text="this one is wrong").first.wait_for()
    assert str(Note.objects.get().message_id) == message_id
    # n on the focused message does the same, outside a review queue too.
    page.keyboard.press("Escape")
    page.locator("body").press("j")
    page.locator("body").press("n")
    assert page.evaluate("document.activeElement.id") == "note-text"
    current = page.locator("#messages > li.kb-current")
    assert current.locator("#note-form").count() == 1
    assert page.console_errors == []
