"""Deleting in a real browser: the dialog, Cancel focused, the row gone without a reload."""

from __future__ import annotations

from sessions_admin.ids import session_url
from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB
from tests.jobrunner import worker_thread


def open_row_menu(row):
    """The row's actions menu, opened (Delete lives there)."""
    row.locator("details.row-menu > summary").click()
    return row.locator(".menu-items")


def two_sessions(store) -> tuple[str, str]:
    gone = store.add_session("sess_gone", title="to be deleted")
    for _ in range(3):
        store.add_message(gone)
    store.add_state(gone, "repl_state", {})
    keep = store.add_session("sess_keep", title="stays")
    (store.frames_root / gone).mkdir()
    (store.frames_root / gone / "activity-r1.jsonl").write_text('{"ts": 1}\n' * 100)
    return gone, keep


@STORE_DB
def test_a_row_is_deleted_from_the_list_through_the_dialog_without_a_reload(
    store, logged_in_page, live_server
):
    gone, keep = two_sessions(store)
    page = logged_in_page
    page.goto(f"{live_server.url}/sessions/")
    page.evaluate("window.__notReloaded = true")
    assert page.locator("#session-count").inner_text() == "2 sessions."
    row = page.locator(f'tr[data-session-id="{gone}"]')
    open_row_menu(row).get_by_role("link", name="Delete", exact=True).click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    assert "3 messages" in dialog.inner_text() and "1 state row" in dialog.inner_text()
    assert "also remove activity frames" in dialog.inner_text()
    assert page.evaluate("document.activeElement.textContent") == "Cancel"
    dialog.get_by_label("also remove activity frames").check()
    dialog.get_by_role("button", name="Delete session").click()
    row.wait_for(state="detached")
    # The count above the list counts again.
    page.locator("#session-count", has_text="1 session.").wait_for()
    assert page.locator(f'tr[data-session-id="{keep}"]').is_visible()
    flash = page.locator("#flash")
    assert "Deleted session sess_gone: 3 messages, 1 state row, frames removed" in (
        flash.inner_text()
    )
    assert page.evaluate("window.__notReloaded") is True
    assert store.count("sessions") == 1 and not (store.frames_root / gone).exists()
    assert DeletionAudit.objects.get().operation == "wipe_session"
    assert page.console_errors == []


@STORE_DB
def test_cancel_and_escape_close_the_dialog_and_delete_nothing(store, logged_in_page, live_server):
    gone, _ = two_sessions(store)
    page = logged_in_page
    page.goto(f"{live_server.url}/sessions/")
    row = page.locator(f'tr[data-session-id="{gone}"]')
    open_row_menu(row).get_by_role("link", name="Delete", exact=True).click()
    page.locator("dialog[open]").wait_for()
    page.get_by_role("button", name="Cancel").click()
    page.locator("dialog.delete-dialog").wait_for(state="detached")
    open_row_menu(row).get_by_role("link", name="Delete", exact=True).click()
    page.locator("dialog[open]").wait_for()
    page.keyboard.press("Escape")
    page.wait_for_function("!document.querySelector('dialog[open]')")
    assert store.count("sessions") == 2
    assert page.console_errors == []


@STORE_DB
def test_the_session_pages_delete_button_returns_to_the_list_with_a_message(
    store, logged_in_page, live_server
):
    gone, _ = two_sessions(store)
    page = logged_in_page
    page.goto(f"{live_server.url}{session_url(gone)}")
    page.locator("nav.actions").get_by_role("link", name="Delete", exact=True).click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    dialog.get_by_role("button", name="Delete session").click()
    page.wait_for_url(f"{live_server.url}/sessions/")
    assert (
        "Deleted session sess_gone: 3 messages, 1 state row" in page.locator("#flash").inner_text()
    )
    assert store.count("sessions") == 1
    assert page.console_errors == []


@STORE_DB
def test_clear_all_in_the_admin_shows_progress_then_the_audit_link(
    store, logged_in_page, live_server
):
    for n in range(30):
        store.add_session(f"s{n:03d}")
    page = logged_in_page
    page.goto(f"{live_server.url}/admin/sessions_admin/session/")
    page.get_by_role("link", name="Clear all sessions").click()
    assert "30" in page.locator("#content").inner_text()
    page.fill("#id_phrase", "delete 30 sessions")
    with worker_thread():
        page.get_by_role("button", name="Clear all sessions").click()
        page.locator("a.audit-link").wait_for(timeout=20_000)
    assert "30 sessions deleted" in page.locator("#clear-progress").inner_text()
    assert store.count("sessions") == 0
    page.locator("a.audit-link").click()
    assert "clear_all" in page.content() or "Clear all sessions" in page.content()
    assert page.console_errors == []
