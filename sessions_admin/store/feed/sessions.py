"""The store's session rows for our side data: by id, their sort values, what moved since the
last pass, and the session list's filters as SQL over the side index's copy."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from sessions_admin.sqlhelpers import (
    chunks,
    id_above,
    placeholders,
)
from sessions_admin.store.blockread import row_digest
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import (
    run_sql,
    store_path,
)
from sessions_admin.store.feed.messages import stream
from sessions_admin.store.feed.rows import FeedSession, as_int, as_text
from sessions_admin.store.queries import (
    SORTS,
    Cursor,
    SessionFilter,
    filter_with,
    keyset_sql,
    sort_copy,
    sorted_pairs,
)
from sessions_admin.store.values import Undecodable


def session_sort_values(
    session_ids: Sequence[str],
    session_filter: SessionFilter,
    sort: str,
    cursor: Cursor | None,
    limit: int,
) -> list[tuple[str, Any]]:
    """(id, sort value) of those of ``session_ids`` that match the whole filter now
    (its text too, folded as the index folds), after ``cursor``, in the list's order:
    at most ``limit``, read from the store's own rows."""
    column, _ = SORTS[sort]
    clauses, params = session_filter.where()
    key_clauses, key_params, order = keyset_sql(sort, cursor)
    pairs: list[tuple[str, Any]] = []
    for chunk in chunks(list(session_ids)):
        where = " AND ".join([f"id IN ({placeholders(len(chunk))})", *clauses, *key_clauses])
        pairs += run_sql(
            f"SELECT id, {column} FROM sessions WHERE {where} {order} LIMIT ?",
            [*chunk, *params, *key_params, limit],
        )
    return sorted_pairs(pairs, sort)[:limit]


def session_ids() -> Iterator[str]:
    """Every session id in the store, in ascending order (a walk of the primary key's index).

    A BLOB id is skipped: no message can point at it by text.
    """
    cursor = stream("SELECT id FROM sessions ORDER BY id")
    for (session_id,) in cursor:
        if isinstance(session_id, str):
            yield session_id


def count_sessions() -> int:
    return int(run_sql("SELECT COUNT(*) FROM sessions")[0][0])


def _quoted(columns: Sequence[str]) -> str:
    # quote() writes every storage class distinctly (5, '5', X'35', NULL) and is
    # computed inside SQLite; CAST AS BLOB hands Python bytes even when a TEXT
    # value is not valid UTF-8, so a digest never fails to decode.
    quoted = " || char(31) || ".join(f"quote({c})" for c in columns)
    return f"CAST({quoted} || {whole_if_nul(columns)} AS BLOB)"


def whole_if_nul(columns: Sequence[str]) -> str:
    """quote() stops at a NUL in TEXT: a row holding one is also written whole, in hex,
    so an edit after the NUL changes its digest. One test per row (the columns' bytes
    joined; a test per column cost the walk 0.4 s more on 500,000 rows); the rows
    without a NUL, all but hostile ones, keep the digest they had."""
    whole = " || X'1F' || ".join(f"CAST(ifnull({c}, '') AS BLOB)" for c in columns)
    return f"CASE WHEN instr(CAST({whole} AS BLOB), X'00') THEN 'x' || hex({whole}) ELSE '' END"


#: The columns whose change moves a session's messages to other rollup cells.
IDENTITY_COLUMNS = ("target_key", "profile_key", "principal_id", "created_at")

#: Every column of a session row: any edit changes the digest.
ROW_COLUMNS = (*IDENTITY_COLUMNS, "title", "turn_count", "last_active")

SIG_SQL = _quoted(ROW_COLUMNS)

IDENT_SQL = _quoted(IDENTITY_COLUMNS)

#: An id the index can hold: TEXT that is valid UTF-8 (BLOB ids and undecodable
#: text are listed from the store, never from the index).
TEXT_ID = "CASE WHEN typeof(id) = 'text' THEN CAST(id AS BLOB) END"

SESSION_COLUMNS = (
    f"id, {clipped_sql('target_key')}, {clipped_sql('profile_key')}, "
    f"{clipped_sql('principal_id')}, {clipped_sql('title')}, turn_count, created_at, last_active, "
    f"{SIG_SQL}, {IDENT_SQL}, rowid"
)


def feed_session(row: tuple) -> FeedSession:
    sid, target, profile, principal, title, turns, created, last, sig, ident, rowid = row
    return FeedSession(
        id=as_text(sid) or "",
        target_key=as_text(target),
        profile_key=as_text(profile),
        principal_id=as_text(principal),
        title=as_text(title),
        turn_count=as_int(turns),
        created_at=as_int(created),
        last_active=as_int(last),
        sig=row_digest(sig),
        ident=row_digest(ident),
        rowid=rowid,
    )


def decoded_id(raw: bytes | None) -> str | None:
    """A session id from its stored TEXT bytes (None: not TEXT, a BLOB or a number).

    TEXT that is not valid UTF-8 comes back as an :class:`Undecodable`: it equals
    its text with replacement characters, which is how the sync holds such a
    session once a batch took it in, and it binds back to its exact bytes
    (:func:`run_sql`), so the pass reads the right row.
    """
    if raw is None:
        return None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return Undecodable(raw)


def present_session_ids(session_ids: Sequence[str]) -> set[str]:
    """Those of these session ids the store has a row for (one index probe each)."""
    found: set[str] = set()
    for chunk in chunks(dict.fromkeys(session_ids)):
        marks = placeholders(len(chunk))
        rows = run_sql(f"SELECT id FROM sessions WHERE id IN ({marks})", chunk)
        found.update(row[0] for row in rows)
    return found


def sessions_by_id(session_ids: Sequence[str]) -> dict[str, FeedSession]:
    """The current rows of these sessions (missing ones are left out)."""
    found: dict[str, FeedSession] = {}
    for chunk in chunks(dict.fromkeys(session_ids)):
        marks = placeholders(len(chunk))
        for row in run_sql(f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id IN ({marks})", chunk):
            session = feed_session(row)
            found[session.id] = session
    return found


@dataclass(frozen=True, slots=True)
class SortKeys:
    """A session's sort values as our label rows copy them
    (:func:`sessions_admin.store.queries.sort_copy`: ``None`` where no integer
    orders as the stored value does). ``created_at`` also tells a session from
    one the runtime re-created under the same id."""

    last_active: int | None
    created_at: int | None
    turn_count: int | None


def sort_keys(session_ids: Sequence[str]) -> dict[str, SortKeys]:
    """The sort values of these sessions (missing ones are left out)."""
    found: dict[str, SortKeys] = {}
    for chunk in chunks(list(dict.fromkeys(session_ids))):
        marks = placeholders(len(chunk))
        for sid, last, created, turns in run_sql(
            f"SELECT id, last_active, created_at, turn_count FROM sessions WHERE id IN ({marks})",
            chunk,
        ):
            if isinstance(sid, str):
                found[sid] = SortKeys(
                    sort_copy(last, "last_active"),
                    sort_copy(created, "created_at"),
                    sort_copy(turns, "turn_count"),
                )
    return found


def sessions_touched_after(after_id: int, cap: int) -> set[str] | None:
    """The sessions with a message after ``after_id`` (whose last activity and turn
    count the runtime's trigger changed since), or ``None`` when more than ``cap``
    messages came since (a walk of the rowid from ``after_id``: cheap when few)."""
    # Grouped in SQLite: a session's messages come back as one row, not one each.
    above, after = id_above("id", after_id)
    rows = run_sql(
        "SELECT session_id, COUNT(*) FROM (SELECT session_id FROM session_messages "
        f"WHERE {above} ORDER BY id LIMIT ?) GROUP BY session_id",
        (after, cap + 1),
    )
    if sum(count for _, count in rows) > cap:
        return None
    return {sid for sid, _ in rows if isinstance(sid, str)}


def session_list_sql(
    session_filter: SessionFilter, sort: str, cursor: Cursor | None
) -> tuple[str, list[str], list[Any], str]:
    """The list's sort column, its filters (all but its text search) and keyset for
    ``sort`` after ``cursor``: column, WHERE clauses, their parameters and the ORDER BY,
    over the store's session columns, which the side index's ``search_sessions``
    copies by name."""
    column, _ = SORTS[sort]
    clauses, params = filter_with(session_filter, q=None).where()
    key_clauses, key_params, order = keyset_sql(sort, cursor)
    return column, clauses + key_clauses, params + key_params, order


def store_file() -> str:
    """The store's file, resolved (symlinks followed): what our data folder is made for."""
    return os.path.realpath(store_path())
