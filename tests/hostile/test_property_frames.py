"""Frame files of any shape, and odd names on disk: the frames screens still render.

Each generated case lays out one session's directory (files of any content,
empty ones, CRLF and NUL bytes, cut last lines, a directory or a FIFO named like
a frame file, names that are not UTF-8) and an orphan directory of the same
shape in the frames root, then reads the requests list, each request's pages
(first page, end, a byte offset, the live tail, a kind filter), the trace search
and the orphans page.
"""

from __future__ import annotations

import os
import shutil

from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.strategies import frame_files

ORPHAN_NAMES = st.sampled_from([b"orphan", b"orphan-\xff\xfe", b"caf\xc3\xa9", b"o" * 200])


def _lay_out(directory: bytes, files: dict[bytes, bytes | str]) -> None:
    os.makedirs(directory, exist_ok=True)
    for request_id, content in files.items():
        path = os.path.join(directory, b"activity-" + request_id + b".jsonl")
        if content == "dir":
            os.mkdir(path)
        elif content == "fifo":
            os.mkfifo(path)
        else:
            with open(path, "wb") as handle:
                handle.write(content)  # type: ignore[arg-type]


def _request_urls(session_id: str, files: dict[bytes, bytes | str]) -> list[str]:
    urls = []
    for raw in files:
        request_id = os.fsdecode(raw)
        base = f"frames/{request_id}"
        try:
            request_id.encode("utf-8")
        except UnicodeEncodeError:
            continue  # no URL can name it; the list leaves it out
        urls += [
            session_url(session_id, base),
            session_url(session_id, base, end=1),
            session_url(session_id, base, offset=3),
            session_url(session_id, base, kind="start"),
            session_url(session_id, base, tail=1, offset=0, size=1, mtime=1),
        ]
    return urls


@STORE_DB
@given(files=frame_files(), orphan=frame_files(), orphan_name=ORPHAN_NAMES)
def test_the_frames_screens_render_whatever_the_files_hold(
    store, admin_client, files, orphan, orphan_name
):
    admin_client.raise_request_exception = False
    session_id = "s1"
    if not store.count("sessions"):
        store.add_session(session_id)
    root = os.fsencode(store.frames_root)
    shutil.rmtree(root)
    _lay_out(os.path.join(root, session_id.encode()), files)
    _lay_out(os.path.join(root, orphan_name), orphan)
    urls = [
        session_url(session_id, "frames"),
        session_url(session_id, "frames", trace="t1"),
        "/frames/orphans/",
        *_request_urls(session_id, files),
    ]
    for url in urls:
        for headers in ({}, {"HX-Request": "true"}):
            response = admin_client.get(url, headers=headers)
            assert response.status_code < 500, url


@STORE_DB
@given(files=frame_files())
def test_wiping_a_session_removes_any_frames_directory_and_reports_it(store, admin_client, files):
    store.execute("DELETE FROM sessions")
    session_id = store.add_session("wipe-me")
    root = os.fsencode(store.frames_root)
    _lay_out(os.path.join(root, session_id.encode()), files)
    response = admin_client.post(
        session_url(session_id, "delete"), {"wipe_frames": "1"}, follow=True
    )
    assert response.status_code == 200
    assert not os.path.lexists(os.path.join(root, session_id.encode()))
    html = response.content.decode()
    assert "Deleted session wipe-me:" in html and "no frames directory" not in html
