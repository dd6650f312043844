"""The header's box searches every transcript: Enter opens the results, More swaps in place."""

from sessions_admin.ourdata import sync
from tests.conftest import STORE_DB


@STORE_DB
def test_enter_in_the_header_box_opens_the_results_and_a_snippet_opens_the_transcript(
    store, var_dir, logged_in_page, live_server
):
    sid = store.add_session("sess_alpha", title="deploy rollback plan")
    mid = store.add_message(sid, "user", "the registry lookup hit a wombat timeout")
    store.add_message(store.add_session("sess_beta"), "user", "nothing to see")
    sync.sync_once()
    page = logged_in_page
    page.goto(live_server.url + "/targets/")
    page.fill("#goto-id", "Wombat Timeout")
    page.keyboard.press("Enter")
    page.wait_for_url("**/search/?q=Wombat+Timeout")
    snippet = page.locator(".search-group a.hit")
    assert snippet.count() == 1
    assert page.locator(".search-group mark").inner_text() == "wombat timeout"
    snippet.click()
    page.wait_for_url(f"**/sessions/sess_alpha/?at={mid}#message-{mid}")
    page.locator(f"#message-{mid}").wait_for()
    assert page.console_errors == []
