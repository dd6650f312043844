"""Confinement: from ids that come from URLs to paths strictly inside the frames root.

Session and request ids are validated as single path components, the resolved path must
be strictly inside ``realpath(root)``, and symbolic links below the root are never followed
(not even ones pointing back inside the root): the dashboard only ever reads or deletes
what the runtime itself wrote there. The opening helpers close the gap between a check and
the open (``O_NOFOLLOW``, ``O_NONBLOCK``, listing a directory through its fd), so a file
swapped for a symlink or a FIFO in between is refused instead of followed.

The errors every other module of :mod:`sessions_admin.store.frames` raises live here too.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

# --- File names and open flags ------------------------------------------------------

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


# --- Confinement ---------------------------------------------------------------------


def id_problem(value: object, what: str) -> str | None:
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
    problem = id_problem(value, what)
    if problem is not None:
        raise FramesRefused(problem)
    assert isinstance(value, str)
    return value


def lstat_or_none(path: str) -> os.stat_result | None:
    """``os.lstat`` (never following a symlink), or None when nothing is there."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None


def _strictly_inside(real_root: str, real_path: str) -> bool:
    try:
        return real_path != real_root and os.path.commonpath([real_root, real_path]) == real_root
    except ValueError:  # different drives, or mixing absolute and relative
        return False


def session_dir_str(root: Path | str, session_id: str) -> str:
    """The session's directory under the root as a string, refused unless plainly inside."""
    _check_id(session_id, "session id")
    real_root = os.path.realpath(os.fspath(root))
    candidate = os.path.join(real_root, session_id)
    st = lstat_or_none(candidate)
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


def has_session_dir(root: Path | str, session_id: str) -> bool:
    """Whether anything stands at the session's directory path (one ``lstat``), so a
    page can hide links that would only lead to "no frames directory". A path the
    frames page would refuse (a symlink, a bad id) counts as there: that page says why.
    """
    try:
        return lstat_or_none(session_dir_str(root, session_id)) is not None
    except FramesRefused:
        return True
    except OSError:
        return True


def session_dir(root: Path, session_id: str) -> Path:
    """Path of a session's frame directory under ``realpath(root)``.

    The directory need not exist (callers treat that as "no frames"). Raises
    :class:`FramesRefused` for ids that are not a single plain path component, for a
    directory that is a symlink (wherever it points) or not a directory, or for a path
    that would resolve outside the root.
    """
    return Path(session_dir_str(root, session_id))


def _request_name(request_id: str) -> str:
    return f"{_REQUEST_PREFIX}{request_id}{_REQUEST_SUFFIX}"


def request_id_from_name(name: str) -> str | None:
    """The request id encoded in a file name, or None if the name is not one of ours."""
    if not (name.startswith(_REQUEST_PREFIX) and name.endswith(_REQUEST_SUFFIX)):
        return None
    request_id = name[len(_REQUEST_PREFIX) : -len(_REQUEST_SUFFIX)]
    # Only list what request_file() would accept, so every listed id can be opened.
    if len(name) < len(_REQUEST_PREFIX) + len(_REQUEST_SUFFIX) or id_problem(
        request_id, "request id"
    ):
        return None
    return request_id


def request_file(root: Path, session_id: str, request_id: str) -> Path:
    """Path of ``<root>/<session_id>/activity-<request_id>.jsonl``, checked.

    Raises :class:`FramesRefused` as :func:`session_dir` does, and when the file is a
    symlink or not a regular file; :class:`FramesNotFound` when it does not exist.
    """
    directory = session_dir_str(root, session_id)
    _check_id(request_id, "request id")
    name = _request_name(request_id)
    if len(name.encode("utf-8")) > _NAME_MAX_BYTES:
        raise FramesRefused("The request id is too long.")
    path = os.path.join(directory, name)
    st = lstat_or_none(path)
    if st is None:
        raise FramesNotFound("No activity-frame file for this request.")
    if stat.S_ISLNK(st.st_mode):
        raise FramesRefused("The activity-frame file is a symbolic link; links are never followed.")
    if not stat.S_ISREG(st.st_mode):
        raise FramesRefused("The activity-frame path is not a regular file.")
    if not _strictly_inside(os.path.realpath(os.fspath(root)), os.path.realpath(path)):
        raise FramesRefused("The activity-frame file is outside the frames root.")
    return Path(path)


def open_regular(path: Path | str) -> int:
    """Open a regular file for reading without following a symlink in the last component.

    This closes the gap between :func:`request_file`'s lstat check and the open: if the
    file was swapped for a symlink (or a FIFO) in between, the open fails instead.
    """
    p = os.fspath(path)
    if not _O_NOFOLLOW:  # no kernel support (Windows): fall back to a racy lstat check
        st = lstat_or_none(p)
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


# --- Opening directories -------------------------------------------------------------


def _open_dir_nofollow(path: str) -> int | None:
    """fd of a directory opened without following a final symlink; None if missing."""
    try:
        return os.open(path, os.O_RDONLY | _O_DIRECTORY | _O_NOFOLLOW | _O_CLOEXEC)
    except (FileNotFoundError, NotADirectoryError):
        st = lstat_or_none(path)
        if st is not None and stat.S_ISLNK(st.st_mode):
            raise FramesRefused("The session's frame directory is a symbolic link.") from None
        if st is not None:
            raise FramesRefused("The session's frame path is not a directory.") from None
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise FramesRefused("The session's frame directory is a symbolic link.") from exc
        raise


def list_entries(path: str) -> list[tuple[str, bool, bool, os.stat_result | None]] | None:
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
        st = lstat_or_none(path)
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
