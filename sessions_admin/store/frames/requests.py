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


#: A request file is read whole for its token counts only up to this size.
TOKENS_SCAN_BYTES = 4 * 1024 * 1024
_TOKEN_KEYS = (
    ("inputTokens", "input_tokens", "promptTokens", "prompt_tokens"),
    ("outputTokens", "output_tokens", "completionTokens", "completion_tokens"),
)


@dataclass(frozen=True, slots=True)
class Tokens:
    """A request's model tokens, summed over the frames that state them."""

    input: int = 0
    output: int = 0
    frames: int = 0  # frames that stated a count
    #: Why they were not counted (a file too large to read whole), or "".
    not_counted: str = ""


def _count(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53:
        return value
    return None


def tokens_of(frame: dict) -> tuple[int, int] | None:
    """(input, output) tokens a frame states, at its top, in its payload or its
    ``usage``; None when it states neither."""
    holders = [frame, frame.get("payload")]
    holders += [h.get("usage") for h in holders if isinstance(h, dict)]
    found = [0, 0]
    stated = False
    for holder in holders:
        if not isinstance(holder, dict):
            continue
        for n, keys in enumerate(_TOKEN_KEYS):
            for key in keys:
                if (count := _count(holder.get(key))) is not None:
                    found[n], stated = count, True
                    break
    return (found[0], found[1]) if stated else None


def request_tokens(path: str | Path) -> Tokens:
    """The tokens a request's frames state, summed; a file over ``TOKENS_SCAN_BYTES``
    is not read whole (the page says so) and counts nothing."""
    try:
        fd = open_regular(str(path))
    except (FramesError, OSError):
        return Tokens(not_counted="the file cannot be read")
    with os.fdopen(fd, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size > TOKENS_SCAN_BYTES:
            return Tokens(not_counted="the file is too large to read whole")
        data = f.read(size)
    total_in = total_out = stated = 0
    for line in data.split(b"\n"):
        frame = _frame_of_line(line) if line.strip() else None
        if frame is not None and (counts := tokens_of(frame)) is not None:
            total_in, total_out, stated = total_in + counts[0], total_out + counts[1], stated + 1
    return Tokens(total_in, total_out, stated)


def request_summary(path: str | Path) -> tuple[str | None, str | None, int | None]:
    """(prompt, status, duration ms) of one request file, from both its ends."""
    _, _, first, last = _peek(str(path))
    return summary_of(first, last)


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
