"""``/sessions/<id>/frames/``: a session's request files, the trace search, access."""

from __future__ import annotations

import html
import json
from urllib.parse import quote

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.frames_files import (
    frame,
    request_url,
    text,
    write_request,
)
from tests.storebuilder import BASE_MS

pytestmark = STORE_DB


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
    (store.frames_root / sid).mkdir(parents=True)  # without one the button is disabled
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
    assert 'href="/sessions/?frames=1"' in body  # Frames: the sessions with frames
    assert 'href="/frames/orphans/"' in text(staff_client.get("/sessions/?frames=1"))


@STORE_DB
def test_each_request_says_its_prompt_status_and_duration_where_its_frames_do(store, staff_client):
    sid = store.add_session("sess_sum")
    folder = store.frames_root / sid
    folder.mkdir()
    lines = [
        {"ts": BASE_MS, "kind": "request.start", "payload": {"prompt": "Why is\\nit slow?"}},
        {"ts": BASE_MS + 5, "kind": "model.call", "payload": {"inputTokens": 9}},
        {"ts": BASE_MS + 9, "kind": "request.end", "durationMs": 1234, "payload": {"status": "ok"}},
    ]
    (folder / "activity-r1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    (folder / "activity-r2.jsonl").write_text(json.dumps({"ts": BASE_MS + 20}) + "\n")
    body = text(staff_client.get(session_url(sid, "frames")))
    assert "Why is\\nit slow?" in body or "Why is it slow?" in body
    assert "status-ok" in body and "1.2 s" in body
    assert body.count('<span class="muted">—</span>') >= 3  # r2 holds none of them


@pytest.mark.parametrize(
    ("first", "last", "expected"),
    [
        ({"prompt": "  a   b "}, {"status": "ok", "duration": 5.5}, ("a b", "ok", 5)),
        (
            {"payload": {"input": "x" * 500}},
            {"payload": {"outcome": "error"}},
            ("x" * 160, "error", None),
        ),
        ({"prompt": 7}, {"status": ["ok"], "durationMs": True}, (None, None, None)),
        ({"prompt": None}, {"durationMs": -1}, (None, None, None)),
        ({"payload": "not a dict"}, {"durationMs": 1e300}, (None, None, None)),
        (None, None, (None, None, None)),
    ],
)
def test_a_requests_summary_takes_only_what_reads_as_it(first, last, expected):
    from sessions_admin.store.frames.requests import summary_of

    assert summary_of(first, last) == expected


@STORE_DB
def test_a_requests_page_says_its_prompt_status_duration_and_tokens(store, staff_client):
    sid = store.add_session("sess_tok")
    lines = [
        {"ts": BASE_MS, "kind": "request.start", "payload": {"prompt": "Why so slow?"}},
        {
            "ts": BASE_MS + 5,
            "kind": "model.call",
            "payload": {"inputTokens": 900, "outputTokens": 40},
        },
        b"{cut line",
        {
            "ts": BASE_MS + 7,
            "kind": "model.call",
            "usage": {"input_tokens": 100, "output_tokens": 2},
        },
        {"ts": BASE_MS + 8, "kind": "model.call", "payload": {"inputTokens": True}},
        {"ts": BASE_MS + 9, "kind": "request.end", "durationMs": 1234, "payload": {"status": "ok"}},
    ]
    write_request(store, sid, "r1", lines)
    body = html.unescape(text(staff_client.get(request_url(sid, "r1"))))
    about = body[body.index('<dl class="request-about">') : body.index("</dl>")]
    assert "Why so slow?" in about and ">ok<" in about and "1.2 s" in about
    assert "1,000 in · 42 out" in about and "summed over 2 frames" in about
    write_request(store, sid, "r2", [{"ts": BASE_MS, "kind": "x"}])
    about = html.unescape(text(staff_client.get(request_url(sid, "r2"))))
    assert "not stated by its frames" in about and "status</dt><dd>not stated" in about


@STORE_DB
def test_a_request_file_too_large_to_read_whole_says_its_tokens_are_not_counted(
    store, staff_client, monkeypatch
):
    from sessions_admin.store.frames import requests as frame_requests

    monkeypatch.setattr(frame_requests, "TOKENS_SCAN_BYTES", 100)
    sid = store.add_session("sess_big")
    write_request(store, sid, "r1", [frame(i, payload={"inputTokens": 5}) for i in range(10)])
    body = html.unescape(text(staff_client.get(request_url(sid, "r1"))))
    assert "not counted: the file is too large to read whole" in body


@given(
    st.lists(
        st.fixed_dictionaries(
            {},
            optional={
                "inputTokens": st.one_of(
                    st.integers(-5, 10**6), st.booleans(), st.text(max_size=3)
                ),
                "outputTokens": st.integers(0, 10**6),
                "payload": st.fixed_dictionaries(
                    {}, optional={"input_tokens": st.integers(0, 10**6)}
                ),
            },
        ),
        max_size=12,
    )
)
@hsettings(max_examples=40, deadline=None)
def test_the_tokens_summed_equal_a_count_of_what_the_frames_state(tmp_path_factory, frames):
    from sessions_admin.store.frames.requests import request_tokens, tokens_of

    path = tmp_path_factory.mktemp("tok") / "activity-r.jsonl"
    path.write_text("".join(json.dumps(f) + "\n" for f in frames))

    def stated(value):
        return isinstance(value, int) and not isinstance(value, bool) and value >= 0

    want_in = want_out = want_frames = 0
    for f in frames:
        payload = f.get("payload", {})
        has_in = stated(f.get("inputTokens")) or stated(payload.get("input_tokens"))
        has_out = stated(f.get("outputTokens"))
        if has_in or has_out:
            want_frames += 1
            # The payload's count, read after the top's, is the one kept.
            if stated(payload.get("input_tokens")):
                want_in += payload["input_tokens"]
            elif stated(f.get("inputTokens")):
                want_in += f["inputTokens"]
            want_out += f["outputTokens"] if has_out else 0
        assert (tokens_of(f) is not None) == (has_in or has_out)
    tokens = request_tokens(path)
    assert (tokens.input, tokens.output, tokens.frames) == (want_in, want_out, want_frames)
