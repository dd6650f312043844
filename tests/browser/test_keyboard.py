"""The list's filters from the keyboard: Enter filters, the list swaps in place.

The shortcuts themselves ("/", j/k, Escape, ...) are in test_shortcuts.py."""

from tests.conftest import STORE_DB


@STORE_DB
def test_the_list_filter_box_filters_in_place_with_a_shareable_url(
    store, logged_in_page, live_server
):
    store.add_session("sess_alpha", title="deploy rollback plan")
    store.add_session("sess_beta", title="pager storm")
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.locator("#filters input[name=q]").focus()
    page.keyboard.type("rollback")
    page.keyboard.press("Enter")
    page.wait_for_url("**/sessions/?q=rollback&sort=-last_active")
    rows = page.locator("table.sessions tbody tr[data-session-id]")
    rows.first.wait_for()
    assert rows.count() == 1
    assert rows.first.get_attribute("data-session-id") == "sess_alpha"
    # The list was swapped in place: the page (and its header) was not reloaded.
    assert page.evaluate("performance.getEntriesByType('navigation').length") == 1
    assert page.console_errors == []


@STORE_DB
def test_the_filtered_url_opens_the_same_view_for_a_colleague(store, logged_in_page, live_server):
    store.add_session("sess_a", target="ops.pager", title="one")
    store.add_session("sess_b", target="infra.deployer", title="two")
    page = logged_in_page
    page.goto(live_server.url + "/sessions/?target=ops.pager&sort=created_at")
    assert page.locator("select[name=target]").input_value() == "ops.pager"
    assert page.locator("select[name=sort]").input_value() == "created_at"
    ids = page.locator("table.sessions tbody tr[data-session-id]").evaluate_all(
        "rows => rows.map(r => r.dataset.sessionId)"
    )
    assert ids == ["sess_a"]
