"""``/targets/``: sessions per target and profile, from the rollups after a recent pass.

Every figure is either what a grouped scan of the store gives now, or the
rollups' count as of their last pass with the page saying so; the last
activity is always the store's.
"""

from __future__ import annotations

from sessions_admin import clock
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.index import sessions as index_sessions
from sessions_admin.store import queries
from sessions_admin.store.values import sqlite_order_key
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

NOTE = b"Sessions counted at the side index's last sync"


def grouped(store) -> dict:
    rows = store.execute(
        "SELECT target_key, profile_key, COUNT(*), MAX(last_active) FROM sessions GROUP BY 1, 2"
    )
    return {(t, p): (n, last) for t, p, n, last in rows}


def shown(response) -> dict:
    return {
        (p.target_key, p.profile_key): (p.sessions, p.last_active)
        for t in response.context["targets"]
        for p in t.profiles
    }


def fill(store) -> None:
    for number in range(30):
        sid = store.add_session(
            target=("ops.pager", "infra.deployer", "billing.ledger")[number % 3],
            profile=("default", "edit")[number % 2],
        )
        if number % 4:  # and some sessions without a message
            store.add_message(sid, "user", "hi", ts=BASE_MS + number * 60_000)


@STORE_DB
def test_after_a_pass_the_counts_come_from_the_rollups_and_the_page_says_so(
    store, var_dir, staff_client
):
    fill(store)
    sync.sync_once()
    response = staff_client.get("/targets/")
    assert shown(response) == grouped(store)
    assert NOTE in response.content


@STORE_DB
def test_between_passes_counts_are_the_last_pass_and_last_activity_is_live(
    store, var_dir, staff_client
):
    fill(store)
    sync.sync_once()
    before = grouped(store)
    late = BASE_MS + 10**7
    store.add_session("sess_late", target="ops.pager", profile="edit", last_active=late)
    store.add_session("sess_newpair", target="new.target", profile="default", last_active=late)
    figures = shown(staff_client.get("/targets/"))
    assert figures[("ops.pager", "edit")] == (before[("ops.pager", "edit")][0], late)
    assert figures[("new.target", "default")] == (1, late)  # unknown to the rollups: counted
    sync.sync_once()
    assert shown(staff_client.get("/targets/")) == grouped(store)


@STORE_DB
def test_a_pair_the_runtime_emptied_is_not_listed(store, var_dir, staff_client):
    fill(store)
    sync.sync_once()
    store.execute(
        "DELETE FROM session_messages WHERE session_id IN "
        "(SELECT id FROM sessions WHERE target_key = 'billing.ledger')"
    )
    store.execute("DELETE FROM sessions WHERE target_key = 'billing.ledger'")
    assert shown(staff_client.get("/targets/")) == grouped(store)


@STORE_DB
def test_a_pair_the_rollups_count_empty_is_counted_in_the_store(store, var_dir, staff_client):
    fill(store)
    store.add_session("sess_gone", target="z.target")
    sync.sync_once()
    store.execute("DELETE FROM sessions WHERE id = 'sess_gone'")
    sync.sync_once()  # the rollups forget it: z.target counts no session now
    store.add_session("sess_back", target="z.target")
    assert shown(staff_client.get("/targets/"))[("z.target", "default")][0] == 1


@STORE_DB
def test_without_a_recent_pass_the_store_counts_every_pair(
    store, var_dir, staff_client, monkeypatch
):
    fill(store)
    sync.sync_once()
    later = clock.now_ms() + (index_sessions.FRESH_FOR_S + 1) * 1000
    monkeypatch.setattr(clock, "now_ms", lambda: later)
    store.add_session("sess_late", target="ops.pager", profile="edit")
    response = staff_client.get("/targets/")
    assert shown(response) == grouped(store)
    assert b"counted at the side index" not in response.content


@STORE_DB
def test_without_rollups_each_pair_is_counted_as_a_grouped_scan_would(
    store, var_dir, staff_client, monkeypatch
):
    fill(store)
    store.add_session("sess_lonely", target="zz.last", profile="")
    assert shown(staff_client.get("/targets/")) == grouped(store)
    # Keys of any storage class, and a key too long to show whole, are sought as stored.
    for n, (target, profile) in enumerate(
        [(b"\xff\x00", "default"), ("t" * 1001, "default"), ("ops.pager", b"\xfe")]
    ):
        store.execute(
            "INSERT INTO sessions (id, target_key, profile_key, created_at, last_active) "
            "VALUES (?, ?, ?, 1, ?)",
            (f"odd{n}", target, profile, 5 + n),
        )
    figures = [value for _, value in sorted(grouped(store).items(), key=store_order)]
    assert in_order(staff_client.get("/targets/")) == figures
    # A store with more pairs than are worth counting one by one: one grouped scan.
    monkeypatch.setattr(queries.targets, "MAX_COUNTED_PAIRS", 3)
    assert in_order(staff_client.get("/targets/")) == figures


def store_order(item) -> tuple:
    (target, profile), _ = item
    return (sqlite_order_key(target), sqlite_order_key(profile))


def in_order(response) -> list[tuple]:
    return [(p.sessions, p.last_active) for t in response.context["targets"] for p in t.profiles]
