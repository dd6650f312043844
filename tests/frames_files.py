"""Frame files as the runtime writes them, and readers of the frames pages' HTML.

Shared by the frames screens' test modules (the fixtures ``old`` and ``outside`` are in
``tests/conftest.py``).
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

from sessions_admin.ids import session_url
from sessions_admin.store import frames as F
from tests.storebuilder import BASE_MS

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


def assert_refused(response, why: str = "") -> None:
    assert response.status_code == 400, response.status_code
    body = text(response)
    assert "Refused" in body and "frames root" in body
    assert why in body
    assert "SECRET" not in body


def make_file(root: Path, session_id: str, request_id: str, data: bytes) -> Path:
    directory = root / session_id
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"activity-{request_id}.jsonl"
    path.write_bytes(data)
    return path


def jl(*objs: object) -> bytes:
    return b"".join(json.dumps(o).encode() + b"\n" for o in objs)


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
