"""A store with two principals, their frames and our records, synced: what erasure tests use."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from sessions_admin.ourdata import sidedb, sync
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.index.search import SearchQuery, search
from tests.storebuilder import StoreBuilder

ALICE = "user:alice"
BOB = "user:bob"
#: Text only alice's messages hold.
ALICE_ONLY = "wombatsecret"


@dataclass
class World:
    store: StoreBuilder
    alice: list[str]
    bob: list[str]


def build(store: StoreBuilder, alice_sessions: int = 3) -> World:
    """Alice: sessions with messages, a tool call, state and a frames dir each; Bob: one
    session that mentions alice in its text; an audit row naming alice's first session."""
    alice = []
    for n in range(alice_sessions):
        sid = store.add_session(f"sess_alice{n}", principal=ALICE, title=f"alice {n}")
        store.add_message(sid, "user", f"my {ALICE_ONLY} number {n}")
        store.add_message(
            sid, "tool", "", tool_name="fs.read", tool_call_id=f"c{n}", tool_result={"ok": 1}
        )
        store.add_state(sid, "repl_state", {"n": n})
        folder = store.frames_root / sid
        folder.mkdir()
        (folder / "activity-r1.jsonl").write_text('{"ts": 1}\n' * (n + 1))
        alice.append(sid)
    bob = [store.add_session("sess_bob0", principal=BOB, title="bob")]
    store.add_message(bob[0], "user", f"I talked to {ALICE} yesterday")
    store.add_state(bob[0], "repl_state", {})
    (store.frames_root / bob[0]).mkdir()
    DeletionAudit.objects.create(
        actor="earlier",
        operation=DeletionAudit.Operation.DELETE_FILTERED,
        target={"session_ids": [alice[0], "sess_other"]},
        outcome=DeletionAudit.Outcome.OK,
    )
    sync.sync_once()
    return World(store, alice, bob)


def exact_counts(store: StoreBuilder, principal: str) -> tuple[int, int, int]:
    """(sessions, messages, state rows) of a principal, straight from SQL."""
    inner = "SELECT id FROM sessions WHERE principal_id = ?"
    return (
        store.execute("SELECT count(*) FROM sessions WHERE principal_id = ?", (principal,))[0][0],
        store.execute(
            f"SELECT count(*) FROM session_messages WHERE session_id IN ({inner})", (principal,)
        )[0][0],
        store.execute(
            f"SELECT count(*) FROM session_state WHERE session_id IN ({inner})", (principal,)
        )[0][0],
    )


def sha256_of(ids: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def side_rows(sql: str, params: tuple = ()) -> list[tuple]:
    side = sidedb.connect_readonly()
    try:
        return side.execute(sql, params).fetchall()
    finally:
        side.close()


def search_hits(text: str) -> set[str]:
    return {group.session_id for group in search(SearchQuery(q=text)).groups}
