"""``/sessions/<id>/frames/<request>/``: one request's frames, paging, filters, timeline."""

from __future__ import annotations

import json

import pytest

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.frames_files import (
    HX,
    frame,
    line_numbers,
    next_link,
    request_url,
    text,
    write_request,
)
from tests.storebuilder import BASE_MS

pytestmark = STORE_DB


# --- Frames of a request --------------------------------------------------------------


def test_it_shows_time_kind_ids_summary_and_pretty_json(store, staff_client, old):
    sid = store.add_session("sess_f")
    write_request(store, sid, "req", [frame(0, message="hello there"), frame(1)], mtime=old)

    response = staff_client.get(request_url(sid, "req"))

    body = text(response)
    assert response.status_code == 200
    assert "16:00:00.000" in body and "16:00:00.100" in body
    assert "model.call" in body and "tool.call" in body
    assert "trace-a" in body and "span-0" in body
    assert "step 0 · hello there" in body
    assert "<details" in body and "&quot;message&quot;: &quot;hello there&quot;" in body
    assert line_numbers(response) == [1, 2]


def test_each_kind_of_damaged_line_is_shown_inline(store, staff_client, old):
    sid = store.add_session("sess_d")
    write_request(
        store,
        sid,
        "req",
        [
            frame(0),
            b'{"ts": 1, "kind": "broken',
            b"[1, 2, 3]",
            b'"just a string"',
            b'{"ok": "\xff\xfe bad bytes"}',
            frame(5),
        ],
        mtime=old,
    )

    response = staff_client.get(request_url(sid, "req"))

    body = text(response)
    assert response.status_code == 200
    assert "unreadable line 2" in body and "not valid JSON" in body
    assert "unreadable line 3" in body and "not a JSON object" in body
    assert "unreadable line 4" in body
    assert "unreadable line 5" in body and "not valid UTF-8" in body
    assert "&quot;kind&quot;: &quot;broken" in body  # the raw text, escaped
    assert "\ufffd bad bytes" in body
    assert line_numbers(response) == [1, 2, 3, 4, 5, 6]


def test_a_huge_line_is_shown_truncated_with_its_size(store, staff_client, old):
    sid = store.add_session("sess_h")
    huge = json.dumps({"kind": "blob", "data": "y" * (3 * 1024 * 1024)}).encode()
    write_request(store, sid, "req", [frame(0), huge, frame(2)], mtime=old)

    response = staff_client.get(request_url(sid, "req"))

    body = text(response)
    assert "line too long" in body
    assert f"{len(huge):,} bytes" in body and "3.0 MB" in body
    assert len(response.content) < 200_000
    assert "step 2" in body


def test_an_empty_file_says_it_is_empty(store, staff_client, old):
    sid = store.add_session("sess_e")
    write_request(store, sid, "req", [], mtime=old)
    response = staff_client.get(request_url(sid, "req"))
    assert response.status_code == 200
    assert "This file is empty" in text(response)


def test_an_incomplete_last_line_is_shown_as_being_written(store, staff_client):
    sid = store.add_session("sess_p")
    write_request(store, sid, "req", [frame(0)], pending=b'{"ts": 17640000, "kind": "hal')
    body = text(staff_client.get(request_url(sid, "req")))
    assert "being written" in body and "line 2" in body
    assert "unreadable" not in body


def test_markup_inside_frame_values_is_escaped(store, staff_client, old):
    sid = store.add_session("sess_x")
    evil = "<script>alert(1)</script><img src=x onerror=alert(2)>"
    write_request(
        store,
        sid,
        "req",
        [
            {
                "ts": BASE_MS,
                "kind": evil,
                "traceId": evil,
                "spanId": evil,
                "name": evil,
                "message": evil,
                "nested": {"html": evil},
            },
            (evil + " not json").encode(),
        ],
        pending=evil.encode(),
    )

    body = text(staff_client.get(request_url(sid, "req")))
    listing = text(staff_client.get(session_url(sid, "frames", trace=evil)))

    for page in (body, listing):
        assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in body


def test_paging_through_a_large_file_shows_every_frame_exactly_once(store, staff_client, old):
    sid = store.add_session("sess_big")
    lines: list = []
    for i in range(2_345):
        if i % 97 == 13:
            lines.append(b"{damaged " + str(i).encode())
        elif i % 501 == 7:
            lines.append(b"")  # blank lines count for numbering but are not frames
        else:
            lines.append(frame(i, seq=i, pad="p" * (i % 300)))
    write_request(store, sid, "req", lines, mtime=old)
    expected = [n + 1 for n, line in enumerate(lines) if line != b""]

    seen: list[int] = []
    url: str | None = request_url(sid, "req")
    pages = 0
    while url:
        response = staff_client.get(url)
        assert response.status_code == 200
        seen += line_numbers(response)
        url = next_link(response)
        pages += 1
    assert seen == expected
    assert pages == -(-len(expected) // 100)


def test_htmx_paging_answers_with_the_panel_only(store, staff_client, old):
    sid = store.add_session("sess_hx")
    write_request(store, sid, "req", [frame(i) for i in range(150)], mtime=old)
    first = staff_client.get(request_url(sid, "req"))
    url = next_link(first)

    fragment = staff_client.get(url, HTTP_HX_TARGET="frames-panel", **HX)

    body = text(fragment)
    assert body.lstrip().startswith('<div id="frames-panel">')
    assert "<html" not in body and 'id="frame-filters"' not in body
    assert line_numbers(fragment) == list(range(101, 151))
    assert fragment["Vary"] and "HX-Request" in fragment["Vary"]


def test_a_forged_offset_is_realigned_and_the_page_says_so(store, staff_client, old):
    sid = store.add_session("sess_o")
    path = write_request(store, sid, "req", [frame(i) for i in range(10)], mtime=old)
    second_line = path.read_bytes().index(b"\n") + 1

    response = staff_client.get(request_url(sid, "req", offset=second_line + 5))

    body = text(response)
    assert "is not the start of a line" in body
    assert "step 0" not in body and "step 1" not in body and "step 2" in body


def test_an_offset_past_the_end_says_so(store, staff_client, old):
    sid = store.add_session("sess_pe")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    response = staff_client.get(request_url(sid, "req", offset=10**9))
    assert response.status_code == 200
    assert "past the end of the file" in text(response)


@pytest.mark.parametrize("value", ["-5", "abc", "1e3", "9" * 40, "１２"])
def test_a_bad_offset_is_a_400(store, staff_client, value, old):
    sid = store.add_session("sess_bo")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    response = staff_client.get(request_url(sid, "req") + f"?offset={value}")
    assert response.status_code == 400
    assert "offset must be a byte offset" in text(response)


def test_end_opens_the_last_stretch_of_the_file(store, staff_client, old):
    sid = store.add_session("sess_end")
    write_request(store, sid, "req", [frame(i, pad="z" * 500) for i in range(1000)], mtime=old)
    body = text(staff_client.get(request_url(sid, "req", end=1)))
    assert "step 999" in body and "step 0<" not in body
    assert "Showing the end of the file" in body


def test_it_filters_by_kind_and_by_text(store, staff_client, old):
    sid = store.add_session("sess_k")
    write_request(
        store, sid, "req", [frame(0), frame(1), frame(2, note="needle here"), frame(3)], mtime=old
    )

    by_kind = text(staff_client.get(request_url(sid, "req", kind="TOOL.CALL")))
    by_text = text(staff_client.get(request_url(sid, "req", q="NEEDLE")))

    assert "step 1" in by_kind and "step 3" in by_kind and "step 0" not in by_kind
    assert "step 2" in by_text and "step 1" not in by_text
    assert 'value="NEEDLE"' in by_text


def test_trace_and_span_params_keep_only_those_frames(store, staff_client, old):
    sid = store.add_session("sess_ts")
    write_request(
        store,
        sid,
        "req",
        [
            frame(0),
            frame(1, traceId="trace-b"),
            frame(2, parentSpanId="span-0"),
            frame(3, traceId="trace-b", note="mentions trace-a"),
        ],
        mtime=old,
    )

    by_trace = text(staff_client.get(request_url(sid, "req", trace="trace-a")))
    by_span = text(staff_client.get(request_url(sid, "req", span="span-0")))

    assert "step 0" in by_trace and "step 2" in by_trace
    assert "step 1" not in by_trace and "step 3" not in by_trace
    assert "step 0" in by_span and "step 2" in by_span and "step 1" not in by_span


def test_a_filter_that_spends_its_scan_budget_offers_to_continue(store, staff_client, old):
    sid = store.add_session("sess_sb")
    filler = [frame(i, pad="q" * 1000) for i in range(9000)]  # ~9.5 MB, over the 8 MB budget
    write_request(store, sid, "req", [*filler, frame(9001, note="needle")], mtime=old)

    response = staff_client.get(request_url(sid, "req", q="needle"))

    body = text(response)
    assert "No match yet" in body and "Continue searching" in body
    follow = staff_client.get(next_link(response))
    assert "step 9001" in text(follow)


def test_the_timeline_draws_spans_and_ticks_without_style_attributes(store, staff_client, old):
    sid = store.add_session("sess_tl")
    write_request(
        store,
        sid,
        "req",
        [
            {"ts": BASE_MS, "kind": "request.start", "spanId": "root"},
            {"ts": BASE_MS + 10, "kind": "model.call", "spanId": "m", "durationMs": 400},
            {"ts": BASE_MS + 50, "kind": "log", "message": "an instant"},
            {"ts": BASE_MS + 900, "kind": "request.end", "spanId": "root"},
            {"ts": BASE_MS + 950, "kind": "log", "status": "error"},
        ],
        mtime=old,
    )

    body = text(staff_client.get(request_url(sid, "req")))

    svg = body.split('<svg class="tl"')[1].split("</svg>")[0]
    assert svg.count('class="tl-bar') == 2  # the start/end pair and the timed call
    assert svg.count('class="tl-tick') == 2
    assert "tl-failed" in svg
    assert "style=" not in svg
    assert "request.start · 900 ms" in svg
    # Drawn at its own pixel size (text never shrinks with the page), with a legend
    # for its colours and the zone of the moment the offsets count from.
    assert 'width="860"' in svg.split(">")[0]
    legend = body.split('<ul class="tl-legend"')[1].split("</ul>")[0]
    for kind in ("request.start", "model.call", "log"):
        assert f"</svg> {kind}</li>" in legend
    assert "</svg> failed</li>" in legend
    assert "from 2025-11-24 " in body and " UTC (offsets on the axis count from it)" in body


def test_a_missing_request_file_is_a_404(store, staff_client):
    sid = store.add_session("sess_nf")
    (store.frames_root / sid).mkdir()
    response = staff_client.get(request_url(sid, "nope"))
    assert response.status_code == 404
    assert "No activity-frame file" in text(response)


def test_a_missing_request_file_for_htmx_is_a_banner(store, staff_client):
    sid = store.add_session("sess_nfh")
    response = staff_client.get(request_url(sid, "nope"), **HX)
    assert response.status_code == 404
    assert response["HX-Retarget"] == "#flash"
    assert "<html" not in text(response)


def test_an_unknown_request_file_links_back_to_the_sessions_requests(store, staff_client):
    sid = store.add_session("sess_req")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-r1.jsonl").write_text(
        json.dumps({"ts": BASE_MS, "kind": "log"}) + "\n"
    )
    response = staff_client.get(session_url(sid, "frames/req_gone"))
    assert response.status_code == 404
    body = response.content.decode()
    assert f'href="{session_url(sid, "frames")}"' in body
    assert "Back to this session&#x27;s requests" in body


def test_timeline_bars_carry_their_name_and_duration_beside_them():
    from sessions_admin.store.frames.lines import parse_frame
    from sessions_admin.views.frames.render import TIMELINE_WIDTH, timeline_of

    def frame(data: dict, offset: int):
        raw = json.dumps(data).encode()
        return parse_frame(raw, offset, len(raw), offset + 1)

    lines = [
        frame({"ts": BASE_MS, "kind": "model.call", "name": "model.call", "durationMs": 900}, 0),
        frame({"ts": BASE_MS + 950, "kind": "tool.call", "name": "fs.read", "durationMs": 50}, 1),
    ]
    line = timeline_of(lines)
    texts = [bar.text for bar in line.bars]
    assert texts[0].startswith("model.call · ") and texts[1].startswith("fs.read · ")
    last = line.bars[1]  # ends at the right edge: its words go before it
    assert last.text_anchor == "end" and last.text_x < last.x
    assert all(0 <= bar.text_x <= TIMELINE_WIDTH for bar in line.bars)
