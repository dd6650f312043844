"""A review queue walked with the keyboard alone: n opens the next session, j moves to a
message, n writes a note on it, p/f give verdicts and go on, until the queue is done."""

from sessions_admin.models import Note, ReviewItem
from sessions_admin.ourdata.review import queues
from tests.conftest import STORE_DB


@STORE_DB
def test_a_reviewer_walks_a_queue_with_the_keyboard(store, logged_in_page, live_server):
    for number in range(2):
        sid = store.add_session(f"sess_k{number}", title=f"session {number}")
        store.add_message(sid, "user", f"first message of {number}")
        store.add_message(sid, "assistant", f"second message of {number}")
    queue = queues.make_queue("kbd", "/sessions/", ["sess_k0", "sess_k1"], capped=False, user=None)
    page = logged_in_page
    page.goto(f"{live_server.url}/reviews/{queue.pk}/")
    page.keyboard.press("?")
    key_n = page.locator("dialog#shortcuts dt:has(kbd:text-is('n')) + dd")
    assert "next session" in key_n.inner_text()
    page.keyboard.press("Escape")
    page.keyboard.press("n")
    page.wait_for_url(f"**/sessions/sess_k0/?review={queue.pk}")
    assert page.locator(".review-keys").is_visible()  # the bar lists its keys
    page.keyboard.press("?")  # and so does the shortcuts dialog
    dialog = page.locator("dialog#shortcuts[open]")
    for key, words in (("n", "note"), ("r", "reason"), ("p", "pass"), ("u", "undo")):
        assert words in dialog.locator(f"dt:has(kbd:text-is('{key}')) + dd").inner_text()
    page.keyboard.press("Escape")
    assert page.locator("dialog#shortcuts[open]").count() == 0
    page.keyboard.press("j")
    page.keyboard.press("j")
    focused = page.evaluate("document.activeElement.id")
    assert focused.startswith("message-")
    page.keyboard.press("n")
    assert page.evaluate("document.activeElement.name") == "text"
    page.keyboard.type("the second message is wrong")
    page.keyboard.press("Tab")  # from the note's text to its "Add note" button
    page.keyboard.press("Enter")
    page.locator(".note-text", has_text="the second message is wrong").first.wait_for()
    note = Note.objects.get()
    assert f"message-{note.message_id}" == focused
    page.locator("body").press("f")  # back from the form: the verdict keys work again
    pending = page.locator("#verdict-pending")
    assert "Fail in 4 s" in pending.inner_text()  # a stray key is not final at once
    page.keyboard.press("u")
    assert pending.is_hidden()
    page.wait_for_timeout(4500)
    assert ReviewItem.objects.filter(verdict="").count() == 2  # undone: nothing saved
    page.keyboard.press("r")  # the verdict's reason, folded away until asked for
    assert page.evaluate("document.activeElement.id") == "verdict-text"
    page.keyboard.type("looks right")
    page.keyboard.press("Escape")
    page.keyboard.press("p")
    page.wait_for_url(f"**/sessions/sess_k1/?review={queue.pk}")
    assert ReviewItem.objects.get(session_id="sess_k0").text == "looks right"
    page.keyboard.press("f")
    page.wait_for_url(f"**/reviews/{queue.pk}/?done=1")
    assert "This queue is done" in page.content()
    verdicts = dict(ReviewItem.objects.values_list("session_id", "verdict"))
    assert verdicts == {"sess_k0": "pass", "sess_k1": "fail"}
    assert page.console_errors == []
