"""Every frames URL stays inside the frames root: odd ids, symlinks, fifos, escapes."""

from __future__ import annotations

import os

import pytest

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.frames_files import (
    HX,
    assert_refused,
    frame,
    request_url,
    text,
    write_request,
)

pytestmark = STORE_DB


# --- Confinement ----------------------------------------------------------------------


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
