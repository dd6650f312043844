"""The side index against the store, driven the way the runtime drives the store.

A rule-based state machine (hypothesis) appends messages, deletes sessions
(as the runtime does, and through the dashboard's cascade), edits session
rows, creates sessions without messages, deletes an id and creates it again,
and between these runs passes of the sync: whole, interrupted after a batch,
and two at once. After every pass the answers staff see are compared with a
brute-force reading of the store: search (every page), the list's principal
and title filters (every page), and the rollups (``sync_index --verify``).
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading

import pytest
from django.test import Client
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, precondition, rule

from sessions_admin import deletion
from sessions_admin.deletion import Actor
from sessions_admin.ourdata import sidedb, sync, verify
from sessions_admin.ourdata.index import search as search_module
from sessions_admin.ourdata.index import textwriter
from sessions_admin.ourdata.index.search import SearchQuery, search
from sessions_admin.ourdata.index.text import contains, fold
from sessions_admin.store.values import decode_text
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

IDS = st.sampled_from(["s-a", "s-b", "s-c", "S-D", "s-é", "s/e f"])
PRINCIPALS = st.sampled_from(["user:alice", "user:bob", "USER:ALICE", None, ""])
#: Times a buggy writer could leave: the ends of INTEGER, the rollups' NO_TIME, text.
ODD_TIMES = st.sampled_from([-(2**63), -1, 0, 2**63 - 1, "late", 2.0])
#: Words drawn into text; the queries look for them (folding and accents included).
WORDS = ["kestrel", "Kestrel", "résumé", "RÉSUMÉ", "straße", "STRASSE", "fail", "東京都"]
TEXT = st.lists(st.sampled_from(WORDS + ["the", "a", "x"]), min_size=1, max_size=5).map(" ".join)
QUERIES = ["kestrel", "résumé", "strasse", "東京都", "fail", "ke", "é"]
#: Session ids that are TEXT but not valid UTF-8, bound as such (see _conn): two that
#: read alike (each a cut "€"), and the bytes of a cut "€" that make a value so.
ODD_IDS = st.sampled_from([b"odd-\xe2\x82", b"odd-\xe2\x83"])
CUT = "X'e282'"
#: Every rule binds a session id as CAST(? AS TEXT): the odd ones' bytes stay TEXT.
ANY_ID = IDS | ODD_IDS
RESULTS = st.sampled_from(['{"ok": true}', '{"ok": false}', '{"error": "boom"}', None, "x"])


class StoreAndIndex(RuleBasedStateMachine):
    """One store, its side database, and the brute-force reading to compare with."""

    store = None  # set by the test before the machine runs
    client: Client | None = None

    def __init__(self) -> None:
        super().__init__()
        with self._conn() as conn:
            for table in ("session_messages", "session_state", "sessions"):
                conn.execute(f"DELETE FROM {table}")
        sync.rebuild()
        self.clock = BASE_MS
        self.synced = False

    def _conn(self) -> sqlite3.Connection:
        self._changed()
        conn = sqlite3.connect(self.store.path, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _tick(self) -> int:
        self.clock += 60_000
        return self.clock

    def _changed(self) -> None:
        # Between passes the index may lag (the pages say how fresh it is);
        # the answers are compared right after a pass.
        self.synced = False

    # The runtime's operations -------------------------------------------------

    @rule(sid=IDS, principal=PRINCIPALS, title=TEXT)
    def create_session(self, sid, principal, title):
        now = self._tick()
        with self._conn() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, target_key, profile_key, principal_id, "
                "title, turn_count, created_at, last_active) VALUES (CAST(? AS TEXT), 't.x', "
                "'default', ?, ?, "
                "0, ?, ?)",
                (sid, principal, title, now, now),
            )

    @rule(
        sid=ANY_ID, text=TEXT, tool=st.sampled_from([None, "fs.read", "sql.query"]), result=RESULTS
    )
    def append(self, sid, text, tool, result):
        with self._conn() as conn:
            if conn.execute("SELECT 1 FROM sessions WHERE id = CAST(? AS TEXT)", (sid,)).fetchone():
                conn.execute(
                    "INSERT INTO session_messages (session_id, role, content, tool_name, "
                    "tool_result, ts) VALUES (CAST(? AS TEXT), ?, ?, ?, ?, ?)",
                    (sid, "tool" if tool else "user", text, tool, result, self._tick()),
                )

    @rule(sid=ANY_ID, principal=PRINCIPALS, created=ODD_TIMES)
    def create_session_at_an_odd_time(self, sid, principal, created):
        with self._conn() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO sessions (id, target_key, principal_id, title, created_at, "
                "last_active) VALUES (CAST(? AS TEXT), 't.x', ?, 'odd', ?, 0)",
                (sid, principal, created),
            )

    @rule(sid=ANY_ID, text=TEXT, ts=ODD_TIMES)
    def append_at_an_odd_time(self, sid, text, ts):
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO session_messages (session_id, role, content, ts) "
                "SELECT id, 'user', ?, ? FROM sessions WHERE id = CAST(? AS TEXT)",
                (text, ts, sid),
            )

    @rule(sid=ANY_ID, text=TEXT)
    def append_undecodable(self, sid, text):
        """A writer that cut a multi-byte character: TEXT that is not valid UTF-8."""
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO session_messages (session_id, role, content, ts) "
                f"SELECT id, 'user', CAST(CAST(? AS BLOB) || {CUT} AS TEXT), ? FROM sessions "
                "WHERE id = CAST(? AS TEXT)",
                (text, self._tick(), sid),
            )

    @rule(sid=ANY_ID, column=st.sampled_from(["title", "principal_id"]), text=TEXT)
    def edit_undecodable(self, sid, column, text):
        with self._conn() as conn:
            conn.execute(
                f"UPDATE sessions SET {column} = CAST(CAST(? AS BLOB) || {CUT} AS TEXT) "
                "WHERE id = CAST(? AS TEXT)",
                (text, sid),
            )

    @rule(sid=ODD_IDS, principal=PRINCIPALS, title=TEXT)
    def create_session_with_an_undecodable_id(self, sid, principal, title):
        self.create_session(sid, principal, title)

    @rule(sid=ANY_ID)
    def runtime_delete(self, sid):
        with self._conn() as conn:
            conn.execute("BEGIN IMMEDIATE")
            for table in ("session_messages", "session_state"):
                conn.execute(f"DELETE FROM {table} WHERE session_id = CAST(? AS TEXT)", (sid,))
            conn.execute("DELETE FROM sessions WHERE id = CAST(? AS TEXT)", (sid,))
            conn.execute("COMMIT")

    @rule(sid=ANY_ID, principal=PRINCIPALS)
    def recreate(self, sid, principal):
        self.runtime_delete(sid)
        self.create_session(sid, principal, "again")

    @rule(
        sid=ANY_ID,
        column=st.sampled_from(["title", "principal_id", "target_key", "profile_key"]),
        value=TEXT | PRINCIPALS,
    )
    def edit(self, sid, column, value):
        if value is None and column in ("target_key", "profile_key"):
            value = "other"
        with self._conn() as conn:
            conn.execute(
                f"UPDATE sessions SET {column} = ? WHERE id = CAST(? AS TEXT)", (value, sid)
            )

    @rule(sid=IDS)
    def dashboard_delete(self, sid):
        exists = self._store_rows("SELECT 1 FROM sessions WHERE id = ?", (sid,))
        if exists:
            deletion.delete_session(sid, actor=Actor.command("state machine"))
            self._changed()

    # Passes of the sync -------------------------------------------------------

    @rule()
    def sync_pass(self):
        sync.sync_once(batch_size=3)
        self.synced = True

    @rule()
    def interrupted_pass(self):
        calls = iter(range(2))
        sync.sync_once(batch_size=2, should_stop=lambda: next(calls, 1) >= 1)
        self.synced = False

    @rule()
    def overlapping_passes(self):
        def run() -> None:
            with contextlib.suppress(sidedb.PassRunning):
                sync.sync_once(batch_size=2)

        threads = [threading.Thread(target=run) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        sync.sync_once(batch_size=2)  # whichever lost the race, the store is now taken in
        self.synced = True

    @rule()
    def build_that_dies_with_the_text_file_behind(self):
        """A build whose text file had not committed its last batches when it died: the
        searches stay exact (they scan what the text file lacks), the next pass takes
        that text in (the invariants, once a pass ran)."""
        calls = iter(range(3))
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(sync.passes, "LONG_PASS", 1)
            patch.setattr(textwriter, "LAG_BATCHES", 2)
            patch.setattr(textwriter.TextWriter, "_commit_lagged", textwriter.TextWriter.abort)
            sync.sync_once(batch_size=1, should_stop=lambda: next(calls, 2) >= 2)
        self._search_equals_store()
        self.synced = False

    # What staff see, against the store ----------------------------------------

    def _store_rows(self, sql: str, params: tuple = ()) -> list[tuple]:
        conn = sqlite3.connect(self.store.path)
        # As the dashboard reads TEXT that is not UTF-8: an Undecodable, its bytes kept.
        conn.text_factory = decode_text
        try:
            return conn.execute(sql, params).fetchall()
        finally:
            conn.close()

    @precondition(lambda self: self.synced)
    @invariant()
    def rollups_and_index_equal_the_store(self):
        verdict = verify.verify()
        assert verdict.ok, verdict.lines()
        assert verdict.pending == 0

    @precondition(lambda self: self.synced)
    @invariant()
    def search_finds_exactly_the_sessions_that_say_it(self):
        self._search_equals_store()

    def _search_equals_store(self):
        messages = self._store_rows(
            "SELECT m.session_id, m.content, m.tool_name, m.tool_result FROM session_messages m "
            "JOIN sessions s ON s.id = m.session_id"
        )
        for q in QUERIES:
            folded = fold(q)
            want = {sid for sid, *fields in messages if contains(folded, fields)}
            got: list[str] = []
            before = None
            for _ in range(50):
                page = search(SearchQuery(q=q, before_id=before))
                got += [group.session_id for group in page.groups]
                before = page.next_before_id
                if before is None:
                    break
            # Every session that says it, once (two undecodable ids may read alike, so
            # compare by their exact bytes, not in an order sorted by how they read).
            assert len(got) == len(set(got)) and set(got) == want, q

    @precondition(lambda self: self.synced)
    @invariant()
    def list_filters_show_exactly_the_matching_sessions(self):
        rows = self._store_rows("SELECT id, principal_id, title FROM sessions")
        for principal in ("user:alice", "USER:ALICE", "user:bob"):
            want = {sid for sid, p, _ in rows if p == principal}
            assert self._listed({"principal": principal}) == want, principal
        for q in ("kestrel", "résumé", "strasse"):
            want = {sid for sid, _, title in rows if contains(fold(q), (title, sid))}
            assert self._listed({"q": q}) == want, q

    def _listed(self, params: dict) -> set[str]:
        found: set[str] = set()
        url = "/sessions/"
        for _ in range(20):
            response = self.client.get(url, params if url == "/sessions/" else None)
            assert response.status_code in (200, 302), response.status_code
            if response.status_code == 302:  # an exact id: that one session
                return {params["q"]}
            found |= {row.id for row in response.context["page"].rows}
            if not response.context["next_url"]:
                return found
            url = "/sessions/" + response.context["next_url"]
        raise AssertionError("the list kept paging")


@STORE_DB
def test_the_side_index_answers_as_the_store_does(store, var_dir, staff_client, monkeypatch):
    # Two sessions a page: following every page crosses sessions whose messages interleave.
    monkeypatch.setattr(search_module, "PAGE_SESSIONS", 2)
    StoreAndIndex.store = store
    StoreAndIndex.client = staff_client
    state_machine = StoreAndIndex.TestCase
    # Each step syncs and checks every answer: half the profile's examples,
    # 20 steps each, keep it within a minute on two cores.
    state_machine.settings = settings(
        max_examples=max(settings().max_examples // 4, 1), stateful_step_count=15
    )
    state_machine().runTest()
