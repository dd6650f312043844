"""Triage where the eye is: failed calls on list rows, principals as links, the sortable
tools table with shaded error shares, a tool's failures grouped by what failed."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from sessions_admin.ids import principal_url
from tests.conftest import STORE_DB

DAY = 86_400_000


@STORE_DB
def test_list_rows_show_failed_calls_and_link_principals(triage_store, logged_in_page, live_server):
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    bad = page.locator('tr[data-session-id="sess_bad"]')
    assert bad.locator(".failed-calls").inner_text() == "3 failed calls"
    good = page.locator('tr[data-session-id="sess_good"]')
    assert good.locator(".failed-calls").inner_text() == "1 failed call"
    bad.get_by_role("link", name="user:carol").click()
    # The principal's own page (branch erase), through the one link helper.
    page.wait_for_url("**" + principal_url("user:carol"))
    assert "user:carol" in page.locator("h1").inner_text()
    assert page.console_errors == []


@STORE_DB
def test_the_row_menu_holds_open_and_delete_and_escape_closes_it(
    triage_store, logged_in_page, live_server
):
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    row = page.locator('tr[data-session-id="sess_good"]')
    # No Delete button on the row itself: it is in the menu.
    assert row.get_by_role("link", name="Delete").is_hidden()
    row.get_by_label("Actions for session sess_good").click()
    assert row.get_by_role("link", name="Delete").is_visible()
    page.keyboard.press("Escape")
    assert row.get_by_role("link", name="Delete").is_hidden()
    row.get_by_label("Actions for session sess_good").click()
    row.get_by_role("link", name="Delete").click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    dialog.get_by_role("button", name="Delete session").click()
    row.wait_for(state="detached")
    assert triage_store.count("sessions") == 1
    assert page.console_errors == []


@STORE_DB
def test_the_tools_table_sorts_by_any_column_and_shades_error_shares(
    triage_store, logged_in_page, live_server
):
    page = logged_in_page
    page.goto(live_server.url + "/tools/?window=all")

    def tools() -> list[str]:
        return page.locator("table.tools tbody th").all_inner_texts()

    assert tools() == ["sql.query", "http.get"]  # most calls first
    page.get_by_role("link", name="error share").click()
    page.wait_for_url("**sort=-share**")
    assert tools() == ["http.get", "sql.query"]
    assert page.locator("th[aria-sort=descending]").inner_text().startswith("error share")
    page.get_by_role("link", name="error share").click()  # again: the other way
    page.wait_for_url("**sort=share**")
    assert tools() == ["sql.query", "http.get"]
    query = parse_qs(urlsplit(page.url).query)
    assert query["window"] == ["all"]
    shares = page.locator("table.tools tbody tr td.num:nth-child(4)")
    assert shares.evaluate_all("cells => cells.map(c => c.className)") == [
        "num share-15",  # 1 of 10
        "num share-high",  # 3 of 4
    ]
    # Without JavaScript the same links sort on the server.
    page.goto(live_server.url + "/tools/?window=all&sort=tool")
    assert tools() == ["http.get", "sql.query"]
    assert page.console_errors == []


@STORE_DB
def test_a_tools_failures_are_grouped_by_what_failed_with_links_to_their_calls(
    triage_store, logged_in_page, live_server
):
    page = logged_in_page
    page.goto(live_server.url + "/tools/http.get/")
    groups = page.locator("table.error-groups tbody tr")
    assert groups.count() == 2
    first = groups.nth(0).locator("td")
    assert first.nth(0).inner_text() == "ETIMEDOUT: timed out after <n> ms"
    assert first.nth(1).inner_text() == "2"
    assert first.nth(2).inner_text() == "2023-11-14 22:13:20"
    assert first.nth(3).inner_text() == "2023-11-14 22:14:20"
    assert groups.nth(1).locator("td").nth(0).inner_text() == (
        "ECONNREFUSED: connection refused by <n>"
    )
    groups.nth(0).get_by_role("link", name="its calls").click()
    page.wait_for_url("**what=ETIMEDOUT**")
    assert page.locator("table.tool-calls tbody tr").count() == 2
    assert page.locator("table.error-groups tr[aria-current=true]").count() == 1
    assert page.console_errors == []
