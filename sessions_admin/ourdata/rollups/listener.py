"""The rollups as a consumer of the sync: add what new messages bring, subtract what goes.

A batch is folded into Python dictionaries of deltas first and written with
one ``executemany`` upsert per table (:mod:`.cells`), so a batch of 10,000
messages costs a few thousand row writes, not one statement per message per
table. This module reads and keeps the sessions' and calls' rows.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from hashlib import blake2b

from sessions_admin import clock
from sessions_admin.ourdata.rollups import principals
from sessions_admin.ourdata.rollups.cells import Call, Deltas, Session, apply
from sessions_admin.ourdata.rollups.schema import (
    DAY_MS,
    DDL,
    GRAINS,
    HEAD_CHARS,
    HOUR_MS,
    NO_TIME,
    TABLES,
    bucket_of,
    call_names,
    duration_band,
)
from sessions_admin.ourdata.sidedb import bind_id, read_id
from sessions_admin.sqlhelpers import chunks, placeholders
from sessions_admin.store.feed import FeedMessage, FeedSession
from sessions_admin.store.toolcalls import call_key, is_tool_call, reports_error


def call_digest(session_id: str, key: str) -> int:
    """A call's identity in ``rollup_call``: 64 bits of BLAKE2b over its session id and
    :func:`~sessions_admin.store.toolcalls.call_key` (two calls share one with a chance
    of 2**-64 per pair, as the sync's row digests do)."""
    raw = f"{session_id}\x00{key}".encode("utf-8", "surrogatepass")
    return int.from_bytes(blake2b(raw, digest_size=8).digest(), "big", signed=True)


def _head(text: str | None) -> str | None:
    return None if text is None else text[:HEAD_CHARS]


class RollupListener:
    """Per hour x tool x target x profile and per day x principal, kept by the sync."""

    name = "rollups"

    def create(self, side: sqlite3.Connection) -> None:
        existing = {
            name for (name,) in side.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        _create_each(side)
        if "rollup_call" in existing:
            _backfill(side, existing)

    def reset(self, side: sqlite3.Connection) -> None:
        # Dropped, not emptied: a rebuild also brings the tables to this version's schema.
        for table in TABLES:
            side.execute(f"DROP TABLE IF EXISTS {table}")
        _create_each(side)
        _stamp(side)

    def add_messages(self, side: sqlite3.Connection, batch: Sequence[FeedMessage]) -> None:
        if not batch:
            return
        sessions = _load_sessions(side, {m.session_id for m in batch})
        calls, digests = _known_calls(side, batch, sessions)
        deltas = Deltas()
        # Messages are counted per session and hour first; the hour and day
        # cells of activity and principals follow from those counts below.
        per_hour = deltas.session_hour
        for m in batch:
            # A time of NO_TIME reads as none: its hour is NO_TIME's bucket either way,
            # and it widens no session's (or principal's) span.
            sid, ts = m.session_id, (None if m.ts == NO_TIME else m.ts)
            s = sessions.get(sid)
            if s is None:
                s = sessions[sid] = Session(
                    m.target_key or "", m.profile_key or "", m.principal_id, ts, ts, 0
                )
            s.messages += 1
            if ts is not None:
                if s.first_ts is None or ts < s.first_ts:
                    s.first_ts = ts
                if s.last_ts is None or ts > s.last_ts:
                    s.last_ts = ts
                per_hour[(sid, ts // HOUR_MS)] += 1
            else:
                per_hour[(sid, NO_TIME)] += 1
            if m.tool_name:
                _take_call(calls, deltas, s, m)
        deltas.messages_from_hours(sessions)
        deltas.spans_of(sessions.values())
        for s in sessions.values():
            if s.last_ts != s.stored_last:
                deltas.last_active(s, s.stored_last, -1)
                deltas.last_active(s, s.last_ts, 1)
        _write_sessions(side, sessions)
        _write_calls(side, calls.items(), sessions, digests)
        apply(side, deltas)
        _stamp(side)

    def update_sessions(self, side: sqlite3.Connection, rows: Sequence[FeedSession]) -> None:
        """Count each session once as created, in the bucket of its row's ``created_at``.

        The runner calls this for sessions new to the sync (with or without
        messages) and for those a batch touched, after ``add_messages``.
        """
        sessions = _load_sessions(side, {row.id for row in rows})
        deltas = Deltas()
        changed: dict[str, Session] = {}
        for row in rows:
            s = sessions.get(row.id)
            if s is None:
                s = Session(
                    row.target_key or "", row.profile_key or "", row.principal_id, None, None, 0
                )
            elif s.created_at is not None:
                continue  # counted already: most rows of most batches
            s.created_at = row.created_at if row.created_at is not None else NO_TIME
            changed[row.id] = s
            deltas.session_created(s)
        deltas.spans_of(changed.values())
        _write_sessions(side, changed)
        apply(side, deltas)

    def forget_sessions(self, side: sqlite3.Connection, session_ids: Sequence[str]) -> None:
        ids = list(dict.fromkeys(session_ids))
        deltas = Deltas()
        for chunk in chunks(ids):
            marks = placeholders(len(chunk))
            sessions = _load_sessions(side, set(chunk))
            bound = [bind_id(sid) for sid in chunk]
            for sid, bucket, n in side.execute(
                f"SELECT session_id, bucket, messages FROM rollup_session_hour "
                f"WHERE session_id IN ({marks})",
                bound,
            ):
                s = sessions[read_id(sid)]
                ts = None if bucket == NO_TIME else bucket * HOUR_MS
                for grain, ms in GRAINS.items():
                    deltas.activity[(grain, bucket_of(ts, ms), s.target, s.profile)][0] -= n
                deltas.principal[(bucket_of(ts, DAY_MS), s.principal or "")][0] -= n
            for s in sessions.values():
                principals.note_lost(
                    deltas.recheck, s.principal, s.first_ts, s.last_ts, s.created_at
                )
                deltas.last_active(s, s.stored_last, -1)
                if s.created_at is not None:
                    deltas.session_created(s, -1)
            keys = [s.key for s in sessions.values()]
            gone = _load_calls(side, f"c.session IN ({placeholders(len(keys))})", keys)
            for c in gone:
                deltas.call(c, -1)
            side.execute(
                f"DELETE FROM rollup_call WHERE session IN ({placeholders(len(keys))})", keys
            )
            for table in ("rollup_session", "rollup_session_hour"):
                side.execute(f"DELETE FROM {table} WHERE session_id IN ({marks})", bound)
            _drop_unused_names(side, gone)
        apply(side, deltas)
        _stamp(side)

    def forget_messages(self, side: sqlite3.Connection, message_ids: Sequence[int]) -> None:
        """Drop the calls these messages belong to (a call loses both rows at once).

        Message counts are kept per session and hour, not per message, so they
        are corrected only when the session itself is forgotten; the runtime
        deletes whole sessions, never single messages, so this reads the
        per-call table through (no index by message id is kept for it).
        """
        ids = list(dict.fromkeys(message_ids))
        deltas = Deltas()
        for chunk in chunks(ids):
            marks = placeholders(len(chunk))
            where = f"c.first_id IN ({marks}) OR c.second_id IN ({marks})"
            doomed = _load_calls(side, where, chunk + chunk)
            for c in doomed:
                deltas.call(c, -1)
            side.executemany("DELETE FROM rollup_call WHERE id = ?", [(c.rowid,) for c in doomed])
            _drop_unused_names(side, doomed)
        apply(side, deltas)
        _stamp(side)


def _create_each(side: sqlite3.Connection) -> None:
    """The DDL one statement at a time (``executescript`` would commit the caller's
    transaction)."""
    for statement in DDL.split(";"):
        if statement.strip():
            side.execute(statement)


def _floor_sql(column: str, ms: int) -> str:
    """``column // ms`` as Python floors it (SQLite's ``/`` truncates towards zero)."""
    return f"CASE WHEN {column} >= 0 THEN {column} / {ms} ELSE ({column} + 1) / {ms} - 1 END"


def _backfill(side: sqlite3.Connection, existing: set[str]) -> None:
    """Fill tables added by a newer version from the per-call and per-session rows,
    so an upgrade does not need a rebuild from the store."""
    for grain, ms in GRAINS.items():
        if f"rollup_duration_{grain}" not in existing:
            side.execute(
                f"INSERT INTO rollup_duration_{grain} (tool, bucket, band, n) "
                f"SELECT t.name, {_floor_sql('c.ts', ms)}, c.band, count(*) FROM rollup_call AS c "
                "JOIN rollup_tools AS t ON t.key = c.tool "
                "WHERE c.duration_ms IS NOT NULL GROUP BY 1, 2, 3"
            )
        if f"rollup_last_{grain}" not in existing:
            side.execute(
                f"INSERT INTO rollup_last_{grain} (bucket, target, profile, sessions) "
                f"SELECT {_floor_sql('last_ts', ms)}, target, profile, count(*) "
                "FROM rollup_session WHERE last_ts IS NOT NULL GROUP BY 1, 2, 3"
            )
    if "rollup_principal" not in existing:
        principals.backfill(side)
    if "rollup_duration_all" not in existing:
        side.execute(
            "INSERT INTO rollup_duration_all (tool, band, n) SELECT t.name, c.band, count(*) "
            "FROM rollup_call AS c JOIN rollup_tools AS t ON t.key = c.tool "
            "WHERE c.duration_ms IS NOT NULL GROUP BY 1, 2"
        )


def _stamp(side: sqlite3.Connection) -> None:
    side.execute(
        "INSERT INTO rollup_meta (key, value) VALUES ('computed_at', ?) "
        "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        [clock.now_ms()],
    )


def _load_sessions(side: sqlite3.Connection, ids: set[str]) -> dict[str, Session]:
    found: dict[str, Session] = {}
    for chunk in chunks(ids):
        rows = side.execute(
            "SELECT session_id, target, profile, principal, first_ts, last_ts, messages, "
            f"created_at, key FROM rollup_session WHERE session_id IN ({placeholders(len(chunk))})",
            [bind_id(sid) for sid in chunk],
        )
        for sid, *rest, key in rows:
            found[read_id(sid)] = session = Session(*rest)
            session.stored_last = session.last_ts
            session.key = key
    return found


#: A call as the listener holds it: rollup_call with its names read back (call_names).
_CALL_COLUMNS = (
    "c.id, t.name, p.target, p.profile, s.principal, c.ts, c.duration_ms, c.failed, "
    "c.first_id, c.second_id, c.link_id, c.result_head"
)


def _call_from_row(row: tuple) -> Call:
    rowid, *rest = row
    call = Call(rowid, *rest, dirty=False)
    call.failed = bool(call.failed)
    return call


def _load_calls(side: sqlite3.Connection, where: str, params: list) -> list[Call]:
    rows = side.execute(
        f"SELECT {_CALL_COLUMNS} FROM rollup_call AS c {call_names()} WHERE {where}", params
    )
    return [_call_from_row(row) for row in rows]


def _drop_unused_names(side: sqlite3.Connection, gone: Iterable[Call]) -> None:
    """Names of tools whose last call just went (one probe of the tool index each).

    Places (target and profile pairs) stay: no index finds a place's calls, and
    a store has few of them (``--rebuild`` clears any left over).
    """
    side.executemany(
        "DELETE FROM rollup_tools WHERE name = ? AND NOT EXISTS "
        "(SELECT 1 FROM rollup_call WHERE tool = rollup_tools.key)",
        [(tool,) for tool in sorted({c.tool for c in gone})],
    )


def _known_calls(
    side: sqlite3.Connection, batch: Sequence[FeedMessage], sessions: dict[str, Session]
) -> tuple[dict[tuple[str, str], Call], dict[tuple[str, str], int]]:
    """The calls already stored that rows of this batch may complete, in one query,
    and the digests computed on the way (for :func:`_write_calls`).

    A call id seen in an earlier batch means this row is that call's other
    half (its session is then stored: ``sessions`` holds it); the keys go
    into a temporary table and one join on the call key's unique index finds
    them (not one SELECT per tool row).
    """
    wanted: dict[tuple[int | None, int], tuple[str, str]] = {}
    digests: dict[tuple[str, str], int] = {}
    for m in batch:
        if m.session_id in sessions and is_tool_call(m.tool_name):
            key = call_key(m.id, m.tool_call_id)
            if key.startswith("c:"):
                digest = digests[(m.session_id, key)] = call_digest(m.session_id, key)
                wanted[(sessions[m.session_id].key, digest)] = (m.session_id, key)
    if not wanted:
        return {}, digests
    side.execute("CREATE TEMP TABLE IF NOT EXISTS rollup_wanted (session INTEGER, call_id INTEGER)")
    side.execute("DELETE FROM rollup_wanted")
    side.executemany("INSERT INTO rollup_wanted VALUES (?, ?)", list(wanted))
    rows = side.execute(
        f"SELECT w.session, w.call_id, {_CALL_COLUMNS} FROM rollup_wanted AS w "
        "CROSS JOIN rollup_call AS c ON c.session = w.session AND c.call_id = w.call_id "
        f"{call_names()}"
    )
    known = {wanted[(session, digest)]: _call_from_row(row) for session, digest, *row in rows}
    return known, digests


def _take_call(
    calls: dict[tuple[str, str], Call],
    deltas: Deltas,
    s: Session,
    m: FeedMessage,
) -> None:
    """A new call, or the second row of one already seen (same session, same call id)."""
    key = (m.session_id, call_key(m.id, m.tool_call_id))
    failed = m.failed if m.failed is not None else reports_error(m.tool_result)
    call = calls.get(key)
    if call is None:
        calls[key] = call = Call(
            None,
            m.tool_name or "",
            s.target,
            s.profile,
            s.principal,
            m.ts if m.ts is not None else NO_TIME,
            m.tool_duration_ms,
            failed,
            m.id,
            None,
            m.id,
            _head(m.tool_result) if failed else None,
        )
        deltas.call(call, 1)
        return
    # The call's other row: the call keeps its first row's tool, time and cell,
    # takes the longer duration, and fails if either row reports an error.
    deltas.call(call, -1, count=False)
    if m.tool_duration_ms is not None and (
        call.duration_ms is None or m.tool_duration_ms > call.duration_ms
    ):
        call.duration_ms = m.tool_duration_ms
    call.failed = call.failed or failed
    call.second_id = m.id
    if m.tool_result is not None:
        call.link_id = m.id
        call.result_head = _head(m.tool_result) if call.failed else None
    call.dirty = True
    deltas.call(call, 1, count=False)


def _write_sessions(side: sqlite3.Connection, sessions: dict[str, Session]) -> None:
    """Upsert the sessions' rows; those new to the table learn their key."""
    side.executemany(
        "INSERT INTO rollup_session (session_id, target, profile, principal, first_ts, last_ts, "
        "messages, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE "
        "SET first_ts = excluded.first_ts, last_ts = excluded.last_ts, "
        "messages = excluded.messages, created_at = excluded.created_at",
        [
            (bind_id(sid), s.target, s.profile, s.principal, s.first_ts, s.last_ts, s.messages)
            + (s.created_at,)
            for sid, s in sessions.items()
        ],
    )
    new = [bind_id(sid) for sid, s in sessions.items() if s.key is None]
    for chunk in chunks(new):
        for sid, key in side.execute(
            f"SELECT session_id, key FROM rollup_session WHERE session_id IN "
            f"({placeholders(len(chunk))})",
            chunk,
        ):
            sessions[read_id(sid)].key = key


def _name_keys(
    side: sqlite3.Connection, table: str, columns: str, names: set[tuple]
) -> dict[tuple, int]:
    """The keys of these names in ``rollup_tools`` or ``rollup_places``, adding the new ones."""
    if not names:
        return {}
    wanted = sorted(names)
    width = len(wanted[0])
    marks = ", ".join("?" * width)
    side.executemany(f"INSERT OR IGNORE INTO {table} ({columns}) VALUES ({marks})", wanted)
    found: dict[tuple, int] = {}
    match = " AND ".join(f"{column} = ?" for column in columns.split(", "))
    for name in wanted:
        found[name] = side.execute(f"SELECT key FROM {table} WHERE {match}", name).fetchone()[0]
    return found


def _write_calls(
    side: sqlite3.Connection,
    calls: Iterable[tuple[tuple[str, str], Call]],
    sessions: dict[str, Session],
    digests: dict[tuple[str, str], int],
) -> None:
    dirty = [(ident, c) for ident, c in calls if c is not None and c.dirty]
    fresh = [c for _, c in dirty if c.rowid is None]
    tools = _name_keys(side, "rollup_tools", "name", {(c.tool,) for c in fresh})
    places = _name_keys(
        side, "rollup_places", "target, profile", {(c.target, c.profile) for c in fresh}
    )
    new, changed = [], []
    for (sid, key), c in dirty:
        band = None if c.duration_ms is None else duration_band(c.duration_ms)
        values = (
            c.duration_ms,
            band,
            int(c.failed),
            c.second_id,
            c.link_id,
            c.result_head,
        )
        if c.rowid is None:
            digest = digests.get((sid, key))
            if digest is None:
                digest = call_digest(sid, key)
            new.append(
                (
                    sessions[sid].key,
                    digest,
                    tools[(c.tool,)],
                    places[(c.target, c.profile)],
                    c.ts,
                    c.first_id,
                    *values,
                )
            )
        else:
            changed.append((*values, c.rowid))
    side.executemany(
        "INSERT INTO rollup_call (session, call_id, tool, place, ts, first_id, duration_ms, "
        "band, failed, second_id, link_id, result_head) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        new,
    )
    side.executemany(
        "UPDATE rollup_call SET duration_ms = ?, band = ?, failed = ?, second_id = ?, link_id = ?, "
        "result_head = ? WHERE id = ?",
        changed,
    )
