"""The rollups' tables in the side database, and the time grains they are kept at.

Every table is prefixed ``rollup_``. Times are epoch milliseconds; an hour
bucket is ``ts // HOUR_MS``, a day bucket ``ts // DAY_MS`` (UTC). A message
whose ``ts`` is not a whole number lands in bucket :data:`NO_TIME` and counts
only in the ``all`` window (a call's ``ts`` is then stored as ``NO_TIME``, which
``ts // grain`` puts in that same bucket).

* ``rollup_call``: one row per tool call (call and result rows merged),
  the per-call table behind a tool's page and the exact percentiles; its
  session, tool, and target and profile are integer keys into
  ``rollup_session``, ``rollup_tools`` and ``rollup_places``;
* ``rollup_tool_hour`` / ``rollup_tool_day``: calls, errors, timed calls,
  total and max duration per bucket x tool x target x profile;
* ``rollup_activity_hour`` / ``rollup_activity_day``: messages written and
  sessions created (by the session row's ``created_at``) per bucket x target
  x profile;
* ``rollup_principal_day``: messages, sessions created, calls and errors
  per day x principal;
* ``rollup_principal``: the same summed over all time per principal, with
  its folded text and first and last activity (the ``/principals/`` list,
  kept by :mod:`.principals`);
* ``rollup_duration_hour`` / ``_day`` / ``_all``: calls per tool and
  duration band (about 5 % wide), per hour, per day and over all time;
* ``rollup_last_hour`` / ``rollup_last_day``: sessions per bucket of their
  latest message x target x profile (sessions active in a window);
* ``rollup_session`` and ``rollup_session_hour``: what each session
  contributed, so that forgetting a session subtracts exactly that;
* ``rollup_meta``: when the figures were last computed.
"""

from __future__ import annotations

from bisect import bisect_right

HOUR_MS = 3_600_000
DAY_MS = 86_400_000
NO_TIME = -1
#: Characters of a failed call's result kept (the error groups), and of args and
#: result shown in a tool page's rows (read from the store).
HEAD_CHARS = 160
#: Characters of a head read from the store for a page: a finding that starts within
#: HEAD_CHARS is read whole, masked, and then the head is cut (``masking.shorten``).
HEAD_READ_CHARS = HEAD_CHARS + 1024

GRAINS = {"hour": HOUR_MS, "day": DAY_MS}

#: In SQL on ``rollup_call``: the integer its ``tool`` holds for the tool name bound
#: to it (NULL, so nothing matches, when no call has that name).
TOOL_KEY = "(SELECT key FROM rollup_tools WHERE name = ?)"


def call_names(join: str = "JOIN") -> str:
    """The joins that read ``rollup_call AS c``'s keys back: ``s`` its session's row,
    ``t`` its tool, ``p`` its target and profile. ``LEFT JOIN`` keeps a call whose
    key names no row (what ``sync_index --verify`` looks for)."""
    return " ".join(
        f"{join} {table} AS {alias} ON {alias}.key = c.{column}"
        for table, alias, column in (
            ("rollup_session", "s", "session"),
            ("rollup_tools", "t", "tool"),
            ("rollup_places", "p", "place"),
        )
    )


def _duration_edges(ratio: float = 1.05, top: int = 10**13) -> list[int]:
    edges = [1]
    while edges[-1] < top:
        edges.append(max(edges[-1] + 1, int(edges[-1] * ratio + 0.999999)))
    return edges


#: Lower edges (ms) of the duration bands: band b >= 1 holds [EDGES[b-1], EDGES[b]);
#: band 0 holds anything under 1 ms. About 5 % wide, so a band is a small
#: slice of any tool's calls and the exact value inside it is a short walk.
DURATION_EDGES = _duration_edges()


def duration_band(duration_ms: int) -> int:
    return bisect_right(DURATION_EDGES, duration_ms)


def band_floor(band: int) -> int | None:
    """The smallest duration in a band (None for band 0: no lower bound)."""
    return None if band <= 0 else DURATION_EDGES[band - 1]


TABLES = (
    "rollup_meta",
    "rollup_call",
    "rollup_tools",
    "rollup_places",
    "rollup_tool_hour",
    "rollup_tool_day",
    "rollup_activity_hour",
    "rollup_activity_day",
    "rollup_principal_day",
    "rollup_principal",
    "rollup_session",
    "rollup_session_hour",
    "rollup_duration_hour",
    "rollup_duration_day",
    "rollup_duration_all",
    "rollup_last_hour",
    "rollup_last_day",
)

_TOOL_CELLS = """
CREATE TABLE IF NOT EXISTS rollup_tool_{grain} (
  bucket INTEGER NOT NULL, tool TEXT NOT NULL, target TEXT NOT NULL, profile TEXT NOT NULL,
  calls INTEGER NOT NULL, errors INTEGER NOT NULL, timed INTEGER NOT NULL,
  total_ms INTEGER NOT NULL, max_ms INTEGER,
  PRIMARY KEY (bucket, tool, target, profile)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_duration_{grain} (
  bucket INTEGER NOT NULL, tool TEXT NOT NULL, band INTEGER NOT NULL, n INTEGER NOT NULL,
  PRIMARY KEY (tool, bucket, band)
) WITHOUT ROWID;
-- Sessions by the bucket of their latest message: "active since" is a sum.
CREATE TABLE IF NOT EXISTS rollup_last_{grain} (
  bucket INTEGER NOT NULL, target TEXT NOT NULL, profile TEXT NOT NULL,
  sessions INTEGER NOT NULL,
  PRIMARY KEY (bucket, target, profile)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_activity_{grain} (
  bucket INTEGER NOT NULL, target TEXT NOT NULL, profile TEXT NOT NULL,
  messages INTEGER NOT NULL, sessions INTEGER NOT NULL,
  PRIMARY KEY (bucket, target, profile)
) WITHOUT ROWID;
"""

DDL = (
    """
CREATE TABLE IF NOT EXISTS rollup_meta (key TEXT PRIMARY KEY, value INTEGER) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_call (
  id INTEGER PRIMARY KEY,
  -- The call's session (rollup_session.key), tool (rollup_tools.key) and target
  -- and profile (rollup_places.key): small integers instead of the texts, which
  -- were 72 of a call's 126 bytes and again in every index.
  session INTEGER NOT NULL,
  -- The call's identity: 64 bits of BLAKE2b over its session id and call key
  -- (listener.call_digest), an 8-byte key instead of the two texts (60 bytes).
  call_id INTEGER NOT NULL,
  tool INTEGER NOT NULL,
  place INTEGER NOT NULL,
  ts INTEGER,
  duration_ms INTEGER,
  failed INTEGER NOT NULL,
  band INTEGER,
  first_id INTEGER NOT NULL,
  second_id INTEGER,
  link_id INTEGER NOT NULL,
  -- A failed call's result, cut to HEAD_CHARS (what the error groups read), NULL for
  -- the others: the tool page reads its rows' heads from the store.
  result_head TEXT
);
-- Unique per call, and a session's calls together (forgetting a session reads them).
CREATE UNIQUE INDEX IF NOT EXISTS rollup_call_key ON rollup_call (session, call_id);
-- A tool's calls newest first, and its durations within a window.
CREATE INDEX IF NOT EXISTS rollup_call_tool_ts ON rollup_call (tool, ts, duration_ms);
CREATE INDEX IF NOT EXISTS rollup_call_tool_failed ON rollup_call (tool, ts) WHERE failed;
-- Every tool's failed calls newest first (the failures page). Making it cover the
-- columns read saved nothing: reading 5,000 rows into Python is the cost, not the seeks.
CREATE INDEX IF NOT EXISTS rollup_call_failures ON rollup_call (ts) WHERE failed;
-- The failed calls of the sessions on a list page (failed in it: the count reads
-- the index alone, no row).
CREATE INDEX IF NOT EXISTS rollup_call_session_failed ON rollup_call (session, failed)
  WHERE failed;
-- A tool's durations in order, for the percentiles of the whole history.
CREATE INDEX IF NOT EXISTS rollup_call_tool_duration ON rollup_call (tool, duration_ms)
  WHERE duration_ms IS NOT NULL;
-- The calls of one duration band in a window, for the percentiles of 7 and 30 days.
CREATE INDEX IF NOT EXISTS rollup_call_tool_band ON rollup_call (tool, band, ts, duration_ms)
  WHERE duration_ms IS NOT NULL;
-- The names rollup_call's integers stand for. A tool's row goes with its last
-- call, a place's stays (no index finds a place's calls, and they are few).
CREATE TABLE IF NOT EXISTS rollup_tools (key INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE IF NOT EXISTS rollup_places (
  key INTEGER PRIMARY KEY, target TEXT NOT NULL, profile TEXT NOT NULL, UNIQUE (target, profile)
);
-- No index on first_id or second_id: only forget_messages looks calls up by
-- message, and nothing deletes single messages (the runtime deletes sessions):
-- it cost 37 MB and a ninth of each call's insert on the bench store.
-- How many calls of each tool fall in each duration band, per day and over all
-- time: where the p50 / p95 call lies, before one walk finds its exact value.
CREATE TABLE IF NOT EXISTS rollup_duration_all (
  tool TEXT NOT NULL, band INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (tool, band)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rollup_principal_day (
  bucket INTEGER NOT NULL, principal TEXT NOT NULL,
  messages INTEGER NOT NULL, sessions INTEGER NOT NULL,
  calls INTEGER NOT NULL, errors INTEGER NOT NULL,
  PRIMARY KEY (bucket, principal)
) WITHOUT ROWID;
-- One row per principal ("" for none), newest activity first through the index.
-- first_ts may be NULL and last_ts NO_TIME when no time is readable.
CREATE TABLE IF NOT EXISTS rollup_principal (
  principal TEXT PRIMARY KEY, fold TEXT NOT NULL,
  sessions INTEGER NOT NULL, messages INTEGER NOT NULL,
  calls INTEGER NOT NULL, errors INTEGER NOT NULL,
  first_ts INTEGER, last_ts INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rollup_principal_last ON rollup_principal (last_ts, principal);
-- key: what rollup_call.session holds (an INTEGER PRIMARY KEY, so VACUUM keeps it).
CREATE TABLE IF NOT EXISTS rollup_session (
  key INTEGER PRIMARY KEY,
  session_id TEXT NOT NULL UNIQUE,
  target TEXT NOT NULL, profile TEXT NOT NULL, principal TEXT,
  first_ts INTEGER, last_ts INTEGER, messages INTEGER NOT NULL,
  -- The session row's created_at once counted as created (NO_TIME if unreadable).
  created_at INTEGER
);
-- Sessions active in a window, by target and profile (a covering index).
CREATE INDEX IF NOT EXISTS rollup_session_last ON rollup_session (last_ts, target, profile);
-- A principal's sessions, to read its first and last activity again after a forget:
-- covering, so that reads the index alone (a principal of 7,000 sessions: 7,000
-- row lookups were 4 ms, and the runtime deleting its 100 oldest sessions made a
-- pass read 71 principals again, 0.3 s of a 2 s pass). No semicolon in these
-- comments: the DDL is run one statement at a time, split on them.
CREATE INDEX IF NOT EXISTS rollup_session_principal
  ON rollup_session (principal, first_ts, last_ts, created_at);
CREATE TABLE IF NOT EXISTS rollup_session_hour (
  session_id TEXT NOT NULL, bucket INTEGER NOT NULL, messages INTEGER NOT NULL,
  PRIMARY KEY (session_id, bucket)
) WITHOUT ROWID;
"""
    + _TOOL_CELLS.format(grain="hour")
    + _TOOL_CELLS.format(grain="day")
)


def bucket_of(ts: int | None, grain_ms: int) -> int:
    return NO_TIME if ts is None else ts // grain_ms
