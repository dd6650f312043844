"""Pages of frames read from a byte offset, and one poll of a live tail.

Files can be huge (1 GB) and growing, so nothing reads a whole file: :class:`_Reader`
slides a buffer bounded by ``max_line_bytes`` plus one chunk over the file, over-long
lines are skipped by scanning, and the ``kind``/``q`` filters (:class:`_Filter`) skip
unmatched stretches a buffer at a time. The runtime may be appending while we read: an
unterminated last line is reported as *pending*, never as damage, and paging stops before
it so a later poll picks it up once complete.

Offsets, not line numbers, identify lines. A byte offset is cheap to seek to and stays
valid while the file grows; a line number is only known when counting from the start
of the file (see :func:`read_page`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from sessions_admin.store.frames.lines import FrameLine, decode_preview, parse_frame, too_long_frame
from sessions_admin.store.frames.paths import open_regular

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
#: Read sizes grow from the first to the last value: a first page of small lines needs
#: only a few KB, a filtered scan benefits from large reads.
_FIRST_CHUNK = 64 * 1024
_MAX_CHUNK = 1024 * 1024
PENDING_PREVIEW_BYTES = 512


# --- Data ----------------------------------------------------------------------------


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
    limits = _Limits(
        limit=max(1, min(int(limit), MAX_LIMIT)),
        max_line_bytes=max(1, int(max_line_bytes)),
        scan_budget=max(1, int(scan_budget)),
        max_page_bytes=max(1, int(max_page_bytes)),
    )
    flt = _Filter(kind, q)
    fd = open_regular(path)
    with os.fdopen(fd, "rb", buffering=0) as f:
        st = os.fstat(f.fileno())
        size, mtime = st.st_size, st.st_mtime
        if offset > size:
            return _past_end_page(offset, size, mtime, flt.active)
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
        scan = _PageScan(rd, flt, limits, number)
        stop_reason = scan.run()
        return scan.page(stop_reason, offset=offset, size=size, mtime=mtime, realigned=realigned)


def _past_end_page(offset: int, size: int, mtime: float, filtered: bool) -> FramePage:
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
        filtered=filtered,
    )


@dataclass(frozen=True)
class _Limits:
    limit: int
    max_line_bytes: int
    scan_budget: int
    max_page_bytes: int


class _PageScan:
    """One :func:`read_page` pass: the reader, the frames kept, the line count, and where
    the newline and needle searches resume (so no byte is searched twice)."""

    def __init__(self, rd: _Reader, flt: _Filter, limits: _Limits, number: int | None) -> None:
        self.rd = rd
        self.flt = flt
        self.limits = limits
        self.number = number
        self.start = rd.pos
        self.frames: list[FrameLine] = []
        self.pending: PendingLine | None = None
        self.page_bytes = 0
        self.search_from = rd.i  # where the newline search resumes, to avoid rescanning
        self.needle = flt.needle
        self.checked_to = -1  # file offset up to which the needle was already looked for
        self.block: bytearray | None = None  # lowered copy of buffered lines, from block_off
        self.block_off = 0

    def run(self) -> str:
        """Read lines until a limit is reached; return why the page stopped."""
        rd = self.rd
        while True:
            reason = self.full()
            if reason is not None:
                return reason
            if self.needle is not None and rd.pos >= self.checked_to and self.skip_misses():
                continue
            nl = rd.find_nl(max(self.search_from, rd.i))
            if nl == -1:
                if not self.unterminated():
                    return "eof"
                continue
            self.complete_line(nl)

    def full(self) -> str | None:
        if len(self.frames) >= self.limits.limit:
            return "limit"
        if self.page_bytes >= self.limits.max_page_bytes:
            return "page_bytes"
        if self.rd.pos - self.start >= self.limits.scan_budget:
            return "scan_budget"
        return None

    def skip_misses(self) -> bool:
        """Filtered scan: look for the needle across all buffered complete lines (within
        the budget) at once and skip every line before the next hit, instead of testing
        lines one by one. A miss in the block is a miss on each line. The lowered block is
        kept until consumed, so frequent hits cost no more than one pass over it. True
        when lines were skipped."""
        rd = self.rd
        if self.block is None or rd.pos >= self.block_off + len(self.block):
            stop = min(rd.end, rd.i + self.limits.scan_budget - (rd.pos - self.start))
            last_nl = rd.buf.rfind(b"\n", rd.i, stop)
            self.block = rd.buf[rd.i : last_nl + 1].lower() if last_nl != -1 else None
            self.block_off = rd.pos
        block = self.block
        if block is None:
            return False
        rel = rd.pos - self.block_off
        hit = block.find(self.needle, rel)
        if hit == -1:
            skip_to = len(block)
        else:
            skip_to = max(rel, block.rfind(b"\n", rel, hit) + 1)
            hit_end = block.find(b"\n", hit)
            self.checked_to = self.block_off + (hit_end if hit_end != -1 else len(block)) + 1
        if skip_to <= rel:
            return False
        if self.number is not None:
            self.number += block.count(b"\n", rel, skip_to)
        rd.i += skip_to - rel
        self.search_from = rd.i
        return True

    def count_line(self) -> None:
        self.number = None if self.number is None else self.number + 1

    def keep_too_long(self, head: bytes, line_start: int, length: int) -> None:
        if self.flt.too_long_ok(head):
            self.frames.append(too_long_frame(head, line_start, length, self.number))
            self.page_bytes += min(length, self.limits.max_line_bytes)

    def unterminated(self) -> bool:
        """No newline in the buffer: skip a line longer than the limit, or read more.
        False at the end of the file (with ``pending`` set when a partial line is left)."""
        rd = self.rd
        line_start = rd.pos
        if rd.end - rd.i > self.limits.max_line_bytes:
            head = rd.take(rd.i, rd.i + self.limits.max_line_bytes)
            end = rd.skip_past_newline()
            if end is None:
                preview = decode_preview(head, PENDING_PREVIEW_BYTES)[0]
                self.pending = PendingLine(line_start, rd.size - line_start, preview)
                return False
            self.keep_too_long(head, line_start, end - line_start)
            self.count_line()
            self.search_from = rd.i
            return True
        self.search_from = rd.end - rd.i  # relative: fill() may shift the buffer
        if not rd.fill():
            if rd.end > rd.i:
                head = rd.take(rd.i, rd.i + PENDING_PREVIEW_BYTES)
                preview = decode_preview(head, PENDING_PREVIEW_BYTES)[0]
                self.pending = PendingLine(rd.pos, rd.end - rd.i, preview)
            return False
        self.search_from += rd.i
        return True

    def complete_line(self, nl: int) -> None:
        rd = self.rd
        line_start = rd.pos
        length = nl - rd.i
        if length > self.limits.max_line_bytes:
            head = rd.take(rd.i, rd.i + self.limits.max_line_bytes)
            rd.i = nl + 1
            self.keep_too_long(head, line_start, length)
        else:
            content = rd.take(rd.i, nl)
            rd.i = nl + 1
            flt = self.flt
            if content.strip() and (not flt.active or flt.raw_ok(content)):
                frame = parse_frame(content, line_start, length, self.number)
                if flt.frame_ok(frame):
                    self.frames.append(frame)
                    self.page_bytes += length
        self.count_line()
        self.search_from = rd.i

    def at_eof(self, stop_reason: str) -> bool:
        """Whether the page reaches the end of the file. Stopped early, we are still at
        EOF if nothing but an unterminated tail remains and it is already in the buffer
        (we do not read further to find out); that tail becomes ``pending``."""
        rd = self.rd
        if stop_reason == "eof" or self.pending is not None:
            return True
        if rd.read_to < rd.size or rd.find_nl(rd.i) != -1:
            return False
        if rd.end > rd.i:
            head = rd.take(rd.i, rd.i + PENDING_PREVIEW_BYTES)
            preview = decode_preview(head, PENDING_PREVIEW_BYTES)[0]
            self.pending = PendingLine(rd.pos, rd.size - rd.pos, preview)
        return True

    def page(
        self, stop_reason: str, *, offset: int, size: int, mtime: float, realigned: bool
    ) -> FramePage:
        """The page read; ``size`` is the file's size when it was opened."""
        # Stop before a pending line so the next call re-reads it whole once complete.
        end_offset = self.pending.offset if self.pending is not None else self.rd.pos
        eof = self.at_eof(stop_reason)
        return FramePage(
            frames=self.frames,
            offset=self.start,
            next_offset=None if eof else end_offset,
            end_offset=end_offset,
            size=size,
            mtime=mtime,
            pending=self.pending,
            eof=eof,
            realigned=realigned,
            scanned_to=end_offset,
            scanned_bytes=end_offset - offset,
            stop_reason=stop_reason,
            next_line_number=self.number,
            filtered=self.flt.active,
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
