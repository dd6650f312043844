"""The activity-frames screens: requests, frames of a request, live tail, orphans.

Every confinement case goes through real URLs (symlinks are made in the test), and
the frames files are written by the tests as the runtime would write them.
"""

from __future__ import annotations

import html
import json
import os
import re
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from django.test import Client

from sessions_admin.ids import session_url
from sessions_admin.models import DeletionAudit
from sessions_admin.store import deletion
from sessions_admin.store import frames as store_frames
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import BASE_MS

pytestmark = STORE_DB

HX = {"HTTP_HX_REQUEST": "true"}


def frame(i: int, **extra) -> dict:
    return {
        "ts": BASE_MS + i * 100,
        "kind": "tool.call" if i % 2 else "model.call",
        "traceId": "trace-a",
        "spanId": f"span-{i}",
        "name": f"step {i}",
        **extra,
    }


def write_request(
    store,
    session_id: str,
    request_id: str,
    lines,
    *,
    pending: bytes = b"",
    mtime: float | None = None,
) -> Path:
    """Write ``activity-<request_id>.jsonl``: dicts become JSON lines, bytes stay as is."""
    directory = store.frames_root / session_id
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"activity-{request_id}.jsonl"
    body = b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )
    path.write_bytes(body + pending)
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def append(path: Path, lines) -> None:
    with path.open("ab") as fh:
        for line in lines:
            fh.write((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n")


def request_url(session_id: str, request_id: str, **query) -> str:
    return session_url(session_id, f"frames/{request_id}", **query)


def text(response) -> str:
    return response.content.decode()


def next_link(response) -> str | None:
    match = re.search(r'rel="next" href="([^"]+)"', text(response))
    return html.unescape(match.group(1)) if match else None


def line_numbers(response) -> list[int]:
    return [
        int(n.replace(",", ""))
        for n in re.findall(r'<td class="num line">([\d,]+)</td>', text(response))
    ]


def tail_url(response) -> str | None:
    match = re.search(r'<div id="tail"[^>]*hx-get="([^"]+)"', text(response))
    return html.unescape(match.group(1)) if match else None


@pytest.fixture
def old() -> float:
    """An mtime long enough ago that the live tail does not start."""
    return time.time() - 3600


# --- Requests of a session ------------------------------------------------------------


def test_it_lists_the_request_files_with_size_and_frame_times(store, staff_client, old):
    sid = store.add_session("sess_a")
    write_request(store, sid, "req_one", [frame(0), frame(5)], mtime=old)
    write_request(store, sid, "req_two", [frame(10)], mtime=old)
    (store.frames_root / sid / "notes.txt").write_text("not a request")
    (store.frames_root / sid / "activity-x.json").write_text("{}")

    response = staff_client.get(session_url(sid, "frames"))

    assert response.status_code == 200
    body = text(response)
    assert request_url(sid, "req_one") in body and request_url(sid, "req_two") in body
    assert "notes.txt" not in body and "activity-x.json" not in body
    assert "2 requests" in body
    assert "500 ms" in body  # first to last frame of req_one
    assert "2025-11-24" in body  # first/last frame times


def test_it_says_so_when_the_session_has_no_frames_directory(store, staff_client):
    sid = store.add_session("sess_none")
    response = staff_client.get(session_url(sid, "frames"))
    assert response.status_code == 200
    assert "This session has no frames directory" in text(response)


def test_it_says_so_when_the_directory_has_no_request_files(store, staff_client):
    sid = store.add_session("sess_empty")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "other.log").write_text("x")
    response = staff_client.get(session_url(sid, "frames"))
    assert "No request files" in text(response)


def test_the_session_page_links_to_its_frames(store, staff_client):
    sid = store.add_session("sess_link")
    response = staff_client.get(session_url(sid))
    assert f'href="{session_url(sid, "frames")}"' in text(response)


def test_frames_of_a_deleted_session_stay_readable(store, staff_client, old):
    write_request(store, "sess_gone", "req_1", [frame(0)], mtime=old)

    listing = staff_client.get(session_url("sess_gone", "frames"))
    page = staff_client.get(request_url("sess_gone", "req_1"))

    assert listing.status_code == 200 and page.status_code == 200
    assert "no session with this id" in text(listing)
    assert "orphaned frames" in text(page)
    assert "step 0" in text(page)
    assert 'class="pair"' not in text(page)  # no messages to link to


def test_odd_session_and_request_ids_round_trip(store, staff_client, old):
    slashed = store.add_session("odd/id")
    # A session id holding "/" cannot name a directory: refused, never a crash.
    assert staff_client.get(session_url(slashed, "frames")).status_code == 400
    sid = store.add_session("odd id?#% ünï")
    request_id = "r %#?ü"
    write_request(store, sid, request_id, [frame(0)], mtime=old)
    expected = session_url(sid, "frames/" + quote(request_id, safe=""))

    listing = text(staff_client.get(session_url(sid, "frames")))
    page = staff_client.get(expected)

    assert f'href="{html.escape(expected)}"' in listing
    assert page.status_code == 200 and "step 0" in text(page)


# --- Trace search and links to messages ----------------------------------------------


def test_a_trace_id_finds_its_frames_across_the_requests(store, staff_client, old):
    sid = store.add_session("sess_t")
    write_request(store, sid, "req_a", [frame(0), frame(1, traceId="other")], mtime=old)
    write_request(store, sid, "req_b", [frame(2, traceId="other")], mtime=old)
    write_request(store, sid, "req_c", [frame(3), b"not json trace-a"], mtime=old)

    response = staff_client.get(session_url(sid, "frames", trace="trace-a"))

    body = text(response)
    section = body.split('class="card trace-search"')[1].split("</section>")[0]
    assert "req_a" in section and "req_c" in section and "req_b" not in section
    assert "step 0" in section and "step 3" in section and "step 1" not in section
    assert "unreadable line" in section  # damaged lines mentioning the trace are kept
    assert f'href="{html.escape(session_url(sid, trace="trace-a"))}"' in section


def test_a_trace_search_is_bounded_and_offers_to_continue(store, staff_client, old, monkeypatch):
    from sessions_admin.views.frames import session_requests as views

    monkeypatch.setattr(views, "TRACE_FILE_BUDGET", 4096)
    sid = store.add_session("sess_big")
    filler = [frame(i, traceId="other", pad="x" * 200) for i in range(100)]
    write_request(store, sid, "req_big", [*filler, frame(999)], mtime=old)

    body = text(staff_client.get(session_url(sid, "frames", trace="trace-a")))

    assert "Continue searching this file" in body
    assert "in the first" in body


def test_a_frame_links_back_to_the_messages_of_its_trace_and_span(store, staff_client, old):
    sid = store.add_session("sess_m")
    store.add_message(sid, "assistant", "in the trace", trace_id="trace-a", span_id="span-1")
    store.add_message(sid, "assistant", "elsewhere", trace_id="trace-z", span_id="span-9")
    write_request(store, sid, "req", [frame(1)], mtime=old)

    body = text(staff_client.get(request_url(sid, "req")))
    by_trace = session_url(sid, trace="trace-a")
    by_span = session_url(sid, span="span-1")
    assert f'href="{html.escape(by_trace)}"' in body
    assert f'href="{html.escape(by_span)}"' in body

    for url in (by_trace, by_span):
        transcript = text(staff_client.get(url))
        assert "in the trace" in transcript and "elsewhere" not in transcript


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


# --- Live tail ------------------------------------------------------------------------


def test_live_tail_picks_up_appended_frames(store, staff_client):
    sid = store.add_session("sess_live")
    path = write_request(
        store, sid, "req", [frame(0), frame(1)], pending=b'{"ts": 1764000000200, "kind": "x'
    )

    page = staff_client.get(request_url(sid, "req"))
    poll = tail_url(page)
    assert poll and 'hx-trigger="every 2s"' in text(page)

    # Nothing new yet: no rows, the poll element comes back unchanged.
    quiet = staff_client.get(poll, **HX)
    assert line_numbers(quiet) == [] and tail_url(quiet) == poll

    with path.open("ab") as fh:
        fh.write(b'", "name": "finished"}\n')
    append(path, [frame(3), frame(4)])

    fresh = staff_client.get(poll, **HX)
    body = text(fresh)
    assert line_numbers(fresh) == [3, 4, 5]
    assert "finished" in body and "step 3" in body and "step 4" in body
    assert 'hx-swap-oob="true"' in body and "<html" not in body
    assert body.lstrip().startswith("<tr")
    again = tail_url(fresh)
    assert again and again != poll

    # The next poll starts after what was shown: nothing repeats.
    assert line_numbers(staff_client.get(again, **HX)) == []


def test_live_tail_stops_when_the_file_stops_changing(store, staff_client, old):
    sid = store.add_session("sess_idle")
    path = write_request(store, sid, "req", [frame(0)])
    poll = tail_url(staff_client.get(request_url(sid, "req")))
    assert poll

    os.utime(path, (old, old))
    stopped = staff_client.get(poll, **HX)

    body = text(stopped)
    assert tail_url(stopped) is None and 'hx-trigger="every 2s"' not in body
    assert "live updates are off" in body and "Check for new frames" in body


def test_a_file_that_is_not_growing_is_not_polled(store, staff_client, old):
    sid = store.add_session("sess_still")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    body = text(staff_client.get(request_url(sid, "req")))
    assert 'hx-trigger="every 2s"' not in body and "live updates are off" in body


def test_a_page_that_is_not_the_end_has_no_poll(store, staff_client):
    sid = store.add_session("sess_mid")
    write_request(store, sid, "req", [frame(i) for i in range(150)])
    body = text(staff_client.get(request_url(sid, "req")))
    assert 'id="tail"' not in body and "Next page" in body


def test_the_tail_of_a_truncated_file_says_so(store, staff_client):
    sid = store.add_session("sess_trunc")
    path = write_request(store, sid, "req", [frame(i) for i in range(5)])
    poll = tail_url(staff_client.get(request_url(sid, "req")))
    path.write_bytes(b"")

    body = text(staff_client.get(poll, **HX))
    assert "truncated or replaced" in body and 'hx-trigger="every 2s"' not in body


def test_a_burst_larger_than_a_page_keeps_the_tail_going(store, staff_client):
    sid = store.add_session("sess_burst")
    path = write_request(store, sid, "req", [frame(0)])
    poll = tail_url(staff_client.get(request_url(sid, "req")))
    append(path, [frame(i) for i in range(1, 251)])

    seen: list[int] = []
    for _ in range(4):
        response = staff_client.get(poll, **HX)
        seen += line_numbers(response)
        poll = tail_url(response)
    assert seen == list(range(2, 252))


# --- Confinement ----------------------------------------------------------------------


@pytest.fixture
def outside(tmp_path) -> Path:
    """A directory outside the frames root holding a secret request file."""
    place = tmp_path / "outside"
    place.mkdir()
    secret = {"kind": "SECRET-FRAME", "traceId": "tr-x"}
    (place / "activity-req.jsonl").write_text(json.dumps(secret) + "\n")
    (place / "secret.txt").write_text("SECRET-TEXT\n")
    return place


def assert_refused(response, why: str = "") -> None:
    assert response.status_code == 400, response.status_code
    body = text(response)
    assert "Refused" in body and "frames root" in body
    assert why in body
    assert "SECRET" not in body


@pytest.mark.parametrize("session_id", ["..", "."])
def test_dot_session_ids_are_refused(store, staff_client, session_id, outside):
    assert_refused(staff_client.get(session_url(session_id, "frames")), "may not be")
    assert_refused(staff_client.get(request_url(session_id, "req")), "may not be")


def test_an_absolute_session_id_is_refused(store, staff_client, outside):
    response = staff_client.get(session_url(str(outside), "frames"))
    assert_refused(response, "may not contain")


def test_a_session_id_with_a_slash_is_refused(store, staff_client, outside):
    store.add_session("../outside")
    assert_refused(staff_client.get(session_url("../outside", "frames")))


@pytest.mark.parametrize("request_id", ["..", "%2E%2E", "."])
def test_dot_request_ids_are_refused(store, staff_client, request_id):
    sid = store.add_session("sess_c")
    (store.frames_root / sid).mkdir()
    response = staff_client.get(f"/sessions/{sid}/frames/{request_id}/")
    assert response.status_code in (400, 404)
    assert "SECRET" not in text(response)


def test_a_request_id_that_climbs_out_never_reaches_a_file(store, staff_client, outside):
    sid = store.add_session("sess_c2")
    (store.frames_root / sid).mkdir()
    for path in (
        f"/sessions/{sid}/frames/..%2F..%2F..%2Foutside%2Fsecret.txt/",
        f"/sessions/{sid}/frames/%2Fetc%2Fpasswd/",
    ):
        response = staff_client.get(path)
        assert response.status_code in (400, 404)
        assert "SECRET" not in text(response) and "root:" not in text(response)


def test_a_symlinked_session_directory_is_refused(store, staff_client, outside):
    sid = store.add_session("sess_link_out")
    (store.frames_root / sid).symlink_to(outside, target_is_directory=True)
    assert_refused(staff_client.get(session_url(sid, "frames")), "symbolic link")
    assert_refused(staff_client.get(request_url(sid, "req")), "symbolic link")


def test_a_symlink_to_a_directory_inside_the_root_is_refused_too(store, staff_client, old):
    real = store.add_session("sess_real")
    write_request(store, real, "req", [frame(0)], mtime=old)
    alias = store.add_session("sess_alias")
    (store.frames_root / alias).symlink_to(store.frames_root / real)
    assert_refused(staff_client.get(request_url(alias, "req")), "symbolic link")


def test_a_symlinked_request_file_is_refused(store, staff_client, outside, old):
    sid = store.add_session("sess_lf")
    write_request(store, sid, "fine", [frame(0)], mtime=old)
    (store.frames_root / sid / "activity-evil.jsonl").symlink_to(outside / "activity-req.jsonl")

    assert_refused(staff_client.get(request_url(sid, "evil")), "symbolic link")
    listing = text(staff_client.get(session_url(sid, "frames")))
    assert "fine" in listing and "evil" not in listing  # never listed either
    assert "SECRET" not in text(staff_client.get(session_url(sid, "frames", trace="tr-x")))


def test_a_request_path_that_is_a_directory_or_fifo_is_refused(store, staff_client):
    sid = store.add_session("sess_fifo")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-dir.jsonl").mkdir()
    os.mkfifo(store.frames_root / sid / "activity-pipe.jsonl")
    assert_refused(staff_client.get(request_url(sid, "dir")), "not a regular file")
    assert_refused(staff_client.get(request_url(sid, "pipe")), "not a regular file")


def test_a_symlinked_frames_root_is_followed_once(store, staff_client, settings, tmp_path, old):
    sid = store.add_session("sess_root")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    link = tmp_path / "root-link"
    link.symlink_to(store.frames_root, target_is_directory=True)
    settings.FRAMES_DIR = link
    assert "step 0" in text(staff_client.get(request_url(sid, "req")))


def test_a_refusal_for_htmx_is_a_banner_not_a_page(store, staff_client, outside):
    sid = store.add_session("sess_hxr")
    (store.frames_root / sid).symlink_to(outside)
    response = staff_client.get(request_url(sid, "req", tail=1, offset=0), **HX)
    assert response.status_code == 400 and response["HX-Retarget"] == "#flash"


# --- Access ---------------------------------------------------------------------------


def test_frames_pages_require_a_signed_in_staff_member(store, client, nonstaff_client, old):
    sid = store.add_session("sess_acc")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    for url in (session_url(sid, "frames"), request_url(sid, "req"), "/frames/orphans/"):
        assert client.get(url).status_code == 302
        assert nonstaff_client.get(url).status_code == 403


def test_a_viewer_may_read_frames_and_orphans(store, viewer_client, old):
    sid = store.add_session("sess_v")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    write_request(store, "sess_orphan", "req", [frame(0)], mtime=old)
    assert viewer_client.get(request_url(sid, "req")).status_code == 200
    orphans = viewer_client.get("/frames/orphans/")
    assert orphans.status_code == 200
    assert "Removing needs the permission" in text(orphans)


def test_frames_pages_reject_post(store, staff_client, old):
    sid = store.add_session("sess_post")
    write_request(store, sid, "req", [frame(0)], mtime=old)
    assert staff_client.post(session_url(sid, "frames")).status_code == 405
    assert staff_client.post(request_url(sid, "req")).status_code == 405


def test_the_navigation_links_to_the_orphans_page(store, staff_client):
    body = text(staff_client.get("/sessions/"))
    assert 'href="/frames/orphans/"' in body


# --- Orphans --------------------------------------------------------------------------


def orphans_setup(store, old) -> None:
    kept = store.add_session("sess_kept")
    write_request(store, kept, "req", [frame(0)], mtime=old)
    write_request(store, "sess_orphan1", "req", [frame(0), frame(1)], mtime=old)
    write_request(store, "sess_orphan2", "req", [frame(0)], mtime=old)
    store.add_session("sess_nodir")


def test_it_lists_orphans_with_sizes_and_total_disk_use(store, staff_client, old):
    orphans_setup(store, old)
    (store.frames_root / "a-link").symlink_to(store.frames_root / "sess_kept")

    body = text(staff_client.get("/frames/orphans/"))

    assert "sess_orphan1" in body and "sess_orphan2" in body
    assert 'value="sess_kept"' not in body
    total = sum(p.stat().st_size for p in store.frames_root.glob("sess_*/*.jsonl"))
    assert f"({total:,} bytes)" in body
    assert '<strong class="orphan-count">2</strong>' in body
    assert "a-link" in body and "skipped: symlink" in body
    # Sessions without a directory, for information.
    assert '<strong class="without-dir-count">1</strong>' in body
    assert "sess_nodir" in body


def test_removing_selected_orphans_is_audited(store, staff_client, old):
    orphans_setup(store, old)
    size = (store.frames_root / "sess_orphan1" / "activity-req.jsonl").stat().st_size

    response = staff_client.post("/frames/orphans/", {"session_id": ["sess_orphan1"]}, follow=True)

    assert response.redirect_chain[-1] == ("/frames/orphans/", 303)
    assert not (store.frames_root / "sess_orphan1").exists()
    assert (store.frames_root / "sess_orphan2").exists()
    assert (store.frames_root / "sess_kept").exists()
    assert "Removed 1 orphan frame directory" in text(response)
    audit = DeletionAudit.objects.get()
    assert audit.operation == DeletionAudit.Operation.ORPHAN_FRAMES
    assert audit.outcome == DeletionAudit.Outcome.OK
    assert audit.actor == "staff" and audit.frame_dirs_removed == 1
    assert audit.frame_bytes_removed == size
    assert audit.target["session_ids"] == ["sess_orphan1"]
    assert audit.sessions_deleted == audit.messages_deleted == 0
    assert store.count("sessions") == 2


def test_removing_all_orphans_needs_the_confirmation(store, staff_client, old):
    orphans_setup(store, old)
    refused = staff_client.post("/frames/orphans/", {"all": "1"}, follow=True)
    assert "Tick the confirmation box" in text(refused)
    assert (store.frames_root / "sess_orphan1").exists()
    assert not DeletionAudit.objects.exists()

    done = staff_client.post("/frames/orphans/", {"all": "1", "confirm": "1"}, follow=True)

    assert "Removed 2 orphan frame directories" in text(done)
    assert sorted(p.name for p in store.frames_root.iterdir()) == ["sess_kept"]
    audit = DeletionAudit.objects.get()
    assert audit.target["orphans"] == "all" and audit.frame_dirs_removed == 2


def test_a_directory_whose_session_exists_is_never_removed(store, staff_client, old):
    orphans_setup(store, old)
    response = staff_client.post(
        "/frames/orphans/", {"session_id": ["sess_kept", "sess_orphan2"]}, follow=True
    )
    assert (store.frames_root / "sess_kept").exists()
    assert not (store.frames_root / "sess_orphan2").exists()
    assert "1 now have a session row and were left alone" in text(response)


def test_removal_never_follows_a_symlink_or_leaves_the_root(store, staff_client, outside, old):
    orphans_setup(store, old)
    (store.frames_root / "evil").symlink_to(outside)
    response = staff_client.post(
        "/frames/orphans/", {"session_id": ["evil", "..", "../outside"]}, follow=True
    )
    assert (outside / "secret.txt").exists() and (store.frames_root / "evil").is_symlink()
    assert "3 refused" in text(response)
    assert DeletionAudit.objects.get().outcome == DeletionAudit.Outcome.PARTIAL


def test_selecting_nothing_removes_nothing(store, staff_client, old):
    orphans_setup(store, old)
    response = staff_client.post("/frames/orphans/", {}, follow=True)
    assert "Select at least one directory" in text(response)
    assert not DeletionAudit.objects.exists()


def test_a_viewer_may_not_remove_orphans(store, viewer_client, old):
    orphans_setup(store, old)
    response = viewer_client.post("/frames/orphans/", {"all": "1", "confirm": "1"})
    assert response.status_code == 403
    assert (store.frames_root / "sess_orphan1").exists()


def test_read_only_mode_refuses_removal(store, staff_client, old):
    orphans_setup(store, old)
    point_store_at(store.path, read_only=True)

    page = text(staff_client.get("/frames/orphans/"))
    response = staff_client.post("/frames/orphans/", {"session_id": ["sess_orphan1"]})

    assert "read-only mode" in page
    assert response.status_code == 403 and "read-only" in text(response)
    assert (store.frames_root / "sess_orphan1").exists()
    assert DeletionAudit.objects.get().outcome == DeletionAudit.Outcome.REFUSED


def test_removal_needs_a_csrf_token(store, old):
    orphans_setup(store, old)
    from django.contrib.auth.models import User

    user = User.objects.create_superuser("csrf", "", "pw")
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    response = client.post("/frames/orphans/", {"all": "1", "confirm": "1"})
    assert response.status_code == 403
    assert (store.frames_root / "sess_orphan1").exists()


def test_the_orphans_page_says_when_there_is_no_frames_root(
    store, staff_client, settings, tmp_path
):
    settings.FRAMES_DIR = tmp_path / "nowhere"
    body = text(staff_client.get("/frames/orphans/"))
    assert "the frames root does not exist" in body


def test_the_deletion_service_removes_every_orphan_and_reports_it(store, old, admin_user):
    orphans_setup(store, old)
    (store.frames_root / "empty_orphan").mkdir()
    result = deletion.remove_orphan_frames(actor=deletion.Actor.of(admin_user))
    assert result.frames is not None
    # The empty one is removed and counted as removed (issue 10): it was there.
    assert (result.frames.dirs_removed, result.frames.missing) == (3, 0)
    assert not (store.frames_root / "empty_orphan").exists()
    report = store_frames.scan_frame_dirs(store.frames_root, lambda ids: {"sess_kept"})
    assert report.orphans == []


def test_the_orphans_list_is_capped_but_remove_all_takes_every_one(
    store, staff_client, old, monkeypatch
):
    from sessions_admin.views.frames import orphans as views

    monkeypatch.setattr(views, "ORPHANS_SHOWN", 1)
    orphans_setup(store, old)
    body = text(staff_client.get("/frames/orphans/"))
    assert "1 older orphan not listed" in body
    assert "remove all 2 orphaned directories" in body
