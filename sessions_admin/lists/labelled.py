"""The session list's ``?label=`` pages: in sort order from our copies of the labelled
sessions' sort values, checked against the store row by row.

Every label row keeps its session's last activity, creation time and turn
count (``ourdata.review.labels``), current up to a store message (the mark,
moved by each ``sync_index`` pass). The runtime changes those values only by
appending a message (its trigger), so the sessions whose copy may be stale
are the labelled ones with a message after the mark: a walk of the store's
rowid from there (a minute of messages between passes is a few hundred
rows). A page then merges

* those sessions, read from the store with their current values, and
* the rest, walked in our index's order on the copies, each read back from
  the store by primary key: a deleted session, or one that no longer matches
  the other filters, is passed over and the walk reads on until the page is
  full; one whose value differs from its copy (a row edited without a
  message) means the copies cannot place it: the page is read the exact way
  instead, and the copy corrected for the pages after it.

So a page is a handful of indexed reads in our database and the store's
lookups of about the rows shown (about 5 ms on the bench store for 10,000
labelled sessions, against 150-210 ms for looking up every labelled session).

What the copies cannot see: a row edited *without* a message (not the
runtime's way: its trigger is what moves the sort values) to a place before
the page being read is listed from the next ``sync_index`` pass on, as the
side index's pages do; a row deleted, or changed by a message, never shows
wrongly.
When the copies cannot answer (no pass has refreshed them yet, too many
messages since the mark, a copy missing because the store holds a value no
integer orders as, a cursor from such a value) the page comes from
:func:`sessions_admin.store.queries.list_sessions_among`, which reads every
labelled session: slower, and exact.
"""

from __future__ import annotations

from typing import Any

from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.store import feed, queries
from sessions_admin.store.queries import PAGE_SIZE, SORTS, Cursor, SessionFilter, SessionPage

#: Messages after the mark a page reads to find the sessions whose copies moved
#: (beyond that, sync_index is far behind and the page reads the exact way).
TOUCHED_CAP = 20_000
#: Label rows the first step of a page walks; each further step twice as many.
FIRST_STEP = 64
#: Steps before a page that keeps meeting deleted or filtered rows reads the exact way.
MAX_STEPS = 7


def labelled_page(
    label: Label,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int = PAGE_SIZE,
    exact: bool = False,
) -> SessionPage:
    """The sessions with ``label`` (and the other filters), one keyset page; ``exact``
    reads every labelled session from the store (the fallback, for comparison)."""
    page = None if exact else page_from_copies(label, session_filter, sort, cursor, limit=limit)
    if page is None:
        ids = labels.session_ids_with(label)
        if not ids:
            return SessionPage(rows=[], next_cursor=None, strategy="label", count=0)
        page = queries.list_sessions_among(ids, session_filter, sort, cursor, limit=limit)
    return page


def _after(key: tuple[Any, str], after: tuple[Any, str] | None, descending: bool) -> bool:
    if after is None:
        return True
    return key < after if descending else key > after


def page_from_copies(
    label: Label,
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int = PAGE_SIZE,
) -> SessionPage | None:
    """The page from the copies (see the module's docstring), or ``None`` when they
    cannot answer it."""
    column, descending = SORTS[sort]
    after = None
    if cursor is not None:
        if not isinstance(cursor.id, str) or queries.sort_copy(cursor.value, column) is None:
            return None
        after = (cursor.value, cursor.id)
    mark = labels.copies_mark()
    if mark is None or labels.has_uncopied(label, column):
        return None
    touched = feed.sessions_touched_after(mark, TOUCHED_CAP)
    if touched is None:
        return None
    moved_ids = labels.labelled_among(label, touched)
    found: list[tuple[tuple[Any, str], tuple]] = []
    for sid, raw in queries.rows_matching(sorted(moved_ids), session_filter).items():
        value = queries.row_sort_copy(raw, sort)
        if value is None:
            return None
        if _after((value, sid), after, descending):
            found.append(((value, sid), raw))
    walked = _walk_copies(label, session_filter, sort, after, moved_ids, limit + 1)
    if walked is None:
        return None
    found.extend(walked)
    found.sort(key=lambda pair: pair[0], reverse=descending)
    page = queries.cut_page([raw for _, raw in found[: limit + 1]], sort, limit, "label copies")
    return page


def _walk_copies(
    label: Label,
    session_filter: SessionFilter,
    sort: str,
    after: tuple[Any, str] | None,
    skip: set[str],
    wanted: int,
) -> list[tuple[tuple[Any, str], tuple]] | None:
    """At least ``wanted`` rows (or all there are) of the label's walk in copy order,
    each still in the store, matching, and at its copied value; ``None`` when a copy
    is stale or the walk reads too long."""
    column, descending = SORTS[sort]
    kept: list[tuple[tuple[Any, str], tuple]] = []
    step = FIRST_STEP
    for _ in range(MAX_STEPS):
        walked = labels.walk(label, column, descending, after, step)
        candidates = [(sid, value) for sid, value in walked if sid not in skip]
        rows = queries.rows_matching([sid for sid, _ in candidates], session_filter)
        for sid, value in candidates:
            raw = rows.get(sid)
            if raw is None:
                continue  # deleted since, or no longer matches the other filters
            if queries.row_sort_copy(raw, sort) != value:
                # Changed without a message: this page is read the exact way, and the
                # copy corrected so the pages after it place the session right.
                labels.correct_copies(
                    sid,
                    last_active=queries.row_sort_copy(raw, "last_active"),
                    turn_count=queries.row_sort_copy(raw, "turn_count"),
                )
                return None
            kept.append(((value, sid), raw))
        if len(walked) < step or len(kept) >= wanted:
            return kept
        after = (walked[-1][1], walked[-1][0])
        step *= 2
    return None
