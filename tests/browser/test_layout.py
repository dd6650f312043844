"""Layout in a real browser: long unbroken values and a 900 px window never scroll sideways."""

from __future__ import annotations

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB

LONG_TITLE = "NoSpacesAtAll_" * 12 + " and then a sentence that keeps going"
LONG_PRINCIPAL = "user:" + "averyverylongprincipalname" * 3 + "@example.internal"


def sideways_overflow(page) -> int:
    return page.evaluate(
        "document.documentElement.scrollWidth - document.documentElement.clientWidth"
    )


@STORE_DB
def test_the_list_and_session_page_fit_a_900_px_window_with_long_values(
    store, logged_in_page, live_server
):
    sid = store.add_session("sess_" + "long" * 20, title=LONG_TITLE, principal=LONG_PRINCIPAL)
    for n in range(5):
        store.add_session(f"sess_{n}", title="Why did the deploy of ledger-sync stall at 52%?")
    page = logged_in_page
    page.set_viewport_size({"width": 900, "height": 800})
    page.goto(f"{live_server.url}/sessions/")
    assert sideways_overflow(page) <= 0
    assert page.locator("table.sessions th.created").is_hidden()
    page.goto(live_server.url + session_url(sid))
    assert sideways_overflow(page) <= 0
    assert page.console_errors == []


@STORE_DB
def test_the_delete_dialog_opened_from_a_row_is_left_aligned(store, logged_in_page, live_server):
    store.add_session("sess_dialog", title="to delete")
    page = logged_in_page
    page.goto(f"{live_server.url}/sessions/")
    row = page.locator('tr[data-session-id="sess_dialog"]')
    row.locator("details.row-menu > summary").click()
    row.get_by_role("link", name="Delete", exact=True).click()
    dialog = page.locator("dialog[open]")
    dialog.wait_for()
    assert dialog.evaluate("d => getComputedStyle(d).textAlign") in ("left", "start")
    page.keyboard.press("Escape")
    dialog.wait_for(state="detached")
    assert page.console_errors == []


@STORE_DB
def test_the_custom_range_fields_sit_side_by_side(store, logged_in_page, live_server):
    page = logged_in_page
    page.goto(f"{live_server.url}/sessions/?active_after=2020-01-01T00:00")
    after = page.locator("input[name=active_after]").bounding_box()
    before = page.locator("input[name=active_before]").bounding_box()
    assert abs(after["y"] - before["y"]) < 2 and before["x"] > after["x"]
    assert page.console_errors == []


def contained(inner: dict, outer: dict) -> bool:
    return (
        inner["x"] >= outer["x"]
        and inner["y"] >= outer["y"]
        and inner["x"] + inner["width"] <= outer["x"] + outer["width"] + 0.5
        and inner["y"] + inner["height"] <= outer["y"] + outer["height"] + 0.5
    )


@STORE_DB
def test_the_login_form_sits_inside_its_card(store, page, live_server):
    page.goto(f"{live_server.url}/login/")
    card = page.locator("section.card").bounding_box()
    for part in ("#id_username", "#id_password", "button[type=submit]"):
        assert contained(page.locator(part).bounding_box(), card), part
    assert page.console_errors == []


PLACEHOLDER_FITS = """input => {
  const style = getComputedStyle(input);
  const context = document.createElement('canvas').getContext('2d');
  context.font = style.font;
  const room = input.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return context.measureText(input.placeholder).width <= room;
}"""


@STORE_DB
def test_the_header_fits_a_phone_and_marks_the_current_screen(store, logged_in_page, live_server):
    store.add_session("sess_1", title="one")
    page = logged_in_page
    for width in (1440, 390):
        page.set_viewport_size({"width": width, "height": 844})
        page.goto(f"{live_server.url}/tools/")
        header = page.locator("header.topbar").bounding_box()
        nav = page.get_by_role("navigation", name="Main")
        for link in nav.get_by_role("link").all():
            assert contained(link.bounding_box(), header), (width, link.inner_text())
        assert page.locator("#goto-id").evaluate(PLACEHOLDER_FITS), width
        assert sideways_overflow(page) <= 0
    assert nav.get_by_role("link", name="Tools").get_attribute("aria-current") == "page"
    assert nav.locator("[aria-current]").count() == 1
    page.goto(live_server.url + session_url("sess_1"))
    assert nav.get_by_role("link", name="Sessions").get_attribute("aria-current") == "true"
    assert page.console_errors == []
