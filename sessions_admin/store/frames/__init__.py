"""Confined, bounded reading of activity-frame files.

The agent runtime writes one JSON object per line to
``<frames root>/<sessionId>/activity-<requestId>.jsonl``. The frame shape is not
documented, so any JSON object is accepted and well-known keys (timestamps, kind, trace
ids, name, duration) are picked out when present.

Threats and constraints this package is built around:

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

This package is plain Python (stdlib only) so it can be used and tested without Django.
Functions may raise :class:`OSError` for genuine I/O failures (permissions, disk errors);
policy failures raise :class:`FramesRefused`, missing request files :class:`FramesNotFound`.

Layout, one module per seam (import names from this package, not from the modules):

* :mod:`~sessions_admin.store.frames.paths`: confinement (ids to checked paths, opening
  without following links) and the errors.
* :mod:`~sessions_admin.store.frames.lines`: one line to a :class:`FrameLine` (well-known
  keys, timestamps, summary, pretty form).
* :mod:`~sessions_admin.store.frames.pages`: :func:`read_page` and :func:`tail`, the
  bounded buffered reading and the filters.
* :mod:`~sessions_admin.store.frames.requests`: :func:`list_requests`, a session's files.
* :mod:`~sessions_admin.store.frames.disk`: :func:`dir_usage`, :func:`scan_frame_dirs`
  (orphans) and :func:`remove_session_dir`.
"""

from __future__ import annotations

from sessions_admin.store.frames.disk import (
    FrameDir,
    OrphanReport,
    RemovedDir,
    SkippedEntry,
    UnlinkedEntry,
    dir_usage,
    remove_session_dir,
    scan_frame_dirs,
    standing,
    unlink_session_entry,
)
from sessions_admin.store.frames.lines import (
    PRETTY_MAX_CHARS,
    RAW_PREVIEW_BYTES,
    SUMMARY_MAX_CHARS,
    FrameLine,
)
from sessions_admin.store.frames.pages import (
    DEFAULT_LIMIT,
    DEFAULT_MAX_LINE_BYTES,
    DEFAULT_MAX_PAGE_BYTES,
    DEFAULT_SCAN_BUDGET,
    MAX_LIMIT,
    PENDING_PREVIEW_BYTES,
    FramePage,
    PendingLine,
    TailResult,
    read_page,
    tail,
)
from sessions_admin.store.frames.paths import (
    FramesError,
    FramesNotFound,
    FramesRefused,
    has_session_dir,
    request_file,
    session_dir,
)
from sessions_admin.store.frames.requests import (
    HEAD_BYTES,
    TAIL_BYTES,
    TOKENS_SCAN_BYTES,
    RequestFile,
    Tokens,
    list_requests,
    request_summary,
    request_tokens,
)

__all__ = [
    "TOKENS_SCAN_BYTES",
    "Tokens",
    "request_summary",
    "request_tokens",
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
    "UnlinkedEntry",
    "TailResult",
    "dir_usage",
    "has_session_dir",
    "list_requests",
    "read_page",
    "remove_session_dir",
    "request_file",
    "scan_frame_dirs",
    "standing",
    "unlink_session_entry",
    "session_dir",
    "tail",
    # Sizes the tests and benchmarks read to build their cases; not needed by callers.
    "HEAD_BYTES",
    "PENDING_PREVIEW_BYTES",
    "PRETTY_MAX_CHARS",
    "RAW_PREVIEW_BYTES",
    "SUMMARY_MAX_CHARS",
    "TAIL_BYTES",
]
