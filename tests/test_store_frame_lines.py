"""sessions_admin.store.frames, line by line: parsing frames, damaged and unusual files."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pytest

from sessions_admin.store import frames as F
from tests.frames_files import jl, make_file

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
