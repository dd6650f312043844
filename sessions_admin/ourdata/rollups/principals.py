"""``rollup_principal``: one row per principal, all time, for the ``/principals/`` list.

Kept from the same deltas as ``rollup_principal_day`` (summed over the days),
so every path of the listener (new messages, new sessions, forgotten sessions
and messages) corrects it in the same transaction. A principal is keyed as in
``rollup_principal_day``: its text, ``""`` for none.

A session's activity spans its row's ``created_at`` and its first and last
message, each when it is a whole number other than ``NO_TIME`` (which stands
for "none" here, as in every rollup): the whole range of SQLite's integers
otherwise, ``-2**63`` included. New data can only widen a principal's span, so adds
take the min and max; a forget can shrink it, so the principals that lost
sessions have their span read again from their remaining ``rollup_session``
rows (the ``rollup_session_principal`` index: a walk of that principal's
sessions only).
"""

from __future__ import annotations

import sqlite3
from collections import defaultdict
from collections.abc import Mapping

from sessions_admin.folding import fold
from sessions_admin.ourdata.rollups.schema import NO_TIME

#: (first, last) activity per principal key, gathered over one batch.
Spans = dict[str, list[int | None]]

# A session's created_at counts as activity when it was readable (NO_TIME: it was not).
_CREATED = f"(CASE WHEN created_at != {NO_TIME} THEN created_at END)"
_SESSION_SPAN_SQL = (
    f"SELECT min(min(coalesce(first_ts, {_CREATED}), coalesce({_CREATED}, first_ts))), "
    f"max(max(coalesce(last_ts, {_CREATED}), coalesce({_CREATED}, last_ts))) FROM rollup_session"
)


def key_of(principal: str | None) -> str:
    """The row key of a principal (as ``rollup_principal_day`` keys it): its text."""
    return str(principal or "")


def note_span(
    spans: Spans, principal: str | None, first: int | None, last: int | None, created: int | None
) -> None:
    """Widen the batch's span of ``principal`` by one session's times."""
    times = [t for t in (first, last, created) if t is not None and t != NO_TIME]
    if not times:
        return
    span = spans.setdefault(key_of(principal), [None, None])
    low, high = min(times), max(times)
    span[0] = low if span[0] is None else min(span[0], low)
    span[1] = high if span[1] is None else max(span[1], high)


def note_lost(lost: Spans, principal: str | None, *times: int | None) -> None:
    """Widen the span ``principal``'s forgotten sessions held by one session's times.

    Every time counts, even those :func:`note_span` leaves out: a wider lost span
    only means a span read again that need not have been.
    """
    span = lost.setdefault(key_of(principal), [None, None])
    known = [t for t in times if t is not None]
    if known:
        span[0] = min(known) if span[0] is None else min(span[0], *known)
        span[1] = max(known) if span[1] is None else max(span[1], *known)


def apply(
    side: sqlite3.Connection,
    day_cells: Mapping[tuple, list[int]],
    spans: Spans,
    lost: Spans,
) -> None:
    """Add one batch's per-day deltas (summed per principal) and spans to the totals."""
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (_day, principal), cell in day_cells.items():
        total = totals[principal]
        for i, n in enumerate(cell):
            total[i] += n
    rows = []
    for principal in set(totals) | set(spans):
        messages, sessions, calls, errors = totals[principal]
        first, last = spans.get(principal, (None, None))
        rows.append((principal, fold(principal), sessions, messages, calls, errors, first, last))
    side.executemany(
        "INSERT INTO rollup_principal (principal, fold, sessions, messages, calls, errors, "
        "first_ts, last_ts) VALUES (?, ?, ?, ?, ?, ?, ?, coalesce(?, -1)) "
        "ON CONFLICT DO UPDATE SET sessions = sessions + excluded.sessions, "
        "messages = messages + excluded.messages, calls = calls + excluded.calls, "
        "errors = errors + excluded.errors, "
        "first_ts = coalesce(min(first_ts, excluded.first_ts), first_ts, excluded.first_ts), "
        # -1 stands for "no time" in last_ts: a real time below it (down to -2**63)
        # replaces it rather than losing to it in max().
        "last_ts = CASE WHEN excluded.last_ts = -1 THEN last_ts "
        "WHEN last_ts = -1 THEN excluded.last_ts ELSE max(last_ts, excluded.last_ts) END",
        rows,
    )
    emptied = [(p,) for p, total in totals.items() if min(total) < 0]
    side.executemany(
        "DELETE FROM rollup_principal WHERE principal = ? AND sessions <= 0 AND messages <= 0 "
        "AND calls <= 0",
        emptied,
    )
    for principal, (low, high) in lost.items():
        if low is not None and high is not None:
            _recheck_span(side, principal, low, high)


def _recheck_span(side: sqlite3.Connection, principal: str, low: int, high: int) -> None:
    """Read a principal's span again when the sessions it lost (active ``low..high``)
    may have held either end of it.

    Ends strictly inside what was lost are held by sessions still there: no walk
    of the principal's sessions (a pass that moved 100 sessions to another
    principal spent 0.4 CPU-s reading 76 spans again on the bench store).
    """
    row = side.execute(
        "SELECT first_ts, last_ts FROM rollup_principal WHERE principal = ?", [principal]
    ).fetchone()
    if row is None:
        return  # emptied and deleted
    first, last = row
    if first is not None and last is not None and first < low and high < last:
        return
    _read_span_again(side, principal)


def _read_span_again(side: sqlite3.Connection, principal: str) -> None:
    where = "principal = ? OR principal IS NULL" if principal == "" else "principal = ?"
    first, last = side.execute(f"{_SESSION_SPAN_SQL} WHERE {where}", [principal]).fetchone()
    side.execute(
        "UPDATE rollup_principal SET first_ts = ?, last_ts = coalesce(?, -1) WHERE principal = ?",
        [first, last, principal],
    )


def backfill(side: sqlite3.Connection) -> None:
    """Fill a new ``rollup_principal`` from the rollups an older version kept."""
    totals = side.execute(
        "SELECT principal, sum(sessions), sum(messages), sum(calls), sum(errors) "
        "FROM rollup_principal_day GROUP BY principal"
    ).fetchall()
    side.executemany(
        "INSERT INTO rollup_principal (principal, fold, sessions, messages, calls, errors, "
        "first_ts, last_ts) VALUES (?, ?, ?, ?, ?, ?, NULL, -1)",
        [(p, fold(p), *rest) for p, *rest in totals],
    )
    for principal, *_ in totals:
        _read_span_again(side, principal)
