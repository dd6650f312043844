"""One filter language in a browser: a refused value is shown beside its field, a
range that ends before it starts is stopped before any request, and a tool's calls
take the same time control as the list and search."""

from __future__ import annotations

from tests.conftest import STORE_DB


@STORE_DB
def test_a_refused_value_is_shown_beside_its_field(triage_store, logged_in_page, live_server):
    page = logged_in_page
    page.goto(live_server.url + "/search/")
    box = page.get_by_label("Text in any transcript")
    box.fill("x" * 1001)
    box.press("Enter")
    note = page.locator("form.filters .field-error")
    note.wait_for()
    assert "q is too long" in note.inner_text()
    assert box.get_attribute("aria-invalid") == "true"
    assert box.get_attribute("aria-describedby") == note.get_attribute("id")
    assert page.evaluate("document.activeElement.name") == "q"
    # Fixed, the next search clears it.
    box.fill("timed out")
    box.press("Enter")
    page.wait_for_url("**q=timed%20out**")
    assert note.count() == 0 and box.get_attribute("aria-invalid") is None
    assert page.console_errors == [] or all("400" in e for e in page.console_errors)


@STORE_DB
def test_a_range_ending_before_it_starts_is_stopped_in_the_form(
    triage_store, logged_in_page, live_server
):
    page = logged_in_page
    page.goto(live_server.url + "/sessions/")
    page.locator("#filters details.custom-range summary").click()
    page.locator("input[name=active_after]").fill("2026-11-28T15:00")
    end = page.locator("input[name=active_before]")
    end.fill("2026-11-28T14:00")
    end.dispatch_event("change")
    assert "after its start" in end.evaluate("field => field.validationMessage")
    assert "active_before" not in page.url  # no request went out
    end.fill("2026-11-28T16:00")
    end.dispatch_event("change")
    page.wait_for_url("**active_before=2026-11-28T16%3A00**")


@STORE_DB
def test_a_tools_calls_take_the_same_time_control(triage_store, logged_in_page, live_server):
    page = logged_in_page
    page.goto(live_server.url + "/tools/http.get/")
    page.get_by_label("Call time").select_option("30d")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**within=30d**")
    assert page.get_by_label("Call time").input_value() == "30d"
    assert page.locator("h1").count() == 1  # the page swapped in whole, not nested
    assert page.console_errors == []
