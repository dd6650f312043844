"""Triage: what failed, normalised and grouped; failed calls per session; the tools
table's sort and error-share shades."""

from __future__ import annotations

import pytest

from sessions_admin.ourdata import sync
from sessions_admin.ourdata.rollups import calls, figures
from sessions_admin.ourdata.rollups.errors import error_text, normalise, what_failed
from sessions_admin.ourdata.rollups.figures import ToolRow
from sessions_admin.views.tools import share_class, sort_rows
from tests.conftest import STORE_DB


@pytest.mark.parametrize(
    "head, what",
    [
        (
            '{"ok":false,"error":{"code":"ETIMEDOUT","message":"timed out after 5000 ms"}}',
            "ETIMEDOUT: timed out after <n> ms",
        ),
        ('{"error": "no row 42 in table t for call_9f3ab2c4d1"}', "no row <n> in table t for <id>"),
        ('{"error": "session 123e4567-e89b-12d3-a456-426614174000 gone"}', "session <id> gone"),
        (
            '{"error": {"code": "HTTP_503", "message": "upstream 0x7ffe12 said no"}}',
            "HTTP_503: upstream <id> said no",
        ),
        ('{"success": false}', '{"success": false}'),
        # A head cut short is not JSON: its code and message are still found.
        (
            '{"ok":false,"error":{"code":"EACCES","message":"denied for /srv/app/9',
            "EACCES: denied for /srv/app/<n>",
        ),
        ("plain   text\nof 3 lines", "plain text of <n> lines"),
        (None, "(no result)"),
    ],
)
def test_what_failed_is_the_error_with_numbers_and_ids_left_out(head, what):
    assert what_failed(head) == what


def test_alike_failures_normalise_to_one_text_and_different_codes_stay_apart():
    a = what_failed('{"error": {"code": "ETIMEDOUT", "message": "after 5000 ms"}}')
    b = what_failed('{"error": {"code": "ETIMEDOUT", "message": "after 30000 ms"}}')
    c = what_failed('{"error": {"code": "ENOTFOUND", "message": "after 5000 ms"}}')
    assert a == b != c


def test_an_error_object_without_code_or_message_is_shown_as_json():
    assert error_text('{"error": {"why": "x"}}') == '{"why": "x"}'
    assert len(normalise("x" * 500)) == 200


def test_error_shares_are_shaded_in_bands():
    shares = (0, 0.001, 0.0099, 0.01, 0.049, 0.05, 0.099, 0.10, 0.149, 0.15, 1)
    assert [share_class(s) for s in shares] == [
        "share-0",
        "share-1",
        "share-1",
        "share-5",
        "share-5",
        "share-10",  # 5 % and 15 % no longer share a shade
        "share-10",
        "share-15",
        "share-15",
        "share-high",
        "share-high",
    ]


def test_tool_rows_sort_by_any_column_with_empty_figures_last():
    rows = [
        ToolRow("b", calls=5, errors=1, p50_ms=None),
        ToolRow("a", calls=5, errors=4, p50_ms=7),
        ToolRow("c", calls=9, errors=0, p50_ms=3),
    ]
    assert [r.tool for r in sort_rows(rows, "-calls")] == ["c", "a", "b"]
    assert [r.tool for r in sort_rows(rows, "tool")] == ["a", "b", "c"]
    assert [r.tool for r in sort_rows(rows, "-share")] == ["a", "b", "c"]
    assert [r.tool for r in sort_rows(rows, "p50")] == ["c", "a", "b"]
    assert [r.tool for r in sort_rows(rows, "-p50")] == ["a", "c", "b"]


def fill(store, settings, tmp_path):
    settings.VAR_DIR = tmp_path / "var"
    for sid, results in (
        (
            "s1",
            [
                '{"ok": false, "error": "E after 5 ms"}',
                '{"ok": false, "error": "E after 9 ms"}',
                '{"ok": true}',
            ],
        ),
        ("s2", ['{"ok": true}']),
        ("s3", ['{"ok": false, "error": "other"}']),
    ):
        store.add_session(sid)
        for n, result in enumerate(results):
            store.add_message(
                sid,
                "tool",
                "",
                ts=1_000 + n,
                tool_name="t",
                tool_call_id=f"{sid}{n}",
                tool_result=result,
            )
    sync.sync_once()


@STORE_DB
def test_failed_calls_per_session_in_one_read(store, settings, tmp_path):
    fill(store, settings, tmp_path)
    with figures.reading() as side:
        assert calls.failed_by_session(side, ["s1", "s2", "s3", "nope"]) == {"s1": 2, "s3": 1}
        assert calls.failed_by_session(side, []) == {}


@STORE_DB
def test_a_tools_failures_group_by_what_failed_with_counts_and_times(store, settings, tmp_path):
    fill(store, settings, tmp_path)
    with figures.reading() as side:
        found = calls.error_groups(side, calls.CallFilter(tool="t"))
        assert [(g.what, g.count, g.first_ts, g.last_ts) for g in found.groups] == [
            ("E after <n> ms", 2, 1_000, 1_001),
            ("other", 1, 1_000, 1_000),
        ]
        assert found.scanned == 3 and not found.cut
        cut = calls.error_groups(side, calls.CallFilter(tool="t"), scan=2)
        assert cut.cut and cut.scanned == 2
        rows = calls.calls_in_group(side, calls.CallFilter(tool="t"), "E after <n> ms")
        assert sorted(r.session_id for r in rows) == ["s1", "s1"] and all(r.failed for r in rows)


@STORE_DB
def test_the_tools_page_refuses_an_unknown_sort(store, settings, tmp_path, staff_client):
    fill(store, settings, tmp_path)
    response = staff_client.get("/tools/?sort=colour")
    assert response.status_code == 400 and b"sort must be one of" in response.content
    assert staff_client.get("/tools/?sort=-p95").status_code == 200
