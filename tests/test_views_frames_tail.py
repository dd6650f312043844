"""The live tail of a request file that is still being written."""

from __future__ import annotations

import os

from tests.conftest import STORE_DB
from tests.frames_files import (
    HX,
    append,
    frame,
    line_numbers,
    request_url,
    tail_url,
    text,
    write_request,
)

pytestmark = STORE_DB


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
