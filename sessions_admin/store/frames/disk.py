"""Frame directories as disk space: what one uses, which ones are orphans, removal.

Orphans are directories under the frames root with no session row (the caller says which
ids have one). Walking, counting and removing never follow a symbolic link, so a link
planted under the root is neither counted nor deleted through.
"""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from sessions_admin.sqlhelpers import chunks
from sessions_admin.store.frames.paths import (
    FramesRefused,
    id_problem,
    lstat_or_none,
    session_dir_str,
)

# --- Data ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FrameDir:
    """A directory directly under the frames root, named after a session id."""

    session_id: str
    bytes: int
    files: int
    mtime: float  # latest of the directory's and its files' mtimes


@dataclass(frozen=True, slots=True)
class SkippedEntry:
    #: As shown: bytes that are not UTF-8 appear as ``\xff`` escapes.
    name: str
    reason: str  # e.g. "skipped: symlink"


def shown_name(name: str) -> str:
    """A name from the disk as text a page can hold.

    ``os.scandir`` hands back bytes that are not UTF-8 as lone surrogates,
    which no page can encode; they are shown as ``\xff`` escapes instead.
    """
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return name


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
    (nothing to do) from an empty one (removed, 0 bytes). ``others`` counts what was
    not a regular file, by kind ({"symlink": 2, "FIFO": 1}): links are unlinked, never
    followed, and a directory holding only those is still reported as removed."""

    bytes: int
    files: int
    existed: bool = True
    others: tuple[tuple[str, int], ...] = ()

    def describe_others(self) -> str:
        """``2 symlinks, 1 FIFO``; empty when there were none."""
        return ", ".join(f"{n} {kind}{'s' if n != 1 else ''}" for kind, n in self.others)


def _entry_kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "FIFO"
    if stat.S_ISSOCK(mode):
        return "socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "device"
    return "special file"


# --- Usage, orphans and removal ------------------------------------------------------


def _tree_usage(path: str, others: dict[str, int] | None = None) -> tuple[int, int, float] | None:
    """(bytes, files, latest mtime) of the regular files under ``path``, or None if missing.

    Symlinks are neither followed nor counted. Frame directories are flat in practice;
    nested directories (walked iteratively, no recursion limit) are counted so the size
    shown for a directory is what removing it frees. ``others``, when given, counts by
    kind what is neither a regular file nor a directory (symlinks, FIFOs, sockets).
    """
    st = lstat_or_none(path)
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
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        est = entry.stat(follow_symlinks=False)
                        total += est.st_size
                        files += 1
                        latest = max(latest, est.st_mtime)
                    elif others is not None:
                        kind = _entry_kind(entry.stat(follow_symlinks=False).st_mode)
                        others[kind] = others.get(kind, 0) + 1
        except FileNotFoundError:  # removed while we walked: it no longer uses space
            continue
    return total, files, latest


def dir_usage(root: Path, session_id: str) -> tuple[int, int] | None:
    """(bytes, files) of a session's frame directory, or None if it does not exist."""
    usage = _tree_usage(session_dir_str(root, session_id))
    return None if usage is None else (usage[0], usage[1])


def _valid_dir_name(name: str) -> bool:
    return id_problem(name, "session id") is None


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
        shown = shown_name(name)
        if entry.is_symlink():
            report.skipped.append(SkippedEntry(shown, "skipped: symlink"))
            continue
        if not entry.is_dir(follow_symlinks=False):
            report.skipped.append(SkippedEntry(shown, "skipped: not a directory"))
            continue
        if not _valid_dir_name(name):
            reason = "not valid UTF-8" if shown != name else "not a valid session id"
            report.skipped.append(SkippedEntry(shown, f"skipped: {reason}"))
            continue
        try:
            usage = _tree_usage(entry.path)
        except PermissionError:
            report.skipped.append(SkippedEntry(shown, "skipped: permission denied"))
            continue
        except FramesRefused:  # swapped for something else since the root listing
            report.skipped.append(SkippedEntry(shown, "skipped: changed during scan"))
            continue
        if usage is None:  # removed since the root listing
            continue
        dirs[name] = FrameDir(name, usage[0], usage[1], usage[2])

    names = sorted(dirs)
    known: set[str] = set()
    # One callback per SQL-sized chunk, so its ``IN (...)`` stays small.
    for batch in chunks(names):
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
    path = session_dir_str(root, session_id)
    kinds: dict[str, int] = {}
    usage = _tree_usage(path, kinds)
    if usage is None:
        return RemovedDir(0, 0, existed=False)
    others = tuple(sorted(kinds.items()))
    if getattr(shutil.rmtree, "avoids_symlink_attacks", False):
        # fd-based rmtree: safe even if an entry is swapped for a symlink mid-walk.
        shutil.rmtree(path)
    else:
        _remove_tree_walk(path)
    return RemovedDir(usage[0], usage[1], others=others)


@dataclass(frozen=True)
class UnlinkedEntry:
    """What stood at a session's frame path that was not a directory, now unlinked."""

    kind: str
    #: A symlink's target as it read (never followed, never touched); "" otherwise.
    target: str


def unlink_session_entry(root: Path, session_id: str) -> UnlinkedEntry | None:
    """Unlink a symlink or file standing at the session's frame path (an erasure's).

    ``os.unlink`` removes the name only: a symlink's target, inside the frames
    root or not, is never followed or touched. None when a directory or nothing
    stands there.
    """
    if problem := id_problem(session_id, "session id"):
        raise FramesRefused(problem)
    real_root = os.path.realpath(os.fspath(root))
    path = os.path.join(real_root, session_id)
    st = lstat_or_none(path)
    if st is None or stat.S_ISDIR(st.st_mode):
        return None
    kind = "file" if stat.S_ISREG(st.st_mode) else _entry_kind(st.st_mode)
    target = os.readlink(path) if stat.S_ISLNK(st.st_mode) else ""
    os.unlink(path)
    return UnlinkedEntry(kind, target)


def standing(root: Path, session_ids: list) -> list[str]:
    """The ids whose frame path has an entry of any kind under the root (one existence
    test each, nothing followed: a missing entry raises nothing, as ``lstat`` would). An
    id that names no path of its own ("", ".", "..") is left out; one the path checks
    would refuse ("a/b") stays in when something stands there, so the caller reports it
    instead of passing over it."""
    base = os.path.join(os.fspath(root), "")
    found = []
    for sid in session_ids:
        if not isinstance(sid, str) or sid in ("", ".", ".."):
            continue
        try:
            if os.access(base + sid, os.F_OK, follow_symlinks=False):
                found.append(sid)
        except (OSError, ValueError):  # NUL in the id: nothing stands there
            continue
    return found
