"""``sync_index --verify``: the side index and the rollups against a brute-force reading.

Everything in the side database is derived from the store, so it can be
checked against it. This reads the store whole (sessions, messages per
session, every tool call; minutes on ten million messages) and compares:

* sessions: the same ids in the index, the rollups and the sync's own
  bookkeeping; each one's target, profile, principal and folded title;
* messages per session, in the search index and in the rollups;
* tool calls: the same calls with the same tool, time and failure in
  ``rollup_call``, and every per-tool cell (hour and day, by target and
  profile: calls and errors) equal to those calls added up;
* principals: each ``rollup_principal`` row equal to its sessions, messages,
  calls, errors and first and last activity counted in the store, and to its
  per-day rows added up.

The runtime keeps writing while this reads, so only what the last pass could
have seen is compared: messages up to its mark, and session rows whose digest
is the one the pass kept. Rows edited, added or deleted since are counted as
*pending* (the next pass takes them in), not as drift.
"""

from __future__ import annotations

import sqlite3
from collections import Counter, defaultdict
from collections.abc import Container, Iterable
from dataclasses import dataclass, field

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.fleet.dirty import publishing
from sessions_admin.ourdata.fleet.models import TITLE_CHARS, FleetHost, FleetSession, exact_key
from sessions_admin.ourdata.fleet.publish import shown
from sessions_admin.ourdata.index.text import FIELD_SEPARATOR, fold
from sessions_admin.ourdata.rollups.listener import call_digest
from sessions_admin.ourdata.rollups.principals import key_of
from sessions_admin.ourdata.rollups.schema import GRAINS, NO_TIME, bucket_of, call_names
from sessions_admin.ourdata.storename import current_store
from sessions_admin.ourdata.sync import prepare, read_state
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedSession, MessageStats, Undecodable

#: Drift lines kept per kind (the count is always exact).
SHOWN_PER_KIND = 20


@dataclass
class Verdict:
    """What ``--verify`` found: drift per kind, and what is merely pending."""

    drift: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    counts: Counter = field(default_factory=Counter)
    pending: int = 0
    sessions: int = 0
    calls: int = 0
    last_id: int = feed.BEFORE_FIRST_ID

    def add(self, kind: str, line: str) -> None:
        self.counts[kind] += 1
        if len(self.drift[kind]) < SHOWN_PER_KIND:
            self.drift[kind].append(line)

    @property
    def ok(self) -> bool:
        return not self.counts

    def lines(self) -> list[str]:
        out = []
        for kind, n in sorted(self.counts.items()):
            out.append(f"{kind}: {n:,} drifted")
            out.extend(f"  {line}" for line in self.drift[kind])
            if n > len(self.drift[kind]):
                out.append(f"  … and {n - len(self.drift[kind]):,} more")
        return out


def _as_text(value: object) -> object:
    """A store value as the side's text columns keep it (:class:`Undecodable`: as read)."""
    return str(value) if isinstance(value, Undecodable) else value


def _side_sessions(side: sqlite3.Connection) -> dict[str, tuple]:
    return {
        sidedb.read_id(row[0]): row[1:]
        for row in side.execute(
            "SELECT id, target_key, profile_key, principal_id, fold FROM search_sessions"
        )
    }


@dataclass
class _Settled:
    """The session rows the last pass saw as they are now, and the principals of the
    others (new, edited or deleted since: their totals wait for the next pass)."""

    rows: dict[str, FeedSession] = field(default_factory=dict)
    waiting: set[str] = field(default_factory=set)
    #: Ids of the sessions new, edited or deleted since the last pass.
    unsettled: set[str] = field(default_factory=set)


def _check_sessions(side: sqlite3.Connection, verdict: Verdict) -> _Settled:
    """Compare every session row the last pass saw as it is now."""
    kept = {
        sidedb.read_id(sid): sig for sid, sig in side.execute("SELECT id, sig FROM sync_sessions")
    }
    indexed = _side_sessions(side)
    rolled = {
        sidedb.read_id(row[0]): row[1:]
        for row in side.execute("SELECT session_id, target, profile, principal FROM rollup_session")
    }
    settled = _Settled()
    for row in feed.all_sessions():
        verdict.sessions += 1
        if kept.pop(row.id, None) != row.sig:
            verdict.pending += 1  # new or edited since the last pass
            settled.unsettled.add(row.id)
            indexed.pop(row.id, None)
            held = rolled.pop(row.id, None)
            settled.waiting.add(key_of(row.principal_id))
            if held is not None:
                settled.waiting.add(key_of(held[2]))
            continue
        settled.rows[row.id] = row
        # The side holds target, profile and principal as text, as the filters compare
        # them: TEXT that is not UTF-8 as it reads, with U+FFFD for its bad bytes.
        want = tuple(_as_text(v) for v in (row.target_key, row.profile_key, row.principal_id))
        folded = fold(row.title or "") + FIELD_SEPARATOR + fold(row.id)
        have = indexed.pop(row.id, None)
        if have is None:
            verdict.add("sessions", f"{row.id!r}: in the store, not in the index")
        elif have != (*want, folded):
            verdict.add("sessions", f"{row.id!r}: index holds {have!r}, store {(*want, folded)!r}")
        held = rolled.pop(row.id, None)
        if held is not None and held != ((want[0] or ""), (want[1] or ""), want[2]):
            verdict.add("sessions", f"{row.id!r}: rollups hold {held!r}, store {want!r}")
    verdict.pending += len(kept)  # deleted since the last pass
    settled.unsettled.update(kept)
    settled.waiting.update(key_of(rolled[sid][2]) for sid in kept.keys() & rolled.keys())
    for sid in indexed.keys() - kept.keys():
        verdict.add("sessions", f"{sid!r}: in the index, not in the store")
    for sid in rolled.keys() - kept.keys():
        verdict.add("sessions", f"{sid!r}: in the rollups, not in the store")
    return settled


def _check_messages(
    side: sqlite3.Connection, settled: _Settled, stats: dict[str, MessageStats], verdict: Verdict
) -> None:
    index = {
        sidedb.read_id(sid): n
        for sid, n in side.execute(
            "SELECT s.id, count(*) FROM search_messages AS m "
            "JOIN search_sessions AS s ON s.key = m.session GROUP BY s.id"
        )
    }
    rollups = {
        sidedb.read_id(sid): n
        for sid, n in side.execute("SELECT session_id, messages FROM rollup_session")
    }
    for sid in sorted(settled.rows):
        want = stats[sid].count if sid in stats else 0
        for where, have in (("index", index.get(sid, 0)), ("rollups", rollups.get(sid, 0))):
            if have != want:
                verdict.add("messages", f"{sid!r}: {where} counts {have:,}, store {want:,}")


def _cells(calls: Iterable[tuple[str, int, str, str, bool]]) -> dict[tuple, list[int]]:
    cells: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for tool, ts, target, profile, failed in calls:
        for grain, ms in GRAINS.items():
            bucket = bucket_of(None if ts == NO_TIME else ts, ms)
            cell = cells[(grain, bucket, tool, target, profile)]
            cell[0] += 1
            cell[1] += bool(failed)
    return cells


#: rollup_call with the names its keys stand for. A LEFT JOIN: a key whose name is
#: missing reads as None and shows up as a drift instead of hiding its call.
CALLS_NAMED = f"rollup_call AS c {call_names('LEFT JOIN')}"


def _check_calls(
    side: sqlite3.Connection,
    settled: Container[str],
    store: dict[tuple[str, str], tuple],
    verdict: Verdict,
) -> None:
    held = {
        (sidedb.read_id(sid), digest): (tool, ts, bool(failed), target, profile)
        for sid, digest, tool, ts, failed, target, profile in side.execute(
            f"SELECT s.session_id, c.call_id, t.name, c.ts, c.failed, p.target, p.profile "
            f"FROM {CALLS_NAMED}"
        )
    }
    verdict.calls = len(store)
    dangling = side.execute(
        "SELECT count(*) FILTER (WHERE s.key IS NULL), count(*) FILTER (WHERE t.key IS NULL), "
        f"count(*) FILTER (WHERE p.key IS NULL) FROM {CALLS_NAMED}"
    ).fetchone()
    for what, n in zip(("session", "tool", "target and profile"), dangling, strict=True):
        if n:
            verdict.add("calls", f"{n:,} calls name a {what} key that has no row")
    for (sid, key), (tool, ts, failed) in store.items():
        digest = call_digest(sid, key)
        if sid not in settled:
            held.pop((sid, digest), None)
            continue
        have = held.pop((sid, digest), None)
        want = (tool, NO_TIME if ts is None else ts, failed)
        if have is None:
            verdict.add("calls", f"{sid!r} {key}: {tool} in the store, not in the rollups")
        elif have[:3] != want:
            verdict.add("calls", f"{sid!r} {key}: rollups hold {have[:3]!r}, store {want!r}")
    for (sid, digest), have in held.items():
        if sid in settled:
            verdict.add(
                "calls", f"{sid!r} call #{digest}: {have[0]} in the rollups, not in the store"
            )
    _check_cells(side, verdict)


def _check_cells(side: sqlite3.Connection, verdict: Verdict) -> None:
    """Every per-tool cell equals the calls ``rollup_call`` holds, added up."""
    want = _cells(
        side.execute(
            f"SELECT t.name, c.ts, p.target, p.profile, c.failed FROM {CALLS_NAMED}"
        ).fetchall()
    )
    for grain in GRAINS:
        for bucket, tool, target, profile, calls, errors in side.execute(
            f"SELECT bucket, tool, target, profile, calls, errors FROM rollup_tool_{grain}"
        ):
            key = (grain, bucket, tool, target, profile)
            expected = want.pop(key, [0, 0])
            if [calls, errors] != expected and (calls or errors or any(expected)):
                verdict.add(
                    "tool cells",
                    f"{tool} {grain} {bucket} {target}/{profile}: calls, errors {calls:,}, "
                    f"{errors:,}; "
                    f"its calls add up to {expected[0]:,}, {expected[1]:,}",
                )
    for (grain, bucket, tool, target, profile), (calls, _) in want.items():
        verdict.add(
            "tool cells",
            f"{tool} {grain} {bucket} {target}/{profile}: no cell for {calls:,} calls",
        )


def _store_principals(
    settled: _Settled, stats: dict[str, MessageStats], calls: dict[tuple[str, str], tuple]
) -> dict[str, tuple]:
    """Each principal's totals counted in the store, as ``rollup_principal`` keeps them:
    sessions, messages, calls, errors, first and last activity (``NO_TIME``: none)."""
    totals: dict[str, list] = defaultdict(lambda: [0, 0, 0, 0, None, None])
    for sid, row in settled.rows.items():
        total = totals[key_of(row.principal_id)]
        own = stats.get(sid, MessageStats())
        total[0] += 1
        total[1] += own.count
        times = [t for t in (row.created_at, own.first, own.last) if t not in (None, NO_TIME)]
        if times:
            total[4] = min(times) if total[4] is None else min(total[4], *times)
            total[5] = max(times) if total[5] is None else max(total[5], *times)
    for (sid, _), (_, _, failed) in calls.items():
        row = settled.rows.get(sid)
        if row is not None:
            total = totals[key_of(row.principal_id)]
            total[2] += 1
            total[3] += bool(failed)
    return {p: (*t[:5], NO_TIME if t[5] is None else t[5]) for p, t in totals.items()}


def _check_principals(
    side: sqlite3.Connection, want: dict[str, tuple], waiting: set[str], verdict: Verdict
) -> None:
    """Every principal's totals row equals the store's count (the principals of rows
    changed since the last pass wait for it) and its per-day rows added up."""
    days = {
        row[0]: row[1:]
        for row in side.execute(
            "SELECT principal, sum(sessions), sum(messages), sum(calls), sum(errors) "
            "FROM rollup_principal_day GROUP BY principal"
        )
    }
    for principal, *have in side.execute(
        "SELECT principal, sessions, messages, calls, errors, first_ts, last_ts "
        "FROM rollup_principal"
    ):
        expected, summed = want.pop(principal, None), days.pop(principal, None)
        if principal not in waiting and tuple(have) != expected:
            verdict.add("principals", f"{principal!r}: totals {tuple(have)!r}, store {expected!r}")
        if summed != tuple(have[:4]):
            verdict.add(
                "principal days",
                f"{principal!r}: totals {tuple(have[:4])!r}, its days add up to {summed!r}",
            )
    for principal in want.keys() - waiting:
        verdict.add("principals", f"{principal!r}: no totals row for {want[principal]!r}")
    for principal, summed in days.items():
        if any(summed):
            verdict.add("principal days", f"{principal!r}: no totals row for days {summed!r}")


def verify(side: sqlite3.Connection | None = None) -> Verdict:
    """Compare the side database with the store as it is now.

    Holds the writer's lock (:func:`sidedb.pass_lock`) so no pass moves the
    side database while it is read; raises ``PassRunning`` if one is running.
    """
    with sidedb.pass_lock():
        own = side is None
        side = side or sidedb.connect()
        try:
            prepare(side)
            return _verify(side)
        finally:
            if own:
                side.close()


def _verify(side: sqlite3.Connection) -> Verdict:
    verdict = Verdict(last_id=read_state(side).last_id)
    settled = _check_sessions(side, verdict)
    stats = feed.message_stats(verdict.last_id, NO_TIME)
    calls = feed.calls(verdict.last_id)
    _check_messages(side, settled, stats, verdict)
    _check_calls(side, settled.rows.keys(), calls, verdict)
    want = _store_principals(settled, stats, calls)
    _check_principals(side, want, settled.waiting, verdict)
    _check_directory(side, settled, stats, verdict)
    return verdict


def _check_directory(
    side: sqlite3.Connection, settled: _Settled, stats: dict[str, MessageStats], verdict: Verdict
) -> None:
    """The fleet's directory holds this host's sessions as the store does (when it publishes):
    sessions noted and not yet published are pending, not drift."""
    if not publishing():
        return
    host = FleetHost.objects.filter(store_name=current_store()).first()
    if host is None:
        verdict.add("directory", "this host has not published to the fleet's directory yet")
        return
    noted = {exact_key(sidedb.read_id(r[0])) for r in side.execute("SELECT id FROM fleet_dirty")}
    have = {
        key: rest
        for key, *rest in FleetSession.objects.filter(host=host).values_list(
            "key",
            "target",
            "profile",
            "principal",
            "title",
            "created_at",
            "last_active",
            "messages",
        )  # fmt: skip
    }
    verdict.pending += len(noted)
    for sid, row in settled.rows.items():
        key = exact_key(sid)
        if key in noted:
            continue
        want = [
            shown(row.target_key), shown(row.profile_key), shown(row.principal_id),
            shown(row.title, TITLE_CHARS), row.created_at, row.last_active,
            stats[sid].count if sid in stats else 0,
        ]  # fmt: skip
        found = have.pop(key, None)
        if found is None:
            verdict.add("directory", f"{sid!r}: in the store, not in the directory")
        elif found != want:
            verdict.add("directory", f"{sid!r}: directory holds {found!r}, store {want!r}")
    # Rows of sessions new, edited or deleted since the last pass wait for the next one.
    waiting = {exact_key(sid) for sid in settled.unsettled}
    for key in have.keys() - noted - waiting:
        verdict.add("directory", f"session key {key[:12]}…: in the directory, not in the store")
