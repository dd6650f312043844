"""Figures from values no honest writer leaves: a REAL turn count, absurd spans,
and the session page's tool summary (errors, slow calls)."""

from __future__ import annotations

from django.urls import reverse

from sessions_admin.humanize import duration
from sessions_admin.ids import session_url
from sessions_admin.store.values import OddValue, as_int
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS
from tests.transcript_pages import html_of


def test_a_huge_real_count_is_described_not_printed_as_309_digits():
    value = as_int(1e308)
    assert isinstance(value, OddValue)
    assert value == "1e+308, out of range"
    assert as_int(3.0) == 3


def test_an_absurd_span_reads_as_out_of_range():
    assert duration(1e308) == "out of range (1e+308 ms)"
    assert duration(490_000 * 3600 * 1000) == "out of range (1.76e+12 ms)"
    assert duration(float("inf")).startswith("out of range")
    assert duration(443 * 3600 * 1000 + 16 * 60 * 1000) == "443 h 16 min"


@STORE_DB
def test_the_list_and_the_session_page_describe_a_real_turn_count(store, viewer_client):
    store.add_session("huge", turn_count=1e308)
    listing = html_of(viewer_client.get(reverse("sessions")))
    page = html_of(viewer_client.get(session_url("huge")))
    for html in (listing, page):
        assert "1e+308, out of range" in html
        assert "1000000000000000000000" not in html.replace(",", "")


@STORE_DB
def test_the_statistics_describe_absurd_spans_and_totals(store, viewer_client):
    sid = store.add_session("s")
    store.add_message(sid, ts=0)
    store.add_message(sid, "tool", "r", ts=BASE_MS, tool_name="fs.read", tool_duration_ms=1e308)
    html = html_of(viewer_client.get(session_url(sid, "stats")))
    assert "first to last message out of range" in html
    assert "out of range (1e+308 ms)" in html
    assert "0000000000" not in html


@STORE_DB
def test_the_tool_summary_counts_errors_by_the_failure_rule_and_slow_calls(
    store, viewer_client, settings
):
    settings.SLOW_TOOL_CALL_MS = 1000
    sid = store.add_session("s")
    for result, ms in (({"ok": False}, 5), ({"error": "boom"}, 2000), ({"ok": True}, 1000)):
        store.add_message(
            sid, "tool", "r", tool_name="fs.read", tool_result=result, tool_duration_ms=ms
        )
    store.add_message(sid, "tool", "r", tool_name="fs.read", tool_result={"error": None})
    stats = viewer_client.get(session_url(sid, "stats"), headers={"HX-Request": "true"})
    html = html_of(stats)
    assert ">errors</th>" in html
    assert "slow (≥ 1.0 s)</th>" in html
    row = html.split("fs.read</a></td>", 1)[1].split("</tr>", 1)[0]
    cells = [cell.split("</td>")[0] for cell in row.split('<td class="num">')[1:]]
    assert cells[0] == "4"
    assert ">2</a>" in cells[4]  # {"ok": false} and {"error": "boom"}
    assert ">2</span>" in cells[5]  # 2000 ms and 1000 ms (at the threshold)


@STORE_DB
def test_a_session_without_messages_shows_one_empty_state(store, viewer_client):
    sid = store.add_session("empty")
    html = html_of(viewer_client.get(session_url(sid, "stats")))
    assert "This session has no messages yet." in html
    assert "No messages." not in html
