from tests.conftest import STORE_DB


@STORE_DB
def test_a_staff_member_logs_in_and_sees_the_sessions_with_htmx_and_no_console_errors(
    store, logged_in_page, live_server
):
    store.add_session(title="deploy rollback plan <script>alert(1)</script>")
    page = logged_in_page
    page.reload()
    assert page.locator("h1, table.sessions").first.is_visible()
    assert page.get_by_text("deploy rollback plan <script>alert(1)</script>").is_visible()
    assert page.evaluate("typeof window.htmx") == "object"
    assert page.evaluate("htmx.config.includeIndicatorStyles") is False
    assert page.console_errors == []
