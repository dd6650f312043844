"""The search over every transcript: index candidates, checked against the store.

With an index and a query of three folded characters or more, candidates
come from ``search_text`` newest first (``ORDER BY rowid DESC`` walks the
FTS5 doclists backwards, so the first page never reads every hit): blocks of
a session's messages, each expanded in the side database into its messages
that pass the per-message filters (:func:`.candidates.candidates`). Each batch of candidates is
then read from the store (:func:`sessions_admin.store.feed.messages_by_id`)
and kept only if the store's row really contains the query and passes the
filters: no false hit (``detail=none`` candidates, rows the runtime deleted),
no miss (the index holds every message up to its last id; newer ones are
scanned from the store).

Without an index, or for a query of one or two characters, the store's
newest messages are scanned under a time limit, and the page says how far
back it got.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index import candidates, textindex
from sessions_admin.ourdata.index.text import (
    Snippet,
    contains,
    fold,
    fts_query,
    is_indexable,
    snippet,
)
from sessions_admin.ourdata.rollups import calls
from sessions_admin.ourdata.sync import is_current, read_state
from sessions_admin.store import feed
from sessions_admin.store.feed import FeedMessage, FeedSession

#: Sessions per page, snippets shown per session.
PAGE_SESSIONS = 20
SNIPPETS_PER_SESSION = 3
#: How long a scan of the store's newest messages may run.
SCAN_TIME_LIMIT_S = 1.5
SEARCH_TIME_LIMIT_S = 3.0
SCAN_BATCH = 2000


@dataclass(frozen=True)
class SearchQuery:
    q: str
    target: str | None = None
    profile: str | None = None
    principal: str | None = None
    role: str | None = None
    tool: str | None = None
    since_ms: int | None = None  # ts >= since
    until_ms: int | None = None  # ts < until
    before_id: int | None = None  # the keyset cursor: only messages older than this
    #: Only these sessions (a label's), or any.
    sessions: frozenset[str] | None = None
    #: Only sessions with a failed tool call as of the last pass (the rollups').
    failed: bool = False
    #: How ``failed`` is tested on a store row (set by :func:`search` for its run).
    failing: Callable[[str], bool] | None = field(default=None, compare=False, repr=False)

    @property
    def folded(self) -> str:
        return fold(self.q)

    def accepts(self, message: FeedMessage) -> bool:
        """The filters, on the store's own row."""
        checks = (
            (self.target, message.target_key),
            (self.profile, message.profile_key),
            (self.principal, message.principal_id),
            (self.role, message.role),
            (self.tool, message.tool_name),
        )
        if any(wanted is not None and wanted != actual for wanted, actual in checks):
            return False
        if self.sessions is not None and message.session_id not in self.sessions:
            return False
        if self.failed and self.failing is not None and not self.failing(message.session_id):
            return False
        if self.since_ms is not None and (message.ts is None or message.ts < self.since_ms):
            return False
        return self.until_ms is None or (message.ts is not None and message.ts < self.until_ms)

    def matches(self, message: FeedMessage) -> bool:
        return self.accepts(message) and contains(
            self.folded,
            (message.content, message.tool_name, message.tool_args, message.tool_result),
        )


@dataclass
class Hit:
    message: FeedMessage
    snippet: Snippet | None


@dataclass
class SessionGroup:
    session_id: str
    session: FeedSession | None
    hits: list[Hit] = field(default_factory=list)
    more: int = 0  # further hits of this session seen on this page, not shown
    # Further index candidates of this session on this page (messages, or blocks of
    # them), not read from the store since the group already has its snippets: the
    # page offers to search the session, without claiming a number or a match.
    unchecked: int = 0


@dataclass
class Freshness:
    built: bool
    last_id: int = feed.BEFORE_FIRST_ID
    synced_at_ms: int | None = None
    newer: int = 0
    newer_capped: bool = False

    @property
    def fresh(self) -> bool:
        return self.built and self.newer == 0


@dataclass
class SearchPage:
    query: SearchQuery
    mode: str  # "index", "scan-short" (1-2 characters), "scan-no-index"
    groups: list[SessionGroup]
    session_hits: list[FeedSession]
    next_before_id: int | None
    freshness: Freshness
    scanned: int = 0  # messages read from the store by a scan
    scanned_back_to: FeedMessage | None = None  # the oldest message a scan reached
    stopped_early: bool = False  # the time limit ended the page
    elapsed_ms: float = 0.0


NEWER_CAP = 100_000


def freshness(side: sqlite3.Connection | None) -> Freshness:
    """How far the index is behind the store: one seek plus a capped count."""
    if side is None or not is_current(side) or not textindex.paired(side):
        return Freshness(built=False)
    state = read_state(side)
    if state.synced_at_ms is None and state.last_id == feed.BEFORE_FIRST_ID:
        return Freshness(built=False)
    last_id = textindex.indexed_through(side, state.last_id)
    newest = feed.last_message_id()
    newer, capped = (0, False)
    if newest > last_id:
        newer, capped = feed.count_messages_after(last_id, NEWER_CAP)
    return Freshness(True, last_id, state.synced_at_ms, newer, capped)


class _Collector:
    """Groups verified hits by session, newest first, until the page is full.

    A session is shown once, on the page of its newest hit: a page that resumes
    below a cursor passes over the sessions ``shown_before`` names (they have a
    hit at or above it), whose older hits would otherwise show them again.
    """

    def __init__(
        self, query: SearchQuery, shown_before: Callable[[str], bool] = lambda _: False
    ) -> None:
        self.query = query
        self.shown_before = shown_before
        self.groups: dict[str, SessionGroup] = {}
        self.passed: set[str] = set()
        self.next_before_id: int | None = None
        self.full = False

    def offer(self, message: FeedMessage) -> bool:
        """Add a verified hit, unless its session was shown on an earlier page (False)."""
        sid = message.session_id
        if sid not in self.groups:
            if sid in self.passed:
                return False
            if self.query.before_id is not None and self.shown_before(sid):
                self.passed.add(sid)
                return False
        self.add(message)
        return True

    def add(self, message: FeedMessage) -> None:
        group = self.groups.get(message.session_id)
        if group is None:
            if len(self.groups) >= PAGE_SESSIONS:
                # The first hit of the next page's first session: it starts there.
                self.full = True
                self.next_before_id = message.id + 1
                return
            group = self.groups[message.session_id] = SessionGroup(message.session_id, None)
        if len(group.hits) < SNIPPETS_PER_SESSION:
            fields = (
                ("content", message.content),
                ("tool", message.tool_name),
                ("args", message.tool_args),
                ("result", message.tool_result),
            )
            group.hits.append(Hit(message, snippet(fields, self.query.folded)))
        else:
            group.more += 1


def _scan_range(
    query: SearchQuery,
    collector: _Collector,
    page: SearchPage,
    before_id: int | None,
    floor_id: int,
    deadline: float,
) -> int | None:
    """Walk the store's messages with ``floor_id < id < before_id`` newest first.

    Stops when the page is full, the range is done (returns None) or time is
    up (sets ``page.stopped_early``); returns where the next page resumes.
    """
    cursor = before_id
    while not collector.full:
        if time.monotonic() > deadline:
            page.stopped_early = True
            return cursor
        batch = feed.newest_messages(cursor, SCAN_BATCH, after_id=floor_id)
        if not batch:
            return None
        for message in batch:
            if collector.full:
                break
            page.scanned += 1
            page.scanned_back_to = message
            if query.matches(message):
                collector.offer(message)
        cursor = batch[-1].id
    return collector.next_before_id


def _session_hits(
    side: sqlite3.Connection, query: SearchQuery, limit: int = 10
) -> list[FeedSession]:
    """Sessions whose title, principal or id holds the query (first page only).

    The newest candidates the index knows (its keys grow as sessions appear)
    are read from the store and checked there; a few dozen at most, so a
    word in thousands of titles costs no more than a rare one.
    """
    rows = side.execute(
        "SELECT s.id FROM search_session_text AS t CROSS JOIN search_sessions AS s "
        "ON s.key = t.rowid WHERE search_session_text MATCH ? ORDER BY t.rowid DESC LIMIT ?",
        (fts_query(query.folded), limit * 5),
    ).fetchall()
    found = feed.sessions_by_id([sidedb.read_id(row[0]) for row in rows])
    if query.failed:
        failing = calls.failed_by_session(side, [sid for sid in found if type(sid) is str])
        found = {sid: s for sid, s in found.items() if sid in failing}
    kept = [
        s
        for s in found.values()
        if contains(query.folded, (s.title, s.principal_id, s.id))
        and all(
            wanted is None or wanted == actual
            for wanted, actual in (
                (query.target, s.target_key),
                (query.profile, s.profile_key),
                (query.principal, s.principal_id),
            )
        )
        and (query.sessions is None or s.id in query.sessions)
    ]
    kept.sort(key=lambda s: (s.last_active or 0, s.id), reverse=True)
    return kept[:limit]


class _EarlierPages:
    """Whether a session has a hit at or above the page's cursor: it was shown on an
    earlier page (the page of its newest hit) and is not shown again.

    The messages the index holds are checked through it (the session's blocks
    that match, expanded into its messages that pass the filters); the rest
    (all of them, without an index) are read from the store by id. Every
    candidate is checked against the store's row, as hits are.
    """

    def __init__(
        self, query: SearchQuery, side: sqlite3.Connection | None, indexed_through: int
    ) -> None:
        self.query = query
        self.side = side
        self.indexed_through = indexed_through if side is not None else feed.BEFORE_FIRST_ID

    def shown(self, session_id: str) -> bool:
        cursor = self.query.before_id
        if cursor is None:
            return False
        newer = feed.session_message_ids(session_id, max(cursor, self.indexed_through + 1))
        if self._says_it(newer):
            return True
        indexed = self._indexed(session_id, cursor) if cursor <= self.indexed_through else ()
        return any(self._says_it(candidates) for candidates in indexed)

    def _says_it(self, message_ids: list[int]) -> bool:
        for at in range(0, len(message_ids), candidates.CANDIDATE_BATCH):
            found = feed.messages_by_id(message_ids[at : at + candidates.CANDIDATE_BATCH])
            if any(self.query.matches(message) for message in found.values()):
                return True
        return False

    def _indexed(self, session_id: str, cursor: int) -> Iterator[list[int]]:
        """The session's messages from ``cursor`` up that the index names for the query,
        one matching block at a time, oldest first."""
        side = self.side
        filters = candidates.filters_of(side, self.query, feed.INT_MAX)
        row = side.execute(
            "SELECT key FROM search_sessions WHERE id = ?", [sidedb.bind_id(session_id)]
        ).fetchone()
        if filters is None or row is None:
            return
        match = fts_query(self.query.folded)
        for high, low in side.execute(
            "SELECT b.high, b.low FROM search_messages AS h CROSS JOIN search_blocks AS b "
            "ON b.high = h.id WHERE h.session = ? AND h.id >= ? ORDER BY h.id",
            [row[0], cursor],
        ).fetchall():
            # One block at a time: FTS5 seeks "rowid = ?", but scans for "rowid IN (...)".
            if side.execute(
                "SELECT 1 FROM search_text WHERE search_text MATCH ? AND rowid = ?", [match, high]
            ).fetchone():
                yield [
                    mid
                    for (mid,) in side.execute(
                        "SELECT m.id FROM search_messages AS m WHERE m.session = ? "
                        f"AND m.id BETWEEN ? AND ? AND {filters.messages}",
                        [row[0], max(low, cursor), high, *filters.message_params],
                    )
                ]


def _search_index(
    side: sqlite3.Connection, query: SearchQuery, collector: _Collector, page: SearchPage
) -> int | None:
    """Messages newer than the index (scanned), then the index; returns the resume id."""
    deadline = time.monotonic() + SEARCH_TIME_LIMIT_S
    before = query.before_id
    last_id = page.freshness.last_id
    if page.freshness.newer and (before is None or before > last_id + 1):
        resume = _scan_range(query, collector, page, before, last_id, deadline)
        if page.stopped_early or collector.full:
            return resume
        before = last_id + 1
    # Session keys whose group already has its snippets: their further candidates
    # are counted, not read from the store (a busy session's thousands of hits
    # would otherwise be checked one by one before the page finds its sessions),
    # and their blocks are not expanded into messages. None: a session shown on an
    # earlier page, whose candidates are passed over.
    settled: dict[int, SessionGroup | None] = {}
    batches = candidates.candidates(side, query, before, settled)
    if batches is None:
        return None
    for batch in batches:
        rows = feed.messages_by_id([mid for mid, key in batch if key not in settled])
        for mid, key in batch:
            if key in settled:
                group = settled[key]
                if group is not None:
                    group.unchecked += 1
                continue
            message = rows.get(mid)
            if message is None or not query.matches(message):
                continue
            if not collector.offer(message):
                settled[key] = None
                continue
            if collector.full:
                return collector.next_before_id
            group = collector.groups[message.session_id]
            if len(group.hits) >= SNIPPETS_PER_SESSION:
                settled[key] = group
        if time.monotonic() > deadline:
            page.stopped_early = True
            return batch[-1][0]
    return None


class _Failing:
    """Whether a session has a failed call, asked of the rollups once per session: the
    store's rows a search reads beyond the index (its newest messages) are tested so."""

    def __init__(self) -> None:
        self.side = sidedb.connect_readonly()
        self.known: dict[str, bool] = {}

    def __call__(self, session_id: str) -> bool:
        if session_id not in self.known:
            self.known[session_id] = (
                type(session_id) is str
                and self.side is not None
                and bool(calls.failed_by_session(self.side, [session_id]))
            )
        return self.known[session_id]

    def close(self) -> None:
        if self.side is not None:
            self.side.close()


def search(query: SearchQuery) -> SearchPage:
    """One page of results (see the module's doc for how)."""
    started = time.perf_counter()
    failing = _Failing() if query.failed else None
    if failing is not None:
        query = replace(query, failing=failing)
    try:
        page, collector = _search_pages(query)
    except sidedb.errors():
        # A damaged or unreadable side database: answer as if there were none.
        page, collector = _search_pages(query, use_index=False)
    finally:
        if failing is not None:
            failing.close()
    sessions = feed.sessions_by_id(list(collector.groups))
    for group in collector.groups.values():
        group.session = sessions.get(group.session_id)
    page.groups = list(collector.groups.values())
    page.elapsed_ms = (time.perf_counter() - started) * 1000
    return page


def _search_pages(query: SearchQuery, *, use_index: bool = True) -> tuple[SearchPage, _Collector]:
    side = sidedb.connect_readonly() if use_index else None
    try:
        fresh = freshness(side)
        indexed = fresh.built and is_indexable(query.folded)
        if not is_indexable(query.folded):
            mode = "scan-short"
        else:
            mode = "index" if indexed else "scan-no-index"
        page = SearchPage(query, mode, [], [], None, fresh)
        earlier = _EarlierPages(query, side if indexed else None, fresh.last_id)
        collector = _Collector(query, earlier.shown)
        if indexed:
            if query.before_id is None:
                page.session_hits = _session_hits(side, query)
            page.next_before_id = _search_index(side, query, collector, page)
        else:
            deadline = time.monotonic() + SCAN_TIME_LIMIT_S
            page.next_before_id = _scan_range(
                query, collector, page, query.before_id, feed.BEFORE_FIRST_ID, deadline
            )
    finally:
        if side is not None:
            side.close()
    return page, collector
