"""sessions_admin.store.frames on disk: confinement, listing requests, orphan scan, removal."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from sessions_admin.store import frames as F
from sessions_admin.store.frames import FramesNotFound, FramesRefused
from tests.frames_files import jl, make_file

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


def test_a_symlinked_session_dir_pointing_outside_is_refused(root: Path, foreign_dir: Path) -> None:
    (root / "evil").symlink_to(foreign_dir)
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
    root: Path, foreign_dir: Path
) -> None:
    make_file(root, "s", "ok", jl({"ts": 1_700_000_000_000}))
    link = root / "s" / "activity-leak.jsonl"
    link.symlink_to(foreign_dir / "activity-secret.jsonl")
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


def test_the_orphan_scan_splits_directories_and_skips_symlinks(
    root: Path, foreign_dir: Path
) -> None:
    make_file(root, "known", "r", b"x" * 10)
    make_file(root, "orphan", "r1", b"y" * 100)
    make_file(root, "orphan", "r2", b"y" * 50)
    (root / "orphan" / "link").symlink_to(foreign_dir / "passwd")
    (root / "empty").mkdir()
    (root / "evil").symlink_to(foreign_dir)
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


def test_dir_usage_counts_regular_files_only(root: Path, foreign_dir: Path) -> None:
    make_file(root, "s", "a", b"1234")
    make_file(root, "s", "b", b"56")
    (root / "s" / "link").symlink_to(foreign_dir / "passwd")
    assert F.dir_usage(root, "s") == (6, 2)


@pytest.mark.parametrize("safe_rmtree", [True, False])
def test_remove_session_dir_removes_files_and_the_directory(
    root: Path, foreign_dir: Path, monkeypatch: pytest.MonkeyPatch, safe_rmtree: bool
) -> None:
    monkeypatch.setattr(shutil.rmtree, "avoids_symlink_attacks", safe_rmtree)
    make_file(root, "s", "a", b"1234")
    make_file(root, "s", "b", b"56")
    (root / "s" / "nested").mkdir()
    (root / "s" / "nested" / "c").write_bytes(b"789")
    (root / "s" / "link").symlink_to(foreign_dir)  # the link goes, its target stays
    removed = F.remove_session_dir(root, "s")
    assert removed == F.RemovedDir(bytes=9, files=3, others=(("symlink", 1),))
    assert not (root / "s").exists() and root.exists()
    assert (foreign_dir / "passwd").read_text() == "root:x:0:0\n"
    assert F.remove_session_dir(root, "s") == F.RemovedDir(0, 0, existed=False)  # missing
    (root / "empty").mkdir()
    assert F.remove_session_dir(root, "empty") == F.RemovedDir(0, 0, existed=True)
    assert not (root / "empty").exists()


def test_remove_session_dir_refuses_a_symlink_and_leaves_its_target(
    root: Path, foreign_dir: Path
) -> None:
    (root / "evil").symlink_to(foreign_dir)
    make_file(root, "real", "r", jl({"a": 1}))
    (root / "alias").symlink_to(root / "real")
    before = sorted(p.name for p in foreign_dir.iterdir())
    with pytest.raises(FramesRefused):
        F.remove_session_dir(root, "evil")
    with pytest.raises(FramesRefused):
        F.remove_session_dir(root, "alias")
    assert (root / "evil").is_symlink() and (root / "alias").is_symlink()
    assert sorted(p.name for p in foreign_dir.iterdir()) == before
    assert (root / "real" / "activity-r.jsonl").exists()
