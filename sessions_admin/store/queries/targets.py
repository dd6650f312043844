"""The targets page: each (target, profile) pair, its count and latest activity, by index seeks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime

from sessions_admin.sqlhelpers import placeholders
from sessions_admin.store.cliptext import clipped_sql
from sessions_admin.store.connection import run_sql, time_limit
from sessions_admin.store.timeutil import from_epoch_ms
from sessions_admin.store.values import (
    as_id,
    as_time,
)


@dataclass(frozen=True)
class TargetProfile:
    target_key: str
    profile_key: str
    sessions: int
    last_active: int
    #: ``sessions`` is the count the caller knew (the rollups' at their last pass).
    counted_before: bool = False

    @property
    def last_active_at(self) -> datetime | None:
        return from_epoch_ms(self.last_active)


@dataclass
class TargetSummary:
    target_key: str
    profiles: list[TargetProfile]

    @property
    def sessions(self) -> int:
        return sum(p.sessions for p in self.profiles)

    @property
    def last_active_at(self) -> datetime | None:
        return max((p.last_active_at for p in self.profiles if p.last_active_at), default=None)


#: Above this many (target, profile) pairs one grouped scan beats a count per pair.
MAX_COUNTED_PAIRS = 400

#: Counts given per page at most (three parameters each: SQLite allows 32,766).
MAX_KNOWN_PAIRS = 2 * MAX_COUNTED_PAIRS

# Every distinct (target, profile) by seeks on idx_session_target_profile (a
# skip scan written as a recursive CTE: the next profile of this target, else
# the first of the next target), then per pair its count (the caller's, in
# ``known``, else a COUNT(*) over its slice of the index) and a seek for its
# latest last_active. One statement, so the keys never leave SQLite and any
# storage class is compared as stored (a count given for text never matches a
# BLOB key, nor TEXT that is not UTF-8).
_PAIRS_SQL = f"""
WITH RECURSIVE known(t, p, n) AS ({{known}}),
pair(t, p) AS (
  SELECT t, (SELECT MIN(profile_key) FROM sessions WHERE target_key = t)
    FROM (SELECT (SELECT MIN(target_key) FROM sessions) AS t) WHERE t IS NOT NULL
  UNION ALL
  SELECT
    CASE WHEN (SELECT MIN(profile_key) FROM sessions
                WHERE target_key = pair.t AND profile_key > pair.p) IS NULL
         THEN (SELECT MIN(target_key) FROM sessions WHERE target_key > pair.t)
         ELSE pair.t END AS next_t,
    COALESCE(
      (SELECT MIN(profile_key) FROM sessions WHERE target_key = pair.t AND profile_key > pair.p),
      (SELECT MIN(profile_key) FROM sessions
        WHERE target_key = (SELECT MIN(target_key) FROM sessions WHERE target_key > pair.t)))
  FROM pair WHERE next_t IS NOT NULL
)
SELECT {clipped_sql("pc.t")}, {clipped_sql("pc.p")},
  COALESCE(pc.known,
    (SELECT COUNT(*) FROM sessions WHERE target_key = pc.t AND profile_key = pc.p)),
  (SELECT last_active FROM sessions WHERE target_key = pc.t AND profile_key = pc.p
    ORDER BY last_active DESC LIMIT 1),
  pc.known IS NOT NULL
FROM (
  SELECT t, p, (SELECT n FROM known WHERE known.t = pair.t AND known.p = pair.p) AS known
  FROM pair LIMIT {MAX_COUNTED_PAIRS + 1}
) AS pc
"""


def _target_rows(known: Mapping[tuple[str, str], int]) -> list[tuple]:
    """(target, profile, sessions, last active, count known) per pair, clipped for the page.

    Pair by pair (:data:`_PAIRS_SQL`): 25-50 ms for the 48 pairs of the
    500,000-session bench store where one ``GROUP BY`` over the whole index
    took 60-240 ms in the same minutes (it compares every entry's keys with
    the last one's and reads every ``last_active``); about 1 ms when every
    count is known. A store with more pairs than :data:`MAX_COUNTED_PAIRS`
    gets the grouped scan, every count exact.
    """
    given = list(known.items())[:MAX_KNOWN_PAIRS]
    values = ", ".join(f"({placeholders(3)})" for _ in given) if given else None
    sql = _PAIRS_SQL.replace("{known}", f"VALUES {values}" if values else "SELECT 1, 1, 1 WHERE 0")
    rows = run_sql(sql, [v for (t, p), n in given for v in (t, p, n)])
    if len(rows) <= MAX_COUNTED_PAIRS:
        # A pair the runtime emptied is no pair, whatever count was known for it.
        return [(t, p, n, last, bool(k)) for t, p, n, last, k in rows if last is not None]
    return run_sql(
        f"SELECT {clipped_sql('target_key')}, {clipped_sql('profile_key')}, COUNT(*), "
        "MAX(last_active), 0 FROM sessions "
        "GROUP BY target_key, profile_key ORDER BY target_key, profile_key",
        [],
    )


def targets_overview(
    known: Mapping[tuple[str, str], int] | None = None, *, time_limit_ms: int | None = None
) -> list[TargetSummary]:
    """Each target with its profiles, counts and last activity, live from the store;
    a pair's count is taken from ``known`` (sessions per (target, profile), e.g. the
    rollups' as of their last pass) where it has one, and marked as such."""
    with time_limit(time_limit_ms):
        rows = _target_rows(known or {})
    summaries: dict[str, TargetSummary] = {}
    for raw_target, raw_profile, count, last, counted_before in rows:
        target, profile = as_id(raw_target), as_id(raw_profile)
        summary = summaries.setdefault(target, TargetSummary(target, []))
        summary.profiles.append(
            TargetProfile(target, profile, count, as_time(last), bool(counted_before))  # type: ignore[arg-type]
        )
    return list(summaries.values())
