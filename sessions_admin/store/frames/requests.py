"""The request files of a session: its ``activity-<requestId>.jsonl`` files.

Each is listed with its size, mtime and the timestamps of its first and last frames,
found by reading a window at each end of the file only (never the whole file).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from sessions_admin.store.frames.lines import first_ts
from sessions_admin.store.frames.paths import (
    FramesError,
    list_entries,
    open_regular,
    request_id_from_name,
    session_dir_str,
)

# --- Tunables ------------------------------------------------------------------------

#: Bytes read from each end of a file by :func:`list_requests` to find timestamps.
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024


# --- Data ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RequestFile:
    """One ``activity-<requestId>.jsonl`` file of a session."""

    request_id: str
    name: str
    size: int
    mtime: float  # epoch seconds
    first_ts_ms: int | None
    last_ts_ms: int | None
    #: What the request's own frames say of it, where they say it: the prompt of its
    #: first frame, the status and duration of its last (None: not held there).
    prompt: str | None = None
    status: str | None = None
    duration_ms: int | None = None


#: Characters of a request's prompt a listing keeps.
PROMPT_CHARS = 160


def _field(data: dict, *keys: str) -> object:
    """A frame's value under any of ``keys``, at its top or in its ``payload``."""
    for holder in (data, data.get("payload")):
        if isinstance(holder, dict):
            for key in keys:
                if holder.get(key) not in (None, ""):
                    return holder[key]
    return None


def summary_of(first: dict | None, last: dict | None) -> tuple[str | None, str | None, int | None]:
    """(prompt, status, duration ms) of a request from its first and last frames."""
    prompt = _field(first, "prompt", "input") if first else None
    status = _field(last, "status", "outcome") if last else None
    duration = _field(last, "durationMs", "duration_ms", "duration") if last else None
    return (
        " ".join(prompt.split())[:PROMPT_CHARS] if isinstance(prompt, str) else None,
        status[:40] if isinstance(status, str) else None,
        int(duration)
        if isinstance(duration, int | float)
        and not isinstance(duration, bool)
        and 0 <= duration < 2**53
        else None,
    )


# --- Listing -------------------------------------------------------------------------


def _frame_of_line(line: bytes) -> dict | None:
    try:
        data = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def _peek(path: str) -> tuple[int | None, int | None, dict | None, dict | None]:
    """Timestamps of the first and last complete lines, and those frames, reading only
    both ends.

    Reads at most HEAD_BYTES from the start and TAIL_BYTES from the end. If a line
    there has no timestamp (damaged, or no ts key) the nearest line inside the same
    window that has one is used; a line longer than the window gives None.
    """
    try:
        fd = open_regular(path)
    except (FramesError, OSError):
        return None, None, None, None
    with os.fdopen(fd, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None, None, None, None
        head = f.read(min(size, HEAD_BYTES))
        first = first_frame = None
        complete = head[: head.rfind(b"\n") + 1]  # drop the unterminated remainder
        for line in complete.split(b"\n"):
            frame = _frame_of_line(line) if line.strip() else None
            if frame is not None and (first := first_ts(frame)) is not None:
                first_frame = frame
                break
        start = max(0, size - TAIL_BYTES - 1)
        f.seek(start)
        window = f.read(size - start)
        end = window.rfind(b"\n")
        if end == -1:
            return first, None, first_frame, None
        window = window[:end]
        if start > 0:
            # We read one byte early: the window starts on a line start only if that byte
            # is a newline; otherwise its first line is partial and must go.
            cut = window.find(b"\n")
            if cut == -1:
                return first, None, first_frame, None
            window = window[cut + 1 :]
        last = last_frame = None
        for line in reversed(window.split(b"\n")):
            frame = _frame_of_line(line) if line.strip() else None
            if frame is not None and (last := first_ts(frame)) is not None:
                last_frame = frame
                break
        return first, last, first_frame, last_frame


def list_requests(root: Path, session_id: str) -> list[RequestFile]:
    """The session's ``activity-<requestId>.jsonl`` files, oldest first.

    A missing session directory gives ``[]``. Other files, symlinks and names whose id
    :func:`request_file` would refuse are ignored. Ordered by first frame timestamp,
    falling back to mtime for files without one, then by name.
    """
    directory = session_dir_str(root, session_id)
    entries = list_entries(directory)
    if not entries:
        return []
    found: list[RequestFile] = []
    for name, is_link, is_file, st in entries:
        if is_link or not is_file or st is None:
            continue
        request_id = request_id_from_name(name)
        if request_id is None:
            continue
        first, last, first_frame, last_frame = _peek(os.path.join(directory, name))
        found.append(
            RequestFile(
                request_id,
                name,
                st.st_size,
                st.st_mtime,
                first,
                last,
                *summary_of(first_frame, last_frame),
            )
        )

    def order(r: RequestFile) -> tuple[float, str]:
        return (r.first_ts_ms if r.first_ts_ms is not None else r.mtime * 1000.0, r.name)

    found.sort(key=order)
    return found
