"""Confined, bounded reading of activity-frame files.

The agent runtime writes one JSON object per line to
``<frames root>/<sessionId>/activity-<requestId>.jsonl``. The frame shape is not
documented, so any JSON object is accepted and well-known keys (timestamps, kind, trace
ids, name, duration) are picked out when present.

Threats and constraints this module is built around:

* **Ids come from URLs.** Session and request ids are validated as single path
  components, the resolved path must be strictly inside ``realpath(root)``, and symbolic
  links below the root are never followed (not even ones pointing back inside the root):
  the dashboard only ever reads or deletes what the runtime itself wrote there.
  The root itself may be a symlink (e.g. to another disk); it is resolved once.
* **Files can be huge (1 GB) and growing.** Nothing reads a whole file. Pages are read
  through a sliding buffer whose size is bounded by ``max_line_bytes`` plus one chunk;
  over-long lines are skipped by scanning. The runtime may be appending while we read:
  an unterminated last line is reported as *pending*, never as damage, and paging stops
  before it so a later poll picks it up once complete.
* **Lines can be damaged.** Every line becomes a :class:`FrameLine`; a damaged one
  carries a short ``error`` instead of raising.

Offsets, not line numbers, identify lines. A byte offset is cheap to seek to and stays
valid while the file grows; a line number is only known when counting from the start
of the file (see :func:`read_page`).

This module is plain Python (stdlib only) so it can be used and tested without Django.
Functions may raise :class:`OSError` for genuine I/O failures (permissions, disk errors);
policy failures raise :class:`FramesRefused`, missing request files :class:`FramesNotFound`.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import math
import os
import re
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_MAX_LINE_BYTES",
    "DEFAULT_MAX_PAGE_BYTES",
    "DEFAULT_SCAN_BUDGET",
    "MAX_LIMIT",
    "FrameDir",
    "FrameLine",
    "FramePage",
    "FramesError",
    "FramesNotFound",
    "FramesRefused",
    "OrphanReport",
    "PendingLine",
    "RemovedDir",
    "RequestFile",
    "SkippedEntry",
    "TailResult",
    "dir_usage",
    "list_requests",
    "read_page",
    "remove_session_dir",
    "request_file",
    "scan_frame_dirs",
    "session_dir",
    "tail",
]

# --- Tunables ------------------------------------------------------------------------

DEFAULT_LIMIT = 200
#: Hard cap on frames per page whatever the caller asks for (limits come from URLs).
MAX_LIMIT = 1000
DEFAULT_MAX_LINE_BYTES = 256 * 1024
#: Bytes a single call may scan past non-matching lines before giving up ("continue").
DEFAULT_SCAN_BUDGET = 8 * 1024 * 1024
#: A page also ends once its frames add up to this many line bytes, so 200 frames of
#: 256 KB each cannot turn into a 50 MB page (plus parsed dicts) in memory.
DEFAULT_MAX_PAGE_BYTES = 2 * 1024 * 1024

#: Bytes read from each end of a file by :func:`list_requests` to find timestamps.
HEAD_BYTES = 64 * 1024
TAIL_BYTES = 64 * 1024
#: Read sizes grow from the first to the last value: a first page of small lines needs
#: only a few KB, a filtered scan benefits from large reads.
_FIRST_CHUNK = 64 * 1024
_MAX_CHUNK = 1024 * 1024
RAW_PREVIEW_BYTES = 8 * 1024
PRETTY_MAX_CHARS = 32 * 1024
SUMMARY_MAX_CHARS = 160
PENDING_PREVIEW_BYTES = 512
#: Names per call to the ``known_session_ids`` callback (keeps SQL ``IN (...)`` small).
KNOWN_IDS_BATCH = 500

_REQUEST_PREFIX = "activity-"
_REQUEST_SUFFIX = ".jsonl"
_NAME_MAX_BYTES = 255  # NAME_MAX on every filesystem we care about

_O_BINARY = getattr(os, "O_BINARY", 0)
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
# O_NONBLOCK: opening a FIFO planted in place of a frame file must not hang a worker.
_O_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_O_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


# --- Errors --------------------------------------------------------------------------


class FramesError(Exception):
    """Base class; ``str(exc)`` is a message fit to show to support staff."""


class FramesRefused(FramesError):
    """The request was refused by policy (bad id, escape attempt, symlink, wrong type)."""


class FramesNotFound(FramesError):
    """The requested activity-frame file does not exist (any more)."""


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


@dataclass(frozen=True, slots=True)
class FrameLine:
    """One line of a frame file, parsed or explaining why it could not be.

    ``offset`` (byte offset of the line start) is the stable identity of a line.
    ``number`` is the 1-based line number when known (see :func:`read_page`), else None.
    ``length`` counts the line's bytes without its terminating ``\\n``.
    """

    offset: int
    length: int
    number: int | None
    data: dict | None
    error: str | None  # None, or a short reason such as "not valid JSON"
    raw: str  # decoded with errors="replace", at most RAW_PREVIEW_BYTES of the line
    truncated: bool  # raw is a prefix of the line
    ts_ms: int | None = None
    kind: str | None = None
    trace_id: str | None = None
    span_id: str | None = None
    parent_span_id: str | None = None
    name: str | None = None
    duration_ms: float | None = None
    summary: str = ""
    pretty: str = ""
    pretty_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def end_offset(self) -> int:
        """Offset of the next line (just past this line's ``\\n``)."""
        return self.offset + self.length + 1


@dataclass(frozen=True, slots=True)
class PendingLine:
    """An unterminated last line: probably still being written by the runtime."""

    offset: int
    length: int
    preview: str


@dataclass(frozen=True, slots=True)
class FramePage:
    """One page of frames.

    ``offset`` is where reading actually started (after realignment to a line start);
    ``end_offset`` is just past the last line consumed, i.e. where to resume (equal to
    ``pending.offset`` when a pending line stopped the page); ``next_offset`` is the same
    value while more complete lines remain and None at EOF. ``scanned_to`` equals
    ``end_offset`` and exists so a filtered UI can say "no match up to byte N, continue".
    """

    frames: list[FrameLine]
    offset: int
    next_offset: int | None
    end_offset: int
    size: int
    mtime: float
    pending: PendingLine | None
    eof: bool
    realigned: bool  # the requested offset was not a line start and was moved forward
    scanned_to: int
    scanned_bytes: int
    stop_reason: str  # "limit" | "page_bytes" | "scan_budget" | "eof" | "past_end"
    next_line_number: int | None
    filtered: bool


@dataclass(frozen=True, slots=True)
class TailResult:
    """Result of one live-tail poll; resume from ``page.end_offset``."""

    page: FramePage
    changed: bool  # size or mtime differ from what the caller last saw
    shrunk: bool  # the file is now shorter than the offset: truncated or replaced
    size: int
    mtime: float


@dataclass(frozen=True, slots=True)
class FrameDir:
    """A directory directly under the frames root, named after a session id."""

    session_id: str
    bytes: int
    files: int
    mtime: float  # latest of the directory's and its files' mtimes


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    name: str
    reason: str  # e.g. "skipped: symlink"


@dataclass(slots=True)
class OrphanReport:
    """Frame directories split by whether a session row exists for them."""

    root: Path
    root_exists: bool
    orphans: list[FrameDir] = field(default_factory=list)
    known: list[FrameDir] = field(default_factory=list)
    skipped: list[SkippedEntry] = field(default_factory=list)
    total_bytes: int = 0
    orphan_bytes: int = 0


@dataclass(frozen=True, slots=True)
class RemovedDir:
    """What :func:`remove_session_dir` removed; ``existed`` tells a missing directory
    (nothing to do) from an empty one (removed, 0 bytes)."""

    bytes: int
    files: int
    existed: bool = True


# --- Confinement ---------------------------------------------------------------------


def _id_problem(value: object, what: str) -> str | None:
    """Why ``value`` is not acceptable as a single path component, or None if it is."""
    if not isinstance(value, str):
        return f"The {what} must be text."
    if value == "":
        return f"The {what} is empty."
    if value in (".", ".."):
        return f"The {what} may not be '.' or '..'."
    if "\x00" in value:
        return f"The {what} contains a NUL character."
    if "/" in value or "\\" in value:
        return f"The {what} may not contain '/' or '\\'."
    if os.path.isabs(value) or os.path.splitdrive(value)[0]:
        return f"The {what} may not be an absolute path."
    if os.name == "nt" and ":" in value:  # drive-relative paths and NTFS streams
        return f"The {what} may not contain ':'."
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:
        return f"The {what} is not valid text."
    if len(encoded) > _NAME_MAX_BYTES:
        return f"The {what} is too long."
    return None


def _check_id(value: object, what: str) -> str:
    problem = _id_problem(value, what)
    if problem is not None:
        raise FramesRefused(problem)
    assert isinstance(value, str)
    return value


def _lstat_or_none(path: str) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _strictly_inside(real_root: str, real_path: str) -> bool:
    try:
        return real_path != real_root and os.path.commonpath([real_root, real_path]) == real_root
    except ValueError:  # different drives, or mixing absolute and relative
        return False


def _session_dir_str(root: Path | str, session_id: str) -> str:
    _check_id(session_id, "session id")
    real_root = os.path.realpath(os.fspath(root))
    candidate = os.path.join(real_root, session_id)
    st = _lstat_or_none(candidate)
    if st is not None:
        if stat.S_ISLNK(st.st_mode):
            raise FramesRefused(
                "The session's frame directory is a symbolic link; links are never followed."
            )
        if not stat.S_ISDIR(st.st_mode):
            raise FramesRefused("The session's frame path exists but is not a directory.")
    # The id checks already rule out escapes; this is the belt to their braces.
    if not _strictly_inside(real_root, os.path.realpath(candidate)):
        raise FramesRefused("The session's frame directory is outside the frames root.")
    return candidate


def session_dir(root: Path, session_id: str) -> Path:
    """Path of a session's frame directory under ``realpath(root)``.

    The directory need not exist (callers treat that as "no frames"). Raises
    :class:`FramesRefused` for ids that are not a single plain path component, for a
    directory that is a symlink (wherever it points) or not a directory, or for a path
    that would resolve outside the root.
    """
    return Path(_session_dir_str(root, session_id))


def _request_name(request_id: str) -> str:
    return f"{_REQUEST_PREFIX}{request_id}{_REQUEST_SUFFIX}"


def _request_id_from_name(name: str) -> str | None:
    """The request id encoded in a file name, or None if the name is not one of ours."""
    if not (name.startswith(_REQUEST_PREFIX) and name.endswith(_REQUEST_SUFFIX)):
        return None
    request_id = name[len(_REQUEST_PREFIX) : -len(_REQUEST_SUFFIX)]
    # Only list what request_file() would accept, so every listed id can be opened.
    if len(name) < len(_REQUEST_PREFIX) + len(_REQUEST_SUFFIX) or _id_problem(
        request_id, "request id"
    ):
        return None
    return request_id


def request_file(root: Path, session_id: str, request_id: str) -> Path:
    """Path of ``<root>/<session_id>/activity-<request_id>.jsonl``, checked.

    Raises :class:`FramesRefused` as :func:`session_dir` does, and when the file is a
    symlink or not a regular file; :class:`FramesNotFound` when it does not exist.
    """
    directory = _session_dir_str(root, session_id)
    _check_id(request_id, "request id")
    name = _request_name(request_id)
    if len(name.encode("utf-8")) > _NAME_MAX_BYTES:
        raise FramesRefused("The request id is too long.")
    path = os.path.join(directory, name)
    st = _lstat_or_none(path)
    if st is None:
        raise FramesNotFound("No activity-frame file for this request.")
    if stat.S_ISLNK(st.st_mode):
        raise FramesRefused("The activity-frame file is a symbolic link; links are never followed.")
    if not stat.S_ISREG(st.st_mode):
        raise FramesRefused("The activity-frame path is not a regular file.")
    if not _strictly_inside(os.path.realpath(os.fspath(root)), os.path.realpath(path)):
        raise FramesRefused("The activity-frame file is outside the frames root.")
    return Path(path)


def _open_regular(path: Path | str) -> int:
    """Open a regular file for reading without following a symlink in the last component.

    This closes the gap between :func:`request_file`'s lstat check and the open: if the
    file was swapped for a symlink (or a FIFO) in between, the open fails instead.
    """
    p = os.fspath(path)
    if not _O_NOFOLLOW:  # no kernel support (Windows): fall back to a racy lstat check
        st = _lstat_or_none(p)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise FramesRefused("The activity-frame file is a symbolic link.")
    flags = os.O_RDONLY | _O_BINARY | _O_CLOEXEC | _O_NOFOLLOW | _O_NONBLOCK
    try:
        fd = os.open(p, flags)
    except FileNotFoundError as exc:
        raise FramesNotFound("The activity-frame file no longer exists.") from exc
    except OSError as exc:
        # ELOOP is Linux's answer to O_NOFOLLOW on a symlink, EMLINK FreeBSD's.
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise FramesRefused("The activity-frame file is a symbolic link.") from exc
        raise
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FramesRefused("The activity-frame path is not a regular file.")
    except BaseException:
        os.close(fd)
        raise
    return fd


# --- Frame interpretation ------------------------------------------------------------

_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.UTC)
_ONE_MS = _dt.timedelta(milliseconds=1)
# Limits of datetime, so any ts_ms we return can be formatted by the UI.
_MIN_TS_MS = -62_135_596_800_000
_MAX_TS_MS = 253_402_300_799_999
_NUMERIC_RE = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$", re.ASCII)

_TS_KEYS = ("ts", "timestamp", "time")
_KIND_KEYS = ("kind", "type", "event")
_TRACE_KEYS = ("traceId", "trace_id")
_SPAN_KEYS = ("spanId", "span_id")
_PARENT_KEYS = ("parentSpanId", "parent_span_id")
_DURATION_KEYS = ("durationMs", "duration_ms", "duration")
_WELL_KNOWN = frozenset(
    _TS_KEYS + _KIND_KEYS + _TRACE_KEYS + _SPAN_KEYS + _PARENT_KEYS + _DURATION_KEYS + ("name",)
)
# Keys that usually say what a frame is about, in the order they make a good summary.
_SUMMARY_TEXT_KEYS = ("message", "msg", "text", "content")
_SUMMARY_LABEL_KEYS = ("tool", "toolName", "tool_name", "status", "error")


def _number_to_ms(value: float) -> int | None:
    """Interpret an epoch number by magnitude: s (< 1e11), ms, µs (>= 1e14), ns (>= 1e17).

    1e11 s is the year 5138 and 1e11 ms is 1973, so the ranges do not overlap for any
    real timestamp; µs and ns show up in OpenTelemetry-style frames.
    """
    if isinstance(value, float) and not math.isfinite(value):
        return None
    magnitude = abs(value)
    if isinstance(value, int):
        if magnitude < 100_000_000_000:
            ms = value * 1000
        elif magnitude < 100_000_000_000_000:
            ms = value
        elif magnitude < 100_000_000_000_000_000:
            ms = value // 1000
        else:
            ms = value // 1_000_000
    else:
        if magnitude < 1e11:
            scaled = value * 1000
        elif magnitude < 1e14:
            scaled = value
        elif magnitude < 1e17:
            scaled = value / 1e3
        else:
            scaled = value / 1e6
        ms = round(scaled)
    return ms if _MIN_TS_MS <= ms <= _MAX_TS_MS else None


def _parse_ts(value: object) -> int | None:
    """Epoch milliseconds from a number or a string (numeric or ISO 8601), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        return _number_to_ms(value)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not text or len(text) > 64:
        return None
    if _NUMERIC_RE.match(text):
        try:
            number = int(text) if text.lstrip("+-").isdigit() else float(text)
        except ValueError:
            return None
        return _number_to_ms(number)
    try:
        moment = _dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is None:  # a bare ISO time from a server is taken as UTC
        moment = moment.replace(tzinfo=_dt.UTC)
    try:
        ms = (moment - _EPOCH) // _ONE_MS
    except OverflowError:
        return None
    return ms if _MIN_TS_MS <= ms <= _MAX_TS_MS else None


def _first_ts(data: dict) -> int | None:
    for key in _TS_KEYS:
        if key in data:
            ms = _parse_ts(data[key])
            if ms is not None:
                return ms
    return None


def _first_str(data: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _first_id(data: dict, keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int):
            return str(value)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def _first_number(data: dict, keys: tuple[str, ...]) -> float | None:
    """First finite number; ``duration`` has no documented unit and is taken as ms."""
    for key in keys:
        value = data.get(key)
        if isinstance(value, bool):
            continue
        if isinstance(value, int | float) and math.isfinite(value):
            return float(value)
    return None


def _scalar_text(value: object, cap: int = 80) -> str | None:
    if value is None:
        text = "null"
    elif isinstance(value, bool):
        text = "true" if value else "false"
    elif isinstance(value, int | float | str):
        text = str(value)
    else:
        return None
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _one_line(text: str, cap: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= cap else text[: cap - 1] + "…"


def _summary(data: dict, name: str | None, kind: str | None) -> str:
    """Name, then message-like text and tool/status/error, then the first scalar keys."""
    parts: list[str] = []
    used = set(_WELL_KNOWN)
    if name:
        parts.append(_one_line(name, 80))
    for key in _SUMMARY_TEXT_KEYS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            parts.append(_one_line(value, 120))
            used.add(key)
            break
    for key in _SUMMARY_LABEL_KEYS:
        if key not in data:
            continue
        value = data[key]
        if isinstance(value, dict) and isinstance(value.get("message"), str):
            value = value["message"]  # {"error": {"message": ...}} is common
        text = _scalar_text(value)
        if text is not None and text != "":
            parts.append(f"{key}={text}")
            used.add(key)
    for key, value in data.items():
        if len(parts) >= 4:
            break
        if key in used:
            continue
        text = _scalar_text(value, 40)
        if text is not None:
            parts.append(f"{key}={text}")
    if not parts:
        if kind:
            return _one_line(kind, SUMMARY_MAX_CHARS)
        return f"{{{len(data)} keys}}" if data else "{}"
    return _one_line(" · ".join(parts), SUMMARY_MAX_CHARS)


def _pretty(data: dict) -> tuple[str, bool]:
    try:
        text = json.dumps(data, indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        # The indenting encoder is recursive Python; very deep frames fall back to compact.
        try:
            text = json.dumps(data, ensure_ascii=False)
        except (ValueError, RecursionError):
            return "(too deeply nested to display)", True
    if len(text) > PRETTY_MAX_CHARS:
        return text[:PRETTY_MAX_CHARS] + "\n…", True
    return text, False


def _decode_preview(content: bytes, limit: int = RAW_PREVIEW_BYTES) -> tuple[str, bool]:
    return content[:limit].decode("utf-8", "replace"), len(content) > limit


def _frame(content: bytes, offset: int, length: int, number: int | None) -> FrameLine:
    """Interpret one complete line (without its ``\\n``; ``length`` is the full length)."""
    if content.endswith(b"\r"):  # tolerate CRLF writers
        content = content[:-1]
    raw, truncated = _decode_preview(content)

    def damaged(reason: str) -> FrameLine:
        return FrameLine(
            offset=offset,
            length=length,
            number=number,
            data=None,
            error=reason,
            raw=raw,
            truncated=truncated,
            summary=reason,
        )

    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError:
        return damaged("not valid UTF-8")
    text = text.removeprefix("\ufeff")  # a BOM from an editor or a Windows tool
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):  # RecursionError: pathologically nested JSON
        return damaged("not valid JSON")
    if not isinstance(data, dict):
        return damaged("not a JSON object")
    name = data.get("name") if isinstance(data.get("name"), str) else None
    kind = _first_str(data, _KIND_KEYS)
    pretty, pretty_truncated = _pretty(data)
    return FrameLine(
        offset=offset,
        length=length,
        number=number,
        data=data,
        error=None,
        raw=raw,
        truncated=truncated,
        ts_ms=_first_ts(data),
        kind=kind,
        trace_id=_first_id(data, _TRACE_KEYS),
        span_id=_first_id(data, _SPAN_KEYS),
        parent_span_id=_first_id(data, _PARENT_KEYS),
        name=name,
        duration_ms=_first_number(data, _DURATION_KEYS),
        summary=_summary(data, name, kind),
        pretty=pretty,
        pretty_truncated=pretty_truncated,
    )


def _too_long(head: bytes, offset: int, length: int, number: int | None) -> FrameLine:
    raw, _ = _decode_preview(head)
    return FrameLine(
        offset=offset,
        length=length,
        number=number,
        data=None,
        error="line too long",
        raw=raw,
        truncated=True,
        summary=f"line too long ({length:,} bytes)",
    )


# --- Filters -------------------------------------------------------------------------

# Kind values made of these characters appear verbatim in the raw JSON (no writer escapes
# them), so a cheap substring test on bytes can rule a line out before parsing it.
_PLAIN_KIND_RE = re.compile(r"^[A-Za-z0-9._:\- ]+$")


class _Filter:
    """``kind``: case-insensitive equality with the frame's kind; ``q``: case-insensitive
    substring of the raw line bytes (JSON escapes such as ``\\u00e9`` are not decoded)."""

    def __init__(self, kind: str | None, q: str | None) -> None:
        self.kind = kind.strip().casefold() if kind and kind.strip() else None
        self.kind_bytes = (
            self.kind.encode("ascii") if self.kind and _PLAIN_KIND_RE.match(self.kind) else None
        )
        if q is not None and not q.strip():
            q = None  # an empty search box means "no search", not "match spaces"
        self.q = q.casefold() if q else None
        self.q_ascii: bytes | None = None
        if q and q.isascii():
            self.q_ascii = q.lower().encode("ascii")

    @property
    def active(self) -> bool:
        return self.kind is not None or self.q is not None

    @property
    def needle(self) -> bytes | None:
        """Lowercase bytes every matching line contains, for skipping whole blocks at once."""
        return self.q_ascii or self.kind_bytes

    def raw_ok(self, content: bytes) -> bool:
        """Cheap test on the raw bytes; False means the line certainly does not match."""
        lowered: bytes | None = None
        if self.q is not None:
            if self.q_ascii is not None:
                lowered = content.lower()  # ASCII-only lowering, matches an ASCII needle
                if self.q_ascii not in lowered:
                    return False
            elif self.q not in content.decode("utf-8", "replace").casefold():
                return False
        if self.kind_bytes is not None:
            if lowered is None:
                lowered = content.lower()
            if self.kind_bytes not in lowered:
                return False
        return True

    def too_long_ok(self, head: bytes) -> bool:
        """A too-long line has no parsed kind; it can only match ``q``, on its head."""
        if not self.active:
            return True
        return self.kind is None and self.raw_ok(head)

    def frame_ok(self, frame: FrameLine) -> bool:
        if self.kind is None:
            return True
        return frame.kind is not None and frame.kind.casefold() == self.kind


# --- Reading -------------------------------------------------------------------------


class _Reader:
    """A sliding window over ``[start, size)`` of an open file.

    ``buf[i:end]`` is unconsumed data starting at file offset ``base + i``. The buffer is
    reused: consumed bytes are dropped only when refilling (so consuming a line is O(1),
    not a memmove) and chunks are read into it in place (no allocation per chunk). Its
    capacity only grows to the longest stretch it must hold: max_line_bytes + one chunk.
    """

    def __init__(self, f: BinaryIO, start: int, size: int) -> None:
        self.f = f
        self.size = size
        self.base = start
        self.buf = bytearray(_FIRST_CHUNK)
        self.i = 0
        self.end = 0
        self.chunk = _FIRST_CHUNK
        f.seek(start)

    @property
    def pos(self) -> int:
        return self.base + self.i

    @property
    def read_to(self) -> int:
        return self.base + self.end

    def take(self, a: int, b: int) -> bytes:
        return bytes(self.buf[a : min(b, self.end)])

    def find_nl(self, start: int) -> int:
        return self.buf.find(b"\n", start, self.end)

    def fill(self) -> bool:
        """Append the next chunk (never past ``size``); False when nothing is left."""
        if self.i:
            rest = self.end - self.i
            self.buf[:rest] = self.buf[self.i : self.end]  # same length: a memmove
            self.base += self.i
            self.i, self.end = 0, rest
        want = min(self.chunk, self.size - self.read_to)
        if want <= 0:
            return False
        if len(self.buf) < self.end + want:
            self.buf.extend(bytes(max(self.end + want, 2 * len(self.buf)) - len(self.buf)))
        with memoryview(self.buf) as view, view[self.end : self.end + want] as target:
            got = self.f.readinto(target)
        if not got:  # the file shrank under us; treat what we have as the end
            self.size = self.read_to
            return False
        self.end += got
        self.chunk = min(self.chunk * 2, _MAX_CHUNK)
        return True

    def discard_all(self) -> None:
        self.base = self.read_to
        self.i = self.end = 0

    def skip_past_newline(self) -> int | None:
        """Drop data up to and including the next ``\\n``; return the newline's offset.

        Returns None (with everything up to ``size`` dropped) if no newline remains.
        Memory stays at one chunk however long the skipped stretch is.
        """
        while True:
            nl = self.find_nl(self.i)
            if nl != -1:
                self.i = nl + 1
                return self.base + nl
            self.discard_all()
            if not self.fill():
                return None


def _byte_before(f: BinaryIO, offset: int) -> bytes:
    f.seek(offset - 1)
    return f.read(1)


def read_page(
    path: Path,
    offset: int = 0,
    limit: int = DEFAULT_LIMIT,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    kind: str | None = None,
    q: str | None = None,
    scan_budget: int = DEFAULT_SCAN_BUDGET,
    max_page_bytes: int = DEFAULT_MAX_PAGE_BYTES,
    first_line_number: int | None = None,
) -> FramePage:
    """Read up to ``limit`` frames starting at byte ``offset`` of a frame file.

    Memory is bounded by ``max_line_bytes`` plus one read chunk (1 MB) plus the page
    itself, whatever the file size. Reading stops at the file's size when it was opened,
    so a concurrently growing file gives a consistent page.

    Offsets: a negative offset is treated as 0. If ``offset`` is not a line start (the
    byte before it is not ``\\n``), reading skips forward to the next line start and
    ``realigned`` is set, so a forged or stale offset never shows half a line. An offset
    past the end gives an empty page with ``stop_reason == "past_end"``.

    Line numbers: counting lines from an arbitrary offset would mean reading everything
    before it, so ``number`` is only known when reading starts at offset 0, or when the
    caller passes ``first_line_number`` (normally the previous page's
    ``next_line_number``; it is a display hint, the offset is the identity). After a
    realignment numbers are None.

    Lines: blank lines are skipped (they still count for numbering). A line longer than
    ``max_line_bytes`` is not loaded: its first bytes are kept as a preview, the rest is
    skipped by scanning, and it is reported with ``error == "line too long"`` and its
    full length. An unterminated last line is ``pending`` (not an error) and
    ``end_offset`` stops before it so a later call picks it up once complete.

    Filters: ``kind`` (case-insensitive equality with the frame's kind) and ``q``
    (case-insensitive substring of the raw line as written: ``\\u00e9``-style escapes are
    not decoded, which is fine for the runtime's JSON.stringify output). Unmatched stretches
    are skipped a buffer at a time, not line by line. A too-long line can only match ``q``,
    within its first ``max_line_bytes``. A page ends at ``limit`` frames, at
    ``max_page_bytes`` of returned lines, or after ``scan_budget`` bytes were scanned
    (``stop_reason == "scan_budget"``; continue from ``next_offset``/``scanned_to``).
    ``limit`` is clamped to ``1..MAX_LIMIT``.
    """
    offset = max(0, int(offset))
    limit = max(1, min(int(limit), MAX_LIMIT))
    max_line_bytes = max(1, int(max_line_bytes))
    scan_budget = max(1, int(scan_budget))
    max_page_bytes = max(1, int(max_page_bytes))
    flt = _Filter(kind, q)

    fd = _open_regular(path)
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(f.fileno())
        size, mtime = st.st_size, st.st_mtime
        if offset > size:
            return FramePage(
                frames=[],
                offset=offset,
                next_offset=None,
                end_offset=size,
                size=size,
                mtime=mtime,
                pending=None,
                eof=True,
                realigned=False,
                scanned_to=size,
                scanned_bytes=0,
                stop_reason="past_end",
                next_line_number=None,
                filtered=flt.active,
            )

        realigned = offset > 0 and _byte_before(f, offset) != b"\n"
        rd = _Reader(f, offset, size)
        number: int | None = None
        if offset == 0:
            number = 1
        elif not realigned and first_line_number is not None and first_line_number >= 1:
            number = int(first_line_number)
        if realigned:
            # Possibly inside the unterminated last line: then nothing is complete yet, and
            # resuming from the end will skip the rest of that line once it is finished.
            rd.skip_past_newline()
        start = rd.pos

        frames: list[FrameLine] = []
        pending: PendingLine | None = None
        page_bytes = 0
        stop_reason = "eof"
        search_from = rd.i  # where the newline search resumes, to avoid rescanning
        needle = flt.needle
        checked_to = -1  # file offset up to which the needle was already looked for
        block: bytearray | None = None  # lowered copy of buffered lines, from block_off
        block_off = 0

        while True:
            if len(frames) >= limit:
                stop_reason = "limit"
                break
            if page_bytes >= max_page_bytes:
                stop_reason = "page_bytes"
                break
            if rd.pos - start >= scan_budget:
                stop_reason = "scan_budget"
                break
            if needle is not None and rd.pos >= checked_to:
                # Filtered scan: look for the needle across all buffered complete lines
                # (within the budget) at once and skip every line before the next hit,
                # instead of testing lines one by one. A miss in the block is a miss on each
                # line. The lowered block is kept until consumed, so frequent hits cost no
                # more than one pass over it.
                if block is None or rd.pos >= block_off + len(block):
                    stop = min(rd.end, rd.i + scan_budget - (rd.pos - start))
                    last_nl = rd.buf.rfind(b"\n", rd.i, stop)
                    block = rd.buf[rd.i : last_nl + 1].lower() if last_nl != -1 else None
                    block_off = rd.pos
                if block is not None:
                    rel = rd.pos - block_off
                    hit = block.find(needle, rel)
                    if hit == -1:
                        skip_to = len(block)
                    else:
                        skip_to = max(rel, block.rfind(b"\n", rel, hit) + 1)
                        hit_end = block.find(b"\n", hit)
                        checked_to = block_off + (hit_end if hit_end != -1 else len(block)) + 1
                    if skip_to > rel:
                        if number is not None:
                            number += block.count(b"\n", rel, skip_to)
                        rd.i += skip_to - rel
                        search_from = rd.i
                        continue
            nl = rd.find_nl(max(search_from, rd.i))
            if nl == -1:
                line_start = rd.pos
                if rd.end - rd.i > max_line_bytes:
                    head = rd.take(rd.i, rd.i + max_line_bytes)
                    end = rd.skip_past_newline()
                    if end is None:
                        pending = PendingLine(
                            line_start,
                            rd.size - line_start,
                            _decode_preview(head, PENDING_PREVIEW_BYTES)[0],
                        )
                        break
                    length = end - line_start
                    if flt.too_long_ok(head):
                        frames.append(_too_long(head, line_start, length, number))
                        page_bytes += min(length, max_line_bytes)
                    number = None if number is None else number + 1
                    search_from = rd.i
                    continue
                search_from = rd.end - rd.i  # relative: fill() may shift the buffer
                if not rd.fill():
                    if rd.end > rd.i:
                        pending = PendingLine(
                            rd.pos,
                            rd.end - rd.i,
                            _decode_preview(
                                rd.take(rd.i, rd.i + PENDING_PREVIEW_BYTES),
                                PENDING_PREVIEW_BYTES,
                            )[0],
                        )
                    break
                search_from += rd.i
                continue

            line_start = rd.pos
            length = nl - rd.i
            if length > max_line_bytes:
                head = rd.take(rd.i, rd.i + max_line_bytes)
                rd.i = nl + 1
                if flt.too_long_ok(head):
                    frames.append(_too_long(head, line_start, length, number))
                    page_bytes += max_line_bytes
            else:
                content = rd.take(rd.i, nl)
                rd.i = nl + 1
                if content.strip() and (not flt.active or flt.raw_ok(content)):
                    frame = _frame(content, line_start, length, number)
                    if flt.frame_ok(frame):
                        frames.append(frame)
                        page_bytes += length
            number = None if number is None else number + 1
            search_from = rd.i

        # Stop before a pending line so the next call re-reads it whole once complete.
        end_offset = pending.offset if pending is not None else rd.pos
        if stop_reason != "eof" and pending is None:
            # Stopped early: we are still at EOF if nothing but an unterminated tail remains
            # and it is already in the buffer (we do not read further to find out).
            if rd.read_to >= rd.size and rd.find_nl(rd.i) == -1:
                if rd.end > rd.i:
                    tail_bytes = rd.take(rd.i, rd.i + PENDING_PREVIEW_BYTES)
                    pending = PendingLine(
                        rd.pos,
                        rd.size - rd.pos,
                        _decode_preview(tail_bytes, PENDING_PREVIEW_BYTES)[0],
                    )
                eof = True
            else:
                eof = False
        else:
            eof = True
        return FramePage(
            frames=frames,
            offset=start,
            next_offset=None if eof else end_offset,
            end_offset=end_offset,
            size=size,
            mtime=mtime,
            pending=pending,
            eof=eof,
            realigned=realigned,
            scanned_to=end_offset,
            scanned_bytes=end_offset - offset,
            stop_reason=stop_reason,
            next_line_number=number,
            filtered=flt.active,
        )


def tail(
    path: Path,
    offset: int,
    *,
    last_size: int | None = None,
    last_mtime: float | None = None,
    limit: int = DEFAULT_LIMIT,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    kind: str | None = None,
    q: str | None = None,
    first_line_number: int | None = None,
) -> TailResult:
    """Frames appended since ``offset``: one poll of a live tail.

    Same reading rules as :func:`read_page`. Poll again from ``result.page.end_offset``
    passing the returned ``size``/``mtime`` as ``last_size``/``last_mtime``; ``changed``
    is True when they differ (or were not given). ``shrunk`` means the file is shorter
    than ``offset`` (truncated or replaced): the caller should restart from 0.
    """
    page = read_page(
        path,
        offset,
        limit,
        max_line_bytes,
        kind=kind,
        q=q,
        first_line_number=first_line_number,
    )
    changed = last_size is None or last_mtime is None
    changed = changed or page.size != last_size or page.mtime != last_mtime
    return TailResult(
        page=page,
        changed=changed,
        shrunk=max(0, offset) > page.size,
        size=page.size,
        mtime=page.mtime,
    )


# --- Listing -------------------------------------------------------------------------


def _ts_of_line(line: bytes) -> int | None:
    try:
        data = json.loads(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return None
    return _first_ts(data) if isinstance(data, dict) else None


def _peek_ts(path: str) -> tuple[int | None, int | None]:
    """Timestamps of the first and last complete lines, reading only both ends.

    Reads at most HEAD_BYTES from the start and TAIL_BYTES from the end. If a line
    there has no timestamp (damaged, or no ts key) the nearest line inside the same
    window that has one is used; a line longer than the window gives None.
    """
    try:
        fd = _open_regular(path)
    except (FramesError, OSError):
        return None, None
    with os.fdopen(fd, "rb", buffering=0) as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None, None
        head = f.read(min(size, HEAD_BYTES))
        first = None
        complete = head[: head.rfind(b"\n") + 1]  # drop the unterminated remainder
        for line in complete.split(b"\n"):
            if line.strip() and (first := _ts_of_line(line)) is not None:
                break
        start = max(0, size - TAIL_BYTES - 1)
        f.seek(start)
        window = f.read(size - start)
        end = window.rfind(b"\n")
        if end == -1:
            return first, None
        window = window[:end]
        if start > 0:
            # We read one byte early: the window starts on a line start only if that byte
            # is a newline; otherwise its first line is partial and must go.
            cut = window.find(b"\n")
            if cut == -1:
                return first, None
            window = window[cut + 1 :]
        last = None
        for line in reversed(window.split(b"\n")):
            if line.strip() and (last := _ts_of_line(line)) is not None:
                break
        return first, last


def _open_dir_nofollow(path: str) -> int | None:
    """fd of a directory opened without following a final symlink; None if missing."""
    try:
        return os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        st = _lstat_or_none(path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise FramesRefused("The session's frame directory is a symbolic link.") from None
        if st is not None:
            raise FramesRefused("The session's frame path is not a directory.") from None
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise FramesRefused("The session's frame directory is a symbolic link.") from exc
        raise


def _list_entries(path: str) -> list[tuple[str, bool, bool, os.stat_result | None]] | None:
    """(name, is_symlink, is_regular_file, lstat) for a directory's entries, or None if
    the directory does not exist. Uses an O_NOFOLLOW fd where the platform allows, so the
    directory cannot be swapped for a symlink between the check and the listing."""
    use_fd = os.scandir in os.supports_fd and bool(_O_NOFOLLOW and _O_DIRECTORY)
    if use_fd:
        fd = _open_dir_nofollow(path)
        if fd is None:
            return None
        target: int | str = fd
    else:
        st = _lstat_or_none(path)
        if st is None:
            return None
        if stat.S_ISLNK(st.st_mode) or not stat.S_ISDIR(st.st_mode):
            raise FramesRefused("The session's frame directory is not a plain directory.")
        fd, target = -1, path
    try:
        out = []
        with os.scandir(target) as it:
            for entry in it:
                is_link = entry.is_symlink()
                is_file = not is_link and entry.is_file(follow_symlinks=False)
                st = entry.stat(follow_symlinks=False) if is_file else None
                out.append((entry.name, is_link, is_file, st))
        return out
    finally:
        if fd >= 0:
            os.close(fd)


def list_requests(root: Path, session_id: str) -> list[RequestFile]:
    """The session's ``activity-<requestId>.jsonl`` files, oldest first.

    A missing session directory gives ``[]``. Other files, symlinks and names whose id
    :func:`request_file` would refuse are ignored. Ordered by first frame timestamp,
    falling back to mtime for files without one, then by name.
    """
    directory = _session_dir_str(root, session_id)
    entries = _list_entries(directory)
    if not entries:
        return []
    found: list[RequestFile] = []
    for name, is_link, is_file, st in entries:
        if is_link or not is_file or st is None:
            continue
        request_id = _request_id_from_name(name)
        if request_id is None:
            continue
        first, last = _peek_ts(os.path.join(directory, name))
        found.append(RequestFile(request_id, name, st.st_size, st.st_mtime, first, last))

    def order(r: RequestFile) -> tuple[float, str]:
        return (r.first_ts_ms if r.first_ts_ms is not None else r.mtime * 1000.0, r.name)

    found.sort(key=order)
    return found


# --- Usage, orphans and removal ------------------------------------------------------


def _tree_usage(path: str) -> tuple[int, int, float] | None:
    """(bytes, files, latest mtime) of the regular files under ``path``, or None if missing.

    Symlinks are neither followed nor counted. Frame directories are flat in practice;
    nested directories (walked iteratively, no recursion limit) are counted so the size
    shown for a directory is what removing it frees.
    """
    st = _lstat_or_none(path)
    if st is None:
        return None
    if not stat.S_ISDIR(st.st_mode):  # includes symlinks: lstat does not follow them
        raise FramesRefused("The session's frame path is not a plain directory.")
    total, files, latest = 0, 0, st.st_mtime
    stack = [path]
    while stack:
        current = stack.pop()
        try:
            with os.scandir(current) as it:
                for entry in it:
                    if entry.is_symlink():
                        continue
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        est = entry.stat(follow_symlinks=False)
                        total += est.st_size
                        files += 1
                        latest = max(latest, est.st_mtime)
        except FileNotFoundError:  # removed while we walked: it no longer uses space
            continue
    return total, files, latest


def dir_usage(root: Path, session_id: str) -> tuple[int, int] | None:
    """(bytes, files) of a session's frame directory, or None if it does not exist."""
    usage = _tree_usage(_session_dir_str(root, session_id))
    return None if usage is None else (usage[0], usage[1])


def _valid_dir_name(name: str) -> bool:
    return _id_problem(name, "session id") is None


def scan_frame_dirs(root: Path, known_session_ids: Callable[[list[str]], set[str]]) -> OrphanReport:
    """Split the directories directly under ``root`` into orphans and known sessions.

    ``known_session_ids(names)`` is called with batches of at most 500 names and must
    return those that have a session row. Symlinks and other non-directories under the
    root are reported in ``skipped``, not followed. A missing root gives an empty report.
    """
    real_root = os.path.realpath(os.fspath(root))
    report = OrphanReport(root=Path(real_root), root_exists=os.path.isdir(real_root))
    if not report.root_exists:
        return report
    dirs: dict[str, FrameDir] = {}
    with os.scandir(real_root) as it:
        entries = list(it)
    for entry in entries:
        name = entry.name
        if entry.is_symlink():
            report.skipped.append(SkippedEntry(name, "skipped: symlink"))
            continue
        if not entry.is_dir(follow_symlinks=False):
            report.skipped.append(SkippedEntry(name, "skipped: not a directory"))
            continue
        if not _valid_dir_name(name):
            report.skipped.append(SkippedEntry(name, "skipped: not a valid session id"))
            continue
        try:
            usage = _tree_usage(entry.path)
        except PermissionError:
            report.skipped.append(SkippedEntry(name, "skipped: permission denied"))
            continue
        except FramesRefused:  # swapped for something else since the root listing
            report.skipped.append(SkippedEntry(name, "skipped: changed during scan"))
            continue
        if usage is None:  # removed since the root listing
            continue
        dirs[name] = FrameDir(name, usage[0], usage[1], usage[2])

    names = sorted(dirs)
    known: set[str] = set()
    for i in range(0, len(names), KNOWN_IDS_BATCH):
        batch = names[i : i + KNOWN_IDS_BATCH]
        known.update(set(known_session_ids(batch)) & set(batch))
    for name in names:
        d = dirs[name]
        report.total_bytes += d.bytes
        if name in known:
            report.known.append(d)
        else:
            report.orphans.append(d)
            report.orphan_bytes += d.bytes
    report.skipped.sort(key=lambda s: s.name)
    return report


def _remove_tree_walk(path: str) -> None:
    """Remove a directory tree without following symlinks (used when rmtree cannot be
    trusted to). Symlinks are unlinked, which removes the link and never its target."""
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise FramesRefused("The session's frame path is not a plain directory.")
    # Iterative post-order walk: collect directories top-down, remove them bottom-up.
    dirs = [path]
    todo = [path]
    while todo:
        current = todo.pop()
        with os.scandir(current) as it:
            entries = list(it)
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                dirs.append(entry.path)
                todo.append(entry.path)
            else:
                os.unlink(entry.path)
    for d in reversed(dirs):
        os.rmdir(d)


def remove_session_dir(root: Path, session_id: str) -> RemovedDir:
    """Delete a session's frame directory; return what was removed.

    Refuses as :func:`session_dir` does (symlinks are never followed, so a symlinked
    directory and its target are both left alone). A missing directory gives
    ``RemovedDir(0, 0, existed=False)``. The counts are measured just before removal;
    delete the session row first so the runtime stops writing. A file created concurrently
    can make the removal fail with :class:`OSError` (ENOTEMPTY); calling again finishes.
    """
    path = _session_dir_str(root, session_id)
    usage = _tree_usage(path)
    if usage is None:
        return RemovedDir(0, 0, existed=False)
    if getattr(shutil.rmtree, "avoids_symlink_attacks", False):
        # fd-based rmtree: safe even if an entry is swapped for a symlink mid-walk.
        shutil.rmtree(path)
    else:
        _remove_tree_walk(path)
    return RemovedDir(usage[0], usage[1])
