"""sessions_admin.store.frames.read_page and tail: paging, offsets, filters, growth."""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path

import pytest

from sessions_admin.store import frames as F
from tests.frames_files import all_frames, jl, make_file

# --- paging and offsets --------------------------------------------------------------


@pytest.fixture
def big_file(root: Path) -> tuple[Path, list[int]]:
    """~20,000 lines of varied sizes, with some damaged and blank lines; returns the path
    and the start offsets of the non-blank lines."""
    parts: list[bytes] = []
    offsets: list[int] = []
    pos = 0
    for i in range(20_000):
        if i % 997 == 0:
            line = b""  # blank: skipped, not a frame
        elif i % 101 == 0:
            line = b"{not json " + str(i).encode()
        else:
            kind = "tool.call" if i % 7 == 0 else "tick"
            frame = {"ts": 1_700_000_000_000 + i, "kind": kind, "i": i, "pad": "p" * (i % 300)}
            line = json.dumps(frame).encode()
        if line:
            offsets.append(pos)
        parts.append(line + b"\n")
        pos += len(line) + 1
    return make_file(root, "s", "r", b"".join(parts)), offsets


@pytest.mark.parametrize("limit", [1, 37, 200])
def test_paging_visits_every_frame_exactly_once(
    big_file: tuple[Path, list[int]], limit: int
) -> None:
    path, offsets = big_file
    seen: list[int] = []
    numbers: list[int | None] = []
    offset, line_number = 0, None
    pages = 0
    while True:
        page = F.read_page(path, offset, limit, first_line_number=line_number)
        pages += 1
        assert 0 < len(page.frames) <= limit or page.eof
        assert not page.realigned
        seen.extend(f.offset for f in page.frames)
        numbers.extend(f.number for f in page.frames)
        if page.next_offset is None:
            break
        offset, line_number = page.next_offset, page.next_line_number
    assert seen == offsets  # same order, no skip, no repeat
    assert numbers == [n + 1 for n in range(20_000) if n % 997 != 0]
    assert pages >= len(offsets) // limit


def test_paging_with_a_small_page_byte_budget_still_visits_every_frame(
    big_file: tuple[Path, list[int]],
) -> None:
    path, offsets = big_file
    frames = all_frames(path, limit=500, max_page_bytes=4096)
    assert [f.offset for f in frames] == offsets


def test_filtered_paging_visits_every_match_exactly_once(
    big_file: tuple[Path, list[int]],
) -> None:
    path, _ = big_file
    everything = all_frames(path)
    by_kind = all_frames(path, limit=50, kind="TOOL.CALL", scan_budget=64 * 1024)
    assert [f.offset for f in by_kind] == [f.offset for f in everything if f.kind == "tool.call"]
    by_text = all_frames(path, limit=13, q="NOT JSON", scan_budget=100_000)
    assert [f.offset for f in by_text] == [f.offset for f in everything if f.error]
    assert all(f.error == "not valid JSON" for f in by_text)


def test_filters_combine_and_handle_non_ascii_text(root: Path) -> None:
    # The runtime's JSON.stringify writes non-ASCII as UTF-8, not as \u escapes.
    lines = [
        {"kind": "a/b", "msg": "Café au lait"},
        {"kind": "A/B", "msg": "tea"},
        {"type": "other", "msg": "CAFÉ"},
    ]
    data = "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in lines).encode()
    path = make_file(root, "s", "r", data)
    assert [f.data["msg"] for f in F.read_page(path, q="café").frames] == ["Café au lait", "CAFÉ"]
    assert [f.data["msg"] for f in F.read_page(path, kind="a/b").frames] == ["Café au lait", "tea"]
    assert [f.data["msg"] for f in F.read_page(path, kind="a/b", q="TEA").frames] == ["tea"]
    assert F.read_page(path, q="  ").filtered is False  # a blank search is no search


def test_a_filter_with_no_match_stops_at_the_scan_budget_and_can_continue(
    big_file: tuple[Path, list[int]],
) -> None:
    path, _ = big_file
    page = F.read_page(path, q="no such needle", scan_budget=200_000)
    assert page.frames == [] and page.filtered
    assert page.stop_reason == "scan_budget" and not page.eof
    assert 200_000 <= page.scanned_to < 200_000 + 1000
    assert page.next_offset == page.scanned_to
    following = F.read_page(path, page.next_offset, q="no such needle", scan_budget=200_000)
    assert not following.realigned and following.offset == page.scanned_to


def test_a_forged_mid_line_offset_starts_at_the_next_line(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"a": 1}, {"b": 2}, {"c": 3}))
    first_len = len(jl({"a": 1}))
    for forged in range(1, first_len + 1):
        page = F.read_page(path, forged, first_line_number=99)
        if forged == first_len:  # exactly a line start: no realignment
            assert not page.realigned and page.frames[0].number == 99
        else:
            assert page.realigned and page.offset == first_len
            assert page.frames[0].number is None
        assert [f.data for f in page.frames] == [{"b": 2}, {"c": 3}]


def test_an_offset_inside_the_pending_line_shows_nothing_and_resumes_safely(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"a": 1}) + b'{"b": 2')
    page = F.read_page(path, len(jl({"a": 1})) + 3)
    assert page.frames == [] and page.pending is None and page.eof
    assert page.end_offset == path.stat().st_size
    with path.open("ab") as fh:
        fh.write(b"}\n" + jl({"c": 3}))
    later = F.read_page(path, page.end_offset)
    assert later.realigned and [f.data for f in later.frames] == [{"c": 3}]


def test_an_offset_past_eof_gives_an_empty_page(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"a": 1}))
    page = F.read_page(path, 10_000)
    assert page.frames == [] and page.eof and page.next_offset is None
    assert page.stop_reason == "past_end" and page.end_offset == page.size
    at_end = F.read_page(path, page.size)
    assert at_end.frames == [] and at_end.eof and not at_end.realigned


def test_a_negative_offset_reads_from_the_start_and_the_limit_is_clamped(root: Path) -> None:
    path = make_file(root, "s", "r", jl(*({"i": i} for i in range(F.MAX_LIMIT + 5))))
    assert F.read_page(path, -50, limit=1).frames[0].data == {"i": 0}
    assert len(F.read_page(path, 0, limit=0).frames) == 1
    assert len(F.read_page(path, 0, limit=10**9).frames) == F.MAX_LIMIT


def test_tail_returns_appended_frames_and_reports_changes(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"n": 1}))
    first = F.tail(path, 0)
    assert first.changed and [f.data for f in first.page.frames] == [{"n": 1}]
    same = F.tail(path, first.page.end_offset, last_size=first.size, last_mtime=first.mtime)
    assert not same.changed and same.page.frames == [] and not same.shrunk
    with path.open("ab") as fh:
        fh.write(jl({"n": 2}))
    os.utime(path, ns=(0, os.stat(path).st_mtime_ns + 1_000_000_000))
    more = F.tail(path, same.page.end_offset, last_size=same.size, last_mtime=same.mtime)
    assert more.changed and [f.data for f in more.page.frames] == [{"n": 2}]
    path.write_bytes(b"")  # truncated by a rotation
    gone = F.tail(path, more.page.end_offset, last_size=more.size, last_mtime=more.mtime)
    assert gone.shrunk and gone.changed and gone.page.frames == []


def test_polling_a_file_while_it_is_written_never_shows_half_lines(root: Path) -> None:
    path = make_file(root, "s", "live", b"")
    expected = [{"n": i, "pad": "x" * (i % 500)} for i in range(3000)]
    data = jl(*expected)
    rng = random.Random(1)

    def writer() -> None:
        with path.open("ab", buffering=0) as fh:
            pos = 0
            while pos < len(data):
                step = rng.randint(1, 3000)  # split lines at arbitrary bytes
                fh.write(data[pos : pos + step])
                pos += step

    thread = threading.Thread(target=writer)
    thread.start()
    seen: list[F.FrameLine] = []
    offset, size, mtime, number = 0, None, None, None
    while True:
        done = not thread.is_alive()
        polled = F.tail(path, offset, last_size=size, last_mtime=mtime, first_line_number=number)
        seen.extend(polled.page.frames)
        offset, number = polled.page.end_offset, polled.page.next_line_number
        size, mtime = polled.size, polled.mtime
        if done and polled.page.eof and polled.page.pending is None:
            break
    thread.join()
    assert all(f.ok for f in seen)
    assert [f.data for f in seen] == expected
    assert [f.number for f in seen] == list(range(1, 3001))
