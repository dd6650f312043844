"""The session list's pieces that read without a request: a page the side index
chose, the failed calls of a page's rows, the sessions per target the rollups count."""

from __future__ import annotations

import os

from sessions_admin import clock
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index import sessions as index_sessions
from sessions_admin.ourdata.rollups import calls, figures
from sessions_admin.store import queries
from sessions_admin.store.connection import frames_root
from sessions_admin.store.frames import disk
from sessions_admin.store.queries import Cursor

#: Reads of the side index for one page before the list scans the store instead.
INDEX_READS_PER_PAGE = 8


def index_page(
    session_filter: queries.SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int = queries.PAGE_SIZE,
    failed: bool = False,
) -> queries.SessionPage | None:
    """A list page whose ids the side index chose (``failed``: among the sessions
    with a failed call), read back from the store and checked again; ``None`` when
    the index cannot serve this filter now.

    A session the runtime deleted or changed since the last pass is skipped
    and the index read on, so "No sessions match" is said only where the
    index really ends. The next page starts after the last id the index gave
    (its position, not the store's newer values), so no row shows twice.
    After a few reads that keep meeting stale rows, the list scans instead.
    """
    rows: list = []
    position = cursor
    for _ in range(INDEX_READS_PER_PAGE):
        want = limit - len(rows)
        picked = index_sessions.page_ids(
            session_filter, sort, position, limit=want + 1, failed=failed
        )
        if picked is None:
            return None
        ids = [sid for sid, _ in picked[:want]]
        rows.extend(queries.page_of_ids(ids, session_filter, sort, limit=want).rows)
        if len(picked) <= want:
            return queries.SessionPage(rows=rows, next_cursor=None, strategy="index")
        last_id, last_value = picked[want - 1]
        position = Cursor(sort, 0 if last_value is None else last_value, last_id)
        if len(rows) == limit:
            return queries.SessionPage(rows=rows, next_cursor=position, strategy="index")
    return None


def failed_calls(session_ids: list[str]) -> dict[str, int]:
    """Failed tool calls per session from the rollups; none shown while they are not built
    (or the side database is damaged: the list itself comes from the store)."""
    try:
        with figures.reading() as side:
            return calls.failed_by_session(side, session_ids)
    except (figures.NotComputed, *sidedb.errors()):
        return {}


def counted_sessions() -> tuple[dict[tuple[str, str], int], int] | None:
    """Sessions per (target, profile) from the rollups as of their last pass, and when
    that pass ended; ``None`` while they cannot say (not built, damaged, or the
    pass older than the index's freshness window: the store then counts)."""
    try:
        with figures.reading() as side:
            synced = figures.last_sync(side).synced_at_ms
            now = clock.now_ms()
            if synced is None or now - synced > index_sessions.FRESH_FOR_S * 1000:
                return None
            rows = figures.by_target(side, figures.parse_window("all", now))
    except (figures.NotComputed, *sidedb.errors()):
        return None
    # A pair the rollups count no session in is counted in the store, not shown as 0.
    counts = {
        (t.target, profile): n for t in rows for profile, (n, _) in t.profiles.items() if n > 0
    }
    return counts, synced


class FailedUnknown(Exception):
    """The rollups cannot say which sessions have failed calls (not built, or damaged)."""


def failed_synced_at() -> int | None:
    """When the pass the ``failed`` filter answers from ended (:class:`FailedUnknown`
    when the rollups cannot say which sessions have failed calls)."""
    try:
        with figures.reading() as side:
            return figures.last_sync(side).synced_at_ms
    except (figures.NotComputed, *sidedb.errors()) as exc:
        raise FailedUnknown() from exc


def failed_session_ids() -> list[str]:
    """Every session with a failed tool call as of the rollups' last pass."""
    try:
        with figures.reading() as side:
            return calls.failed_session_ids(side)
    except (figures.NotComputed, *sidedb.errors()) as exc:
        raise FailedUnknown() from exc


def failed_session_count() -> int:
    try:
        with figures.reading() as side:
            return calls.count_failed_sessions(side)
    except (figures.NotComputed, *sidedb.errors()) as exc:
        raise FailedUnknown() from exc


def with_frames(session_ids: list[str]) -> set[str]:
    """Which of these sessions have something under the frames root (one ``lstat``
    each: a page's rows); none when the root cannot be read."""
    try:
        return set(disk.standing(frames_root(), session_ids))
    except OSError:
        return set()


def frames_session_ids() -> list[str]:
    """Every name directly under the frames root that could be a text session id (the
    list's ``?frames=1`` reads these sessions from the store). A name that is not
    UTF-8 names no text id: such a directory is listed on the orphans page."""
    try:
        with os.scandir(frames_root()) as entries:
            names = [e.name for e in entries]
    except OSError:
        return []
    return [name for name in names if _text_name(name)]


def _text_name(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:  # the bytes os.scandir could not decode
        return False
    return "\x00" not in name


def page_among(
    session_ids: list[str],
    session_filter: queries.SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    strategy: str,
    limit: int = queries.PAGE_SIZE,
) -> queries.SessionPage:
    """A list page among ``session_ids`` (those with failed calls, or with a frames
    directory), each read from the store with the other filters: exact, and a read of
    every one of them (about 6 µs each), which is why the list asks the side index
    first where it can."""
    if not session_ids:
        return queries.SessionPage(rows=[], next_cursor=None, strategy=strategy, count=0)
    page = queries.list_sessions_among(session_ids, session_filter, sort, cursor, limit=limit)
    page.strategy = strategy
    return page
