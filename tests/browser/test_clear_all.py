"""The admin's "Clear all sessions" in a browser: red, disabled until the phrase matches."""

from __future__ import annotations

from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB

CLEAR_ALL = "/admin/sessions_admin/session/clear-all/"
#: The admin's --delete-button-bg, the colour of its own delete buttons.
#: The app's danger red (#b3261e), which admin.css gives the admin's delete buttons.
ADMIN_DANGER_RED = "rgb(179, 38, 30)"


@STORE_DB
def test_the_button_is_red_and_waits_for_the_exact_phrase(store, logged_in_page, live_server):
    for n in range(3):
        store.add_session(f"s{n}")
    page = logged_in_page
    page.goto(live_server.url + CLEAR_ALL)
    button = page.get_by_role("button", name="Clear all sessions")
    assert button.evaluate("b => getComputedStyle(b).backgroundColor") == ADMIN_DANGER_RED
    assert button.is_disabled()
    for almost in ("delete 2 sessions", "delete 3 session", "Delete 3 sessions", "delete 3"):
        page.fill("#id_phrase", almost)
        assert button.is_disabled(), almost
    page.fill("#id_phrase", "  delete 3 sessions ")  # the server ignores the spaces too
    assert button.is_enabled()
    page.fill("#id_phrase", "delete 3 sessions!")
    assert button.is_disabled()
    assert store.count("sessions") == 3
    assert page.console_errors == []


@STORE_DB
def test_the_server_still_refuses_a_wrong_phrase_sent_past_the_disabled_button(
    store, logged_in_page, live_server
):
    for n in range(3):
        store.add_session(f"s{n}")
    page = logged_in_page
    page.goto(live_server.url + CLEAR_ALL)
    page.fill("#id_phrase", "delete 4 sessions")
    # What a page without the script (or a hand-made request) would send.
    page.locator("#clear-all-submit").evaluate("b => { b.disabled = false; b.form.submit(); }")
    page.locator(".errornote", has_text="The phrase does not match").wait_for()
    assert store.count("sessions") == 3
    assert not DeletionAudit.objects.filter(operation="clear_all").exists()


@STORE_DB
def test_the_erase_button_on_a_principals_page_waits_for_its_phrase(
    store, logged_in_page, live_server
):
    for n in range(2):
        store.add_session(f"s{n}", principal="user:zoe")
    page = logged_in_page
    page.goto(live_server.url + "/principals/user%3Azoe/")
    button = page.get_by_role("button", name="Erase")
    assert button.is_disabled()
    page.fill("input[name=confirm]", "erase 1 sessions of user:zoe")
    assert button.is_disabled()
    page.fill("input[name=confirm]", "erase 2 sessions of user:zoe")
    assert button.is_enabled()
    assert store.count("sessions") == 2
    assert page.console_errors == []
