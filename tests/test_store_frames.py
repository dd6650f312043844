"""Tests for sessions_admin.store.frames: confined, bounded reading of activity frames.

Plain pytest, no Django: run with ``pytest tests/test_store_frames.py -p no:django``.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import threading
import tracemalloc
from pathlib import Path

import pytest

from sessions_admin.store import frames as F
from sessions_admin.store.frames import FramesNotFound, FramesRefused

# --- helpers -------------------------------------------------------------------------


def make_file(root: Path, session_id: str, request_id: str, data: bytes) -> Path:
    directory = root / session_id
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"activity-{request_id}.jsonl"
    path.write_bytes(data)
    return path


def jl(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "sessions"
    r.mkdir()
    return r


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory outside the frames root with a file that must never be read or removed."""
    o = tmp_path / "outside"
    o.mkdir()
    (o / "activity-secret.jsonl").write_bytes(jl({"secret": True}))
    (o / "passwd").write_text("root:x:0:0\n")
    return o


def all_frames(path: Path, **kw: object) -> list[F.FrameLine]:
    out: list[F.FrameLine] = []
    offset = 0
    while True:
        page = F.read_page(path, offset, **kw)
        out.extend(page.frames)
        if page.next_offset is None:
            return out
        assert page.next_offset > offset, "paging must always make progress"
        offset = page.next_offset


# --- parsing frames ------------------------------------------------------------------


def test_a_valid_frame_exposes_its_well_known_keys(root: Path) -> None:
    frame = {
        "ts": 1_700_000_000_123,
        "kind": "tool.call",
        "traceId": "t-1",
        "spanId": "s-2",
        "parentSpanId": "s-1",
        "name": "search",
        "durationMs": 12.5,
        "message": "looking\nfor things",
        "extra": {"deep": [1, 2]},
    }
    path = make_file(root, "s", "r", jl(frame))
    page = F.read_page(path)
    [line] = page.frames
    assert line.ok and line.error is None
    assert line.data == frame
    assert (line.offset, line.number, line.length) == (0, 1, path.stat().st_size - 1)
    assert line.ts_ms == 1_700_000_000_123
    assert line.kind == "tool.call"
    assert (line.trace_id, line.span_id, line.parent_span_id) == ("t-1", "s-2", "s-1")
    assert line.name == "search"
    assert line.duration_ms == 12.5
    assert line.summary.startswith("search · looking for things")
    assert "\n" not in line.summary
    assert json.loads(line.pretty) == frame and "\n  " in line.pretty
    assert page.eof and page.next_offset is None and page.pending is None
    assert page.end_offset == page.size == path.stat().st_size


def test_alternative_key_spellings_are_recognised(root: Path) -> None:
    frame = {
        "timestamp": 1_700_000_000,
        "type": "span",
        "trace_id": "T",
        "span_id": "S",
        "parent_span_id": "P",
        "duration_ms": 3,
    }
    [line] = F.read_page(make_file(root, "s", "r", jl(frame))).frames
    assert line.ts_ms == 1_700_000_000_000
    assert (line.kind, line.trace_id, line.span_id, line.parent_span_id) == ("span", "T", "S", "P")
    assert line.duration_ms == 3.0


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1_700_000_000_123, 1_700_000_000_123),  # epoch ms
        (1_700_000_000.5, 1_700_000_000_500),  # epoch seconds (float)
        (1_700_000_000, 1_700_000_000_000),  # epoch seconds (int)
        (1_700_000_000_123_456, 1_700_000_000_123),  # epoch µs
        (1_700_000_000_123_456_789, 1_700_000_000_123),  # epoch ns
        ("2023-11-14T22:13:20.123Z", 1_700_000_000_123),
        ("2023-11-14T23:13:20.123+01:00", 1_700_000_000_123),
        ("2023-11-14T22:13:20", 1_700_000_000_000),  # naive ISO is taken as UTC
        ("1700000000123", 1_700_000_000_123),
        ("yesterday", None),
        (True, None),
        (None, None),
        (float("nan"), None),
        (10**30, None),  # beyond what a datetime can show
    ],
)
def test_timestamps_are_read_from_ms_seconds_and_iso_strings(
    root: Path, value: object, expected: int | None
) -> None:
    path = make_file(root, "s", "r", json.dumps({"time": value}).encode() + b"\n")
    [line] = F.read_page(path).frames
    assert line.ts_ms == expected


def test_a_line_that_is_not_json_is_reported_as_damaged(root: Path) -> None:
    path = make_file(root, "s", "r", b'{"a": 1,\n' + jl({"ok": 1}))
    first, second = F.read_page(path).frames
    assert first.error == "not valid JSON" and first.data is None
    assert first.raw == '{"a": 1,' and first.summary == "not valid JSON"
    assert second.ok and second.data == {"ok": 1} and second.number == 2


@pytest.mark.parametrize("line", [b"[1, 2, 3]", b"42", b'"text"', b"null", b"true"])
def test_a_json_value_that_is_not_an_object_is_reported(root: Path, line: bytes) -> None:
    [frame] = F.read_page(make_file(root, "s", "r", line + b"\n")).frames
    assert frame.error == "not a JSON object"
    assert frame.data is None and frame.raw == line.decode()


def test_invalid_utf8_is_reported_and_shown_with_replacement_characters(root: Path) -> None:
    path = make_file(root, "s", "r", b'{"a": "caf\xe9"}\n')
    [frame] = F.read_page(path).frames
    assert frame.error == "not valid UTF-8"
    assert frame.raw == '{"a": "caf\ufffd"}'


def test_pathologically_nested_json_is_damaged_not_a_crash(root: Path) -> None:
    path = make_file(root, "s", "r", b"[" * 100_000 + b"]" * 100_000 + b"\n")
    [frame] = F.read_page(path).frames
    assert frame.error in ("not valid JSON", "not a JSON object")


def test_a_deep_but_valid_frame_still_gets_a_pretty_form(root: Path) -> None:
    deep: object = 1
    for _ in range(900):
        deep = {"a": deep}
    path = make_file(root, "s", "r", json.dumps({"x": deep}).encode() + b"\n")
    [frame] = F.read_page(path).frames
    assert frame.ok and frame.pretty


def test_crlf_line_endings_are_tolerated(root: Path) -> None:
    path = make_file(root, "s", "r", b'{"a": 1}\r\n{"b": 2}\r\n')
    frames = F.read_page(path).frames
    assert [f.data for f in frames] == [{"a": 1}, {"b": 2}]
    assert frames[0].raw == '{"a": 1}'


def test_a_leading_byte_order_mark_is_tolerated(root: Path) -> None:
    path = make_file(root, "s", "r", b'\xef\xbb\xbf{"a": 1}\n')
    [frame] = F.read_page(path).frames
    assert frame.data == {"a": 1}


def test_long_values_give_a_capped_summary_and_pretty_form(root: Path) -> None:
    frame = {"name": "n" * 500, "message": "m" * 500, "blob": ["x" * 100] * 1000}
    [line] = F.read_page(make_file(root, "s", "r", jl(frame))).frames
    assert len(line.summary) <= F.SUMMARY_MAX_CHARS
    assert line.pretty_truncated and len(line.pretty) <= F.PRETTY_MAX_CHARS + 2
    assert line.truncated and len(line.raw) == F.RAW_PREVIEW_BYTES
    assert line.data == frame  # the data itself is complete


def test_a_frame_without_descriptive_keys_is_summarised_by_its_kind(root: Path) -> None:
    [line] = F.read_page(make_file(root, "s", "r", jl({"ts": 1, "kind": "tick"}))).frames
    assert line.summary == "tick"


# --- damaged and unusual files -------------------------------------------------------


def test_an_empty_file_gives_an_empty_page_at_eof(root: Path) -> None:
    page = F.read_page(make_file(root, "s", "r", b""))
    assert page.frames == [] and page.eof and page.next_offset is None
    assert page.pending is None and page.size == 0 and page.end_offset == 0


def test_blank_lines_are_skipped_but_counted_for_line_numbers(root: Path) -> None:
    path = make_file(root, "s", "r", b'\n  \n{"a": 1}\n\n{"b": 2}\n')
    frames = F.read_page(path).frames
    assert [(f.number, f.data) for f in frames] == [(3, {"a": 1}), (5, {"b": 2})]


def test_a_line_over_the_limit_is_reported_too_long_with_its_full_length(root: Path) -> None:
    long_line = json.dumps({"blob": "x" * 5000}).encode()
    path = make_file(root, "s", "r", jl({"a": 1}) + long_line + b"\n" + jl({"b": 2}))
    frames = F.read_page(path, max_line_bytes=1000).frames
    assert [f.error for f in frames] == [None, "line too long", None]
    too_long = frames[1]
    assert too_long.length == len(long_line) and too_long.truncated and too_long.data is None
    assert too_long.raw.startswith('{"blob": "xxx')
    assert frames[2].data == {"b": 2} and frames[2].number == 3


def test_a_huge_single_line_is_shown_truncated_with_its_size(root: Path) -> None:
    huge = b'{"blob": "' + b"y" * (5 * 1024 * 1024) + b'"}'
    path = make_file(root, "s", "r", huge + b"\n" + jl({"after": True}))
    page = F.read_page(path)
    first, second = page.frames
    assert first.error == "line too long" and first.length == len(huge)
    assert first.truncated and len(first.raw) <= F.RAW_PREVIEW_BYTES
    assert str(len(huge) // 1000) in first.summary.replace(",", "")
    assert second.data == {"after": True} and second.offset == len(huge) + 1
    assert page.eof


def test_memory_stays_flat_on_a_file_with_a_huge_line(root: Path) -> None:
    size = 40 * 1024 * 1024
    path = root / "s" / "activity-big.jsonl"
    path.parent.mkdir()
    with path.open("wb") as fh:
        fh.write(b'{"blob": "')
        block = b"z" * (1024 * 1024)
        for _ in range(size // len(block)):
            fh.write(block)
        fh.write(b'"}\n')
        fh.write(jl({"after": 1}))
    tracemalloc.start()
    try:
        page = F.read_page(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 4 * 1024 * 1024, f"peak {peak} bytes while reading a 40 MB line"
    [frame] = page.frames
    assert frame.error == "line too long" and frame.length == size + len('{"blob": ""}')
    # Skipping 40 MB spent the scan budget, so the page ends there; the next one goes on.
    assert page.stop_reason == "scan_budget" and page.next_offset == frame.end_offset
    assert [f.data for f in F.read_page(path, page.next_offset).frames] == [{"after": 1}]


def test_an_incomplete_last_line_is_pending_then_picked_up_once_complete(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"n": 1}) + b'{"n": 2, "par')
    page = F.read_page(path)
    assert [f.data for f in page.frames] == [{"n": 1}]
    assert page.pending is not None
    assert page.pending.offset == len(jl({"n": 1})) and page.pending.length == 13
    assert page.pending.preview == '{"n": 2, "par'
    assert page.eof and page.next_offset is None and page.end_offset == page.pending.offset
    # The runtime finishes the line and starts another.
    with path.open("ab") as fh:
        fh.write(b'tial": true}\n{"n": 3}')
    later = F.read_page(path, page.end_offset, first_line_number=page.next_line_number)
    assert [(f.number, f.data) for f in later.frames] == [(2, {"n": 2, "partial": True})]
    assert later.pending is not None and later.pending.length == len(b'{"n": 3}')


def test_an_unterminated_over_long_last_line_is_pending_not_an_error(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"n": 1}) + b'{"blob": "' + b"q" * 5000)
    page = F.read_page(path, max_line_bytes=1000)
    assert [f.data for f in page.frames] == [{"n": 1}]
    assert page.pending is not None and page.pending.length == 5010
    assert page.end_offset == page.pending.offset == len(jl({"n": 1})) and page.eof
    with path.open("ab") as fh:
        fh.write(b'"}\n')
    [later] = F.read_page(path, page.end_offset, max_line_bytes=1000).frames
    assert later.error == "line too long" and later.length == 5012
    assert len(page.pending.preview) <= F.PENDING_PREVIEW_BYTES


def test_a_page_stopped_by_its_limit_right_before_the_pending_line_is_at_eof(root: Path) -> None:
    path = make_file(root, "s", "r", jl({"n": 1}, {"n": 2}) + b'{"n": 3')
    page = F.read_page(path, limit=2)
    assert page.stop_reason == "limit"
    assert page.eof and page.next_offset is None and page.pending is not None


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


# --- confinement ---------------------------------------------------------------------

BAD_IDS = ["", ".", "..", "a/b", "../x", "/etc", "/", "a\x00b", "a\\b", "..\\x", "x" * 300]


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_session_ids_are_refused_everywhere(root: Path, bad: str) -> None:
    with pytest.raises(FramesRefused):
        F.session_dir(root, bad)
    with pytest.raises(FramesRefused):
        F.request_file(root, bad, "r")
    with pytest.raises(FramesRefused):
        F.list_requests(root, bad)
    with pytest.raises(FramesRefused):
        F.dir_usage(root, bad)
    with pytest.raises(FramesRefused):
        F.remove_session_dir(root, bad)


@pytest.mark.parametrize("bad", BAD_IDS)
def test_bad_request_ids_are_refused(root: Path, bad: str) -> None:
    make_file(root, "s", "r", jl({"a": 1}))
    with pytest.raises(FramesRefused):
        F.request_file(root, "s", bad)


def test_refusals_carry_a_human_message(root: Path) -> None:
    with pytest.raises(FramesRefused, match="may not be '.' or '..'"):
        F.session_dir(root, "..")


def test_a_valid_id_resolves_strictly_inside_the_root(root: Path) -> None:
    path = make_file(root, "sess-1", "req.1", jl({"a": 1}))
    assert F.session_dir(root, "sess-1") == path.parent
    assert F.request_file(root, "sess-1", "req.1") == path


def test_the_root_itself_may_be_a_symlink(tmp_path: Path, root: Path) -> None:
    make_file(root, "s", "r", jl({"a": 1}))
    link = tmp_path / "root-link"
    link.symlink_to(root)
    assert F.request_file(link, "s", "r") == root.resolve() / "s" / "activity-r.jsonl"
    assert [r.request_id for r in F.list_requests(link, "s")] == ["r"]


def test_a_symlinked_session_dir_pointing_outside_is_refused(root: Path, outside: Path) -> None:
    (root / "evil").symlink_to(outside)
    with pytest.raises(FramesRefused, match="symbolic link"):
        F.session_dir(root, "evil")
    with pytest.raises(FramesRefused):
        F.request_file(root, "evil", "secret")
    with pytest.raises(FramesRefused):
        F.list_requests(root, "evil")
    with pytest.raises(FramesRefused):
        F.dir_usage(root, "evil")


def test_a_symlinked_session_dir_pointing_inside_the_root_is_refused(root: Path) -> None:
    make_file(root, "real", "r", jl({"a": 1}))
    (root / "alias").symlink_to(root / "real")
    with pytest.raises(FramesRefused):
        F.session_dir(root, "alias")
    with pytest.raises(FramesRefused):
        F.request_file(root, "alias", "r")
    with pytest.raises(FramesRefused):
        F.list_requests(root, "alias")


def test_a_symlinked_file_inside_a_session_dir_is_refused_and_not_listed(
    root: Path, outside: Path
) -> None:
    make_file(root, "s", "ok", jl({"ts": 1_700_000_000_000}))
    link = root / "s" / "activity-leak.jsonl"
    link.symlink_to(outside / "activity-secret.jsonl")
    (root / "s" / "activity-inner.jsonl").symlink_to(root / "s" / "activity-ok.jsonl")
    with pytest.raises(FramesRefused, match="symbolic link"):
        F.request_file(root, "s", "leak")
    with pytest.raises(FramesRefused):
        F.request_file(root, "s", "inner")
    with pytest.raises(FramesRefused):  # even when handed the path directly
        F.read_page(link)
    assert [r.request_id for r in F.list_requests(root, "s")] == ["ok"]


def test_a_special_file_is_refused_without_blocking(root: Path) -> None:
    (root / "s").mkdir()
    os.mkfifo(root / "s" / "activity-fifo.jsonl")
    with pytest.raises(FramesRefused):
        F.request_file(root, "s", "fifo")
    with pytest.raises(FramesRefused):
        F.read_page(root / "s" / "activity-fifo.jsonl")


def test_a_session_path_that_is_a_file_is_refused(root: Path) -> None:
    (root / "plain").write_text("x")
    with pytest.raises(FramesRefused, match="not a directory"):
        F.session_dir(root, "plain")


def test_a_missing_session_dir_lists_nothing_but_a_missing_file_is_not_found(
    tmp_path: Path, root: Path
) -> None:
    assert F.list_requests(root, "nobody") == []
    assert F.list_requests(tmp_path / "no-root", "nobody") == []
    assert F.dir_usage(root, "nobody") is None
    with pytest.raises(FramesNotFound):
        F.request_file(root, "nobody", "r")
    make_file(root, "s", "r", b"")
    with pytest.raises(FramesNotFound):
        F.request_file(root, "s", "other")
    with pytest.raises(FramesNotFound):
        F.read_page(root / "s" / "activity-other.jsonl")


# --- listing requests ----------------------------------------------------------------


def test_list_requests_reads_end_timestamps_and_ignores_other_files(root: Path) -> None:
    late = jl({"ts": 3_000_000_000_000}, {"x": "no ts"}, {"ts": 3_000_000_000_900}) + b'{"ts": 9'
    make_file(root, "s", "late", late)
    early = jl({"ts": 1_000_000_000_000}, {"ts": 1_000_000_000_500}) + b"{broken\n"
    make_file(root, "s", "early", early)
    make_file(root, "s", "none", jl({"no": "ts"}))
    (root / "s" / "notes.txt").write_text("x")
    (root / "s" / "activity-.jsonl").write_text("x")  # empty request id
    (root / "s" / "activity-dir.jsonl").mkdir()
    os.utime(root / "s" / "activity-none.jsonl", (0, 0))
    listed = F.list_requests(root, "s")
    assert [r.request_id for r in listed] == ["none", "early", "late"]
    by_id = {r.request_id: r for r in listed}
    assert (by_id["late"].first_ts_ms, by_id["late"].last_ts_ms) == (3e12, 3_000_000_000_900)
    assert (by_id["early"].first_ts_ms, by_id["early"].last_ts_ms) == (1e12, 1_000_000_000_500)
    assert (by_id["none"].first_ts_ms, by_id["none"].last_ts_ms) == (None, None)
    assert by_id["late"].size == len(late) and by_id["late"].name == "activity-late.jsonl"
    assert by_id["none"].mtime == 0.0


def test_list_requests_finds_end_timestamps_of_a_large_file(root: Path) -> None:
    body = jl(*({"ts": 1_000 + i, "pad": "p" * 200} for i in range(20_000)))
    make_file(root, "s", "big", body)
    [info] = F.list_requests(root, "s")
    assert (info.first_ts_ms, info.last_ts_ms) == (1_000 * 1000, (1_000 + 19_999) * 1000)


def test_list_requests_gives_none_when_the_end_lines_exceed_the_window(root: Path) -> None:
    big = json.dumps({"ts": 5, "blob": "b" * (F.TAIL_BYTES * 2)}).encode() + b"\n"
    make_file(root, "s", "r", big)
    [info] = F.list_requests(root, "s")
    assert (info.first_ts_ms, info.last_ts_ms) == (None, None)


# --- orphan scan, usage and removal --------------------------------------------------


def test_the_orphan_scan_splits_directories_and_skips_symlinks(root: Path, outside: Path) -> None:
    make_file(root, "known", "r", b"x" * 10)
    make_file(root, "orphan", "r1", b"y" * 100)
    make_file(root, "orphan", "r2", b"y" * 50)
    (root / "orphan" / "link").symlink_to(outside / "passwd")
    (root / "empty").mkdir()
    (root / "evil").symlink_to(outside)
    (root / "stray.txt").write_text("zz")
    report = F.scan_frame_dirs(root, lambda names: {"known", "not-asked"} & set(names))
    assert [d.session_id for d in report.known] == ["known"]
    assert [d.session_id for d in report.orphans] == ["empty", "orphan"]
    orphan = {d.session_id: d for d in report.orphans}["orphan"]
    assert (orphan.bytes, orphan.files) == (150, 2)
    assert report.orphan_bytes == 150 and report.total_bytes == 160
    assert ("evil", "skipped: symlink") in [(s.name, s.reason) for s in report.skipped]
    assert ("stray.txt", "skipped: not a directory") in [(s.name, s.reason) for s in report.skipped]


def test_the_orphan_scan_asks_about_names_in_batches_of_at_most_500(root: Path) -> None:
    for i in range(1201):
        (root / f"s{i:05d}").mkdir()
    batches: list[list[str]] = []

    def known(names: list[str]) -> set[str]:
        batches.append(list(names))
        return {n for n in names if n.endswith("0")}

    report = F.scan_frame_dirs(root, known)
    assert [len(b) for b in batches] == [500, 500, 201]
    assert sorted(n for b in batches for n in b) == sorted(p.name for p in root.iterdir())
    assert len(report.known) == 121 and len(report.orphans) == 1080


def test_the_orphan_scan_of_a_missing_root_is_empty(tmp_path: Path) -> None:
    report = F.scan_frame_dirs(tmp_path / "nope", lambda names: set())
    assert not report.root_exists and report.orphans == [] and report.total_bytes == 0


def test_dir_usage_counts_regular_files_only(root: Path, outside: Path) -> None:
    make_file(root, "s", "a", b"1234")
    make_file(root, "s", "b", b"56")
    (root / "s" / "link").symlink_to(outside / "passwd")
    assert F.dir_usage(root, "s") == (6, 2)


@pytest.mark.parametrize("safe_rmtree", [True, False])
def test_remove_session_dir_removes_files_and_the_directory(
    root: Path, outside: Path, monkeypatch: pytest.MonkeyPatch, safe_rmtree: bool
) -> None:
    monkeypatch.setattr(shutil.rmtree, "avoids_symlink_attacks", safe_rmtree)
    make_file(root, "s", "a", b"1234")
    make_file(root, "s", "b", b"56")
    (root / "s" / "nested").mkdir()
    (root / "s" / "nested" / "c").write_bytes(b"789")
    (root / "s" / "link").symlink_to(outside)  # the link goes, its target stays
    removed = F.remove_session_dir(root, "s")
    assert removed == F.RemovedDir(bytes=9, files=3, others=(("symlink", 1),))
    assert not (root / "s").exists() and root.exists()
    assert (outside / "passwd").read_text() == "root:x:0:0\n"
    assert F.remove_session_dir(root, "s") == F.RemovedDir(0, 0, existed=False)  # missing
    (root / "empty").mkdir()
    assert F.remove_session_dir(root, "empty") == F.RemovedDir(0, 0, existed=True)
    assert not (root / "empty").exists()


def test_remove_session_dir_refuses_a_symlink_and_leaves_its_target(
    root: Path, outside: Path
) -> None:
    (root / "evil").symlink_to(outside)
    make_file(root, "real", "r", jl({"a": 1}))
    (root / "alias").symlink_to(root / "real")
    before = sorted(p.name for p in outside.iterdir())
    with pytest.raises(FramesRefused):
        F.remove_session_dir(root, "evil")
    with pytest.raises(FramesRefused):
        F.remove_session_dir(root, "alias")
    assert (root / "evil").is_symlink() and (root / "alias").is_symlink()
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (root / "real" / "activity-r.jsonl").exists()
