"""The overview and a tool's calls in a browser: grid, page height, cells kept on one line."""

from __future__ import annotations

from tests.conftest import STORE_DB


def chart_boxes(page) -> list[tuple[int, int]]:
    return [
        (round(box["x"]), round(box["y"]))
        for box in (chart.bounding_box() for chart in page.locator("figure.chart").all())
    ]


@STORE_DB
def test_the_overview_charts_sit_two_by_two_and_the_page_ends_at_its_content(
    synced,
    logged_in_page,
    live_server,
):
    page = logged_in_page
    page.goto(f"{live_server.url}/?window=all")
    boxes = chart_boxes(page)
    assert len(boxes) == 4
    assert len({x for x, _ in boxes}) == 2 and len({y for _, y in boxes}) == 2
    # The charts' screen-reader tables take no room: nothing to scroll past the content.
    blank = page.evaluate(
        "document.documentElement.scrollHeight"
        " - (document.querySelector('main').getBoundingClientRect().bottom + window.scrollY)"
    )
    assert blank < 100
    page.set_viewport_size({"width": 880, "height": 800})
    assert len({x for x, _ in chart_boxes(page)}) == 1
    assert page.console_errors == []


@STORE_DB
def test_a_failed_calls_duration_and_time_stay_on_one_line_at_900_px(
    synced,
    logged_in_page,
    live_server,
):
    page = logged_in_page
    page.set_viewport_size({"width": 900, "height": 800})
    page.goto(f"{live_server.url}/tools/sql.query/?errors=1")
    # One line: every piece of the cell's text overlaps every other vertically.
    one_line = page.evaluate(
        """() => [...document.querySelectorAll('td.duration, td.time')].map(td => {
             const range = document.createRange();
             range.selectNodeContents(td);
             const rects = [...range.getClientRects()].filter(r => r.width > 0);
             return Math.max(...rects.map(r => r.top)) < Math.min(...rects.map(r => r.bottom));
           })"""
    )
    assert one_line and all(one_line)
    assert page.locator("td.duration .status-error").count() > 0
    assert page.console_errors == []
