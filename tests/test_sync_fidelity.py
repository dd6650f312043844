"""The side index never disagrees with the store: overlapping passes, edited rows, holes."""

from __future__ import annotations

import io
import threading
from contextlib import nullcontext

import pytest
from django.core.management import CommandError, call_command

from sessions_admin.ourdata import sidedb, sync, verify
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

DAY = 86_400_000


def side_rows(sql: str, params: tuple = ()) -> list[tuple]:
    side = sidedb.connect()
    try:
        return side.execute(sql, params).fetchall()
    finally:
        side.close()


def indexed_messages() -> int:
    return side_rows("SELECT count(*) FROM search_messages")[0][0]


def principal_messages() -> dict[str, int]:
    return dict(
        side_rows(
            "SELECT principal, sum(messages) FROM rollup_principal_day GROUP BY principal "
            "HAVING sum(messages) != 0"
        )
    )


def assert_no_drift() -> None:
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()
    assert verdict.pending == 0


def busy_store(store, sessions: int = 6, per: int = 5) -> list[str]:
    ids = []
    for s in range(sessions):
        sid = store.add_session(f"sess_{s}", principal=f"user:{s % 2}", title=f"plan {s}")
        ids.append(sid)
        for m in range(per):
            store.add_message(sid, "user", f"note {m} kestrel{s}")
    return ids


@STORE_DB
def test_two_passes_started_together_count_every_message_once(store, var_dir):
    busy_store(store, sessions=20, per=30)
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def run() -> None:
        barrier.wait()
        try:
            sync.sync_once(batch_size=50)
            outcomes.append("ran")
        except sidedb.PassRunning:
            outcomes.append("refused")

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert "ran" in outcomes and len(outcomes) == 2
    assert indexed_messages() == store.count("session_messages") == 600
    assert_no_drift()


@STORE_DB
def test_two_writers_past_the_lock_still_never_count_twice(store, var_dir, monkeypatch):
    # The lock is advisory: even two passes that both got past it (a lock file
    # on a filesystem without flock) skip what the other already committed.
    busy_store(store, sessions=20, per=30)
    monkeypatch.setattr(sidedb, "pass_lock", nullcontext)
    sync.sync_once()  # the side database exists, as in the report's second case
    store.add_session("sess_late", principal="user:late")
    for m in range(400):
        store.add_message("sess_late", "user", f"late {m}")
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            sync.sync_once(batch_size=25)
        except BaseException as exc:  # noqa: BLE001 - the test reports any failure
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert indexed_messages() == store.count("session_messages") == 1000
    assert principal_messages()["user:late"] == 400
    assert_no_drift()


@STORE_DB
def test_a_second_pass_says_another_is_running_and_exits(store, var_dir):
    busy_store(store)
    out = io.StringIO()
    with sidedb.pass_lock():
        call_command("sync_index", stdout=out)
    assert "Another sync_index pass is running" in out.getvalue()
    assert not sidedb.exists() or side_rows("SELECT count(*) FROM sync_sessions")[0][0] == 0
    call_command("sync_index", stdout=io.StringIO())
    assert indexed_messages() == 30


@STORE_DB
def test_a_renamed_title_and_a_moved_principal_are_seen_by_the_next_pass(
    store, var_dir, staff_client
):
    busy_store(store)
    sync.sync_once()
    store.execute("UPDATE sessions SET title = 'albatross report' WHERE id = 'sess_3'")
    store.execute("UPDATE sessions SET principal_id = 'user:zed' WHERE id = 'sess_4'")
    report = sync.sync_once()
    assert report.sessions_updated == 1 and report.sessions_retaken == 1

    page = staff_client.get("/sessions/", {"q": "albatross"}).content.decode()
    assert "sess_3" in page
    assert "sess_3" not in staff_client.get("/sessions/", {"q": "plan 3"}).content.decode()
    page = staff_client.get("/sessions/", {"principal": "user:zed"}).content.decode()
    assert "sess_4" in page
    assert principal_messages() == {"user:0": 10, "user:1": 15, "user:zed": 5}
    assert_no_drift()


@STORE_DB
@pytest.mark.parametrize("column", ["principal_id", "target_key", "profile_key"])
@pytest.mark.parametrize("sid", ["sess_a", b"odd-\xe2\x82"])
def test_a_value_edited_to_text_that_is_not_utf8_verifies_after_the_next_pass(
    store, var_dir, staff_client, column, sid
):
    """The side keeps such a value as it reads (U+FFFD for the bad bytes), as its
    filters compare it; ``--verify`` compares the same (it reported drift for ever)."""
    store.execute(
        "INSERT INTO sessions (id, target_key, principal_id, title, created_at, last_active) "
        "VALUES (CAST(? AS TEXT), 't.x', 'user:alice', 'kestrel', ?, ?)",
        (sid, BASE_MS, BASE_MS),
    )
    sync.sync_once()
    store.execute(
        f"UPDATE sessions SET {column} = CAST(CAST('kestrel' AS BLOB) || X'e282' AS TEXT) "
        "WHERE id = CAST(? AS TEXT)",
        (sid,),
    )
    sync.sync_once()
    assert_no_drift()


@STORE_DB
def test_a_session_without_messages_is_found_by_principal_and_title(store, var_dir, staff_client):
    busy_store(store)
    sync.sync_once()
    store.add_session("sess_quiet", principal="user:quiet", title="nothing said yet")
    sync.sync_once()
    page = staff_client.get("/sessions/", {"principal": "user:quiet"}).content.decode()
    assert "sess_quiet" in page
    assert "sess_quiet" in staff_client.get("/sessions/", {"q": "said yet"}).content.decode()
    assert_no_drift()


@STORE_DB
def test_a_first_build_walks_after_its_batches_and_misses_nothing(store, var_dir, staff_client):
    """A first build takes sessions in with their batches and walks the rows at the end:
    a session without messages, and rows edited or deleted while the batches ran, are
    all as the store has them when it ends."""
    busy_store(store, sessions=6, per=5)
    store.add_session("sess_quiet", principal="user:quiet", title="nothing said yet")
    edits = iter(
        [
            "UPDATE sessions SET title = 'albatross report' WHERE id = 'sess_0'",
            "DELETE FROM session_messages WHERE session_id = 'sess_5'",
            "DELETE FROM sessions WHERE id = 'sess_5'",
        ]
    )

    def after_a_batch(progress: sync.Progress) -> None:
        statement = next(edits, None)
        if statement is not None:
            store.execute(statement)

    report = sync.sync_once(batch_size=4, on_progress=after_a_batch)
    assert report.batches > 3
    assert next(edits, None) is None  # every edit landed while the batches ran
    page = staff_client.get("/sessions/", {"principal": "user:quiet"}).content.decode()
    assert "sess_quiet" in page
    assert "sess_0" in staff_client.get("/sessions/", {"q": "albatross"}).content.decode()
    assert indexed_messages() == store.count("session_messages") == 25
    assert_no_drift()


@STORE_DB
def test_an_id_deleted_and_created_again_keeps_none_of_the_old_messages(store, var_dir):
    busy_store(store)
    sync.sync_once()
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_1'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_1'")
    store.add_session("sess_1", principal="user:1", created_at=BASE_MS + 40 * DAY)
    store.add_message("sess_1", "user", "fresh start", ts=BASE_MS + 40 * DAY)
    sync.sync_once()
    counts = dict(side_rows("SELECT session_id, messages FROM rollup_session"))
    assert counts["sess_1"] == 1 and counts["sess_0"] == 5
    assert principal_messages()["user:1"] == 11  # sess_3, sess_5 and the new sess_1
    assert_no_drift()


@STORE_DB
def test_a_session_row_that_arrives_after_its_messages_brings_them_in(store, var_dir):
    busy_store(store)
    conn = store.connect()
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute(
        "INSERT INTO session_messages (session_id, role, content, ts) "
        "VALUES ('sess_late', 'user', 'before my row', ?)",
        (BASE_MS,),
    )
    conn.commit()
    conn.close()
    sync.sync_once()
    assert indexed_messages() == 30  # an orphan counts nowhere
    store.add_session("sess_late", principal="user:late")
    sync.sync_once()
    assert indexed_messages() == 31
    assert principal_messages()["user:late"] == 1
    assert_no_drift()


@STORE_DB
def test_deleted_newest_sessions_leave_no_hole_in_an_index_page(store, var_dir, staff_client):
    for s in range(70):
        store.add_session(f"sess_{s:03d}", principal="user:many", last_active=BASE_MS + s * 1000)
    sync.sync_once()
    store.execute("DELETE FROM sessions WHERE id >= 'sess_010'")  # the 60 newest
    page = staff_client.get("/sessions/", {"principal": "user:many"}).content.decode()
    assert "No sessions match" not in page
    assert all(f"sess_{s:03d}" in page for s in range(10))


@STORE_DB
def test_an_index_page_that_meets_deleted_rows_fills_up_and_pages_on(store, var_dir, staff_client):
    for s in range(120):
        store.add_session(f"sess_{s:03d}", principal="user:many", last_active=BASE_MS + s * 1000)
    sync.sync_once()
    store.execute("DELETE FROM sessions WHERE id >= 'sess_090' AND id < 'sess_115'")
    first = staff_client.get("/sessions/", {"principal": "user:many"})
    shown = {s for s in range(120) if f"sess_{s:03d}" in first.content.decode()}
    # A full page, newest first: the 5 past the hole, then 089 down to 045.
    assert shown == set(range(115, 120)) | set(range(45, 90))
    assert first.context["next_url"]
    second = staff_client.get("/sessions/" + first.context["next_url"]).content.decode()
    assert {s for s in range(120) if f"sess_{s:03d}" in second} == set(range(45))
    assert "Load more" not in second


@STORE_DB
def test_verify_prints_each_drift_and_fails(store, var_dir):
    busy_store(store)
    sync.sync_once()
    call_command("sync_index", "--verify", stdout=io.StringIO())  # clean: no error
    side = sidedb.connect()
    side.execute("UPDATE rollup_session SET messages = messages + 3 WHERE session_id = 'sess_2'")
    side.execute("UPDATE search_sessions SET principal_id = 'user:ghost' WHERE id = 'sess_5'")
    side.execute("UPDATE rollup_principal SET calls = 7 WHERE principal = 'user:1'")
    side.close()
    out = io.StringIO()
    with pytest.raises(CommandError, match="drifted"):
        call_command("sync_index", "--verify", stdout=out)
    text = out.getvalue()
    assert "'sess_2': rollups counts 8, store 5" in text
    assert "'sess_5': index holds" in text and "user:ghost" in text
    assert "principals: 1 drifted" in text and "'user:1': totals (3, 15, 7," in text


@STORE_DB
def test_verify_reports_calls_whose_keys_name_no_row(store, var_dir):
    busy_store(store)
    for n in range(3):
        store.add_message("sess_1", "tool", "", tool_name="fs.read", tool_duration_ms=n)
    sync.sync_once()
    side = sidedb.connect()
    # A tool's name lost while its calls stay: the tool pages would no longer see them.
    (tool,) = side.execute("SELECT tool FROM rollup_call LIMIT 1").fetchone()
    (n,) = side.execute("SELECT count(*) FROM rollup_call WHERE tool = ?", [tool]).fetchone()
    side.execute("DELETE FROM rollup_tools WHERE key = ?", [tool])
    side.close()
    out = io.StringIO()
    with pytest.raises(CommandError, match="drifted"):
        call_command("sync_index", "--verify", stdout=out)
    assert f"{n:,} calls name a tool key that has no row" in out.getvalue()


@STORE_DB
def test_verify_counts_rows_changed_since_the_pass_as_pending_not_drift(store, var_dir):
    busy_store(store)
    sync.sync_once()
    store.execute("UPDATE sessions SET title = 'edited later' WHERE id = 'sess_0'")
    store.add_session("sess_new")
    verdict = verify.verify()
    assert verdict.ok, verdict.lines()
    assert verdict.pending == 2 and verdict.sessions == 7


@STORE_DB
def test_rows_written_again_deleted_and_edited_are_each_seen_once(store, var_dir):
    busy_store(store, sessions=9, per=2)
    sync.sync_once()
    for sid in ("sess_0", "sess_1", "sess_4"):
        store.execute("DELETE FROM session_messages WHERE session_id = ?", (sid,))
        store.execute("DELETE FROM sessions WHERE id = ?", (sid,))
    # Rows written again get new rowids: the same row at another place in the walk,
    # once as it was and once with a new title.
    with store.connect() as conn:
        conn.execute("PRAGMA foreign_keys = OFF")  # the messages stay with the id
        for sid, title in (("sess_2", None), ("sess_3", "osprey")):
            conn.execute("CREATE TEMP TABLE again AS SELECT * FROM sessions WHERE id = ?", (sid,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
            conn.execute("INSERT INTO sessions SELECT * FROM again")
            conn.execute(
                "UPDATE sessions SET title = coalesce(?, title) WHERE id = ?", (title, sid)
            )
            conn.execute("DROP TABLE again")
    store.execute("UPDATE sessions SET title = 'heron' WHERE id = 'sess_7'")
    store.add_session("sess_new", principal="user:9", title="late")
    report = sync.sync_once()
    assert report.sessions_forgotten == 3
    # sess_new, sess_7 edited in place, sess_2 and sess_3 taken in again (new rowids).
    assert report.sessions_added + report.sessions_updated + report.sessions_retaken == 4
    for word in ("osprey", "heron"):
        assert side_rows(
            "SELECT count(*) FROM search_sessions WHERE fold LIKE ?", (word + "%",)
        ) == [(1,)]
    assert side_rows("SELECT srowid FROM sync_sessions WHERE id = 'sess_2'") == list(
        store.execute("SELECT rowid FROM sessions WHERE id = 'sess_2'")
    )
    assert_no_drift()
    again = sync.sync_once()  # and the next pass finds nothing
    assert (again.sessions_updated, again.sessions_retaken, again.sessions_added) == (0, 0, 0)


@STORE_DB
def test_an_id_created_again_with_the_very_same_row_drops_the_old_messages(store, var_dir):
    busy_store(store)
    sync.sync_once()
    row = store.execute("SELECT * FROM sessions WHERE id = 'sess_1'")[0]
    store.execute("DELETE FROM session_messages WHERE session_id = 'sess_1'")
    store.execute("DELETE FROM sessions WHERE id = 'sess_1'")
    store.execute(f"INSERT INTO sessions VALUES ({', '.join('?' * len(row))})", row)
    # Every column as before; only the rowid tells it is a new row.
    sync.sync_once()
    counts = dict(side_rows("SELECT session_id, messages FROM rollup_session"))
    assert counts["sess_1"] == 0 and counts["sess_0"] == 5
    assert indexed_messages() == 25
    assert_no_drift()


#: A session id that is TEXT but not valid UTF-8 (a writer that cut "€" short).
ODD_ID = "CAST(X'6f64642de282' AS TEXT)"


def found_by_search(word: str) -> set[int]:
    from sessions_admin.ourdata.index import search as index_search
    from sessions_admin.ourdata.index.search import SearchQuery

    page = index_search.search(SearchQuery(q=word))
    return {hit.message.id for group in page.groups for hit in group.hits}


@STORE_DB
def test_a_session_whose_id_is_not_utf8_stays_searchable_pass_after_pass(store, var_dir):
    """Every pass after a build used to forget it: the walk met an id it could not
    decode and took the session for deleted, and the index answered differently
    after a rebuild and after the next pass."""
    busy_store(store, sessions=2, per=2)
    store.execute(
        f"INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count, "
        f"created_at, last_active) VALUES ({ODD_ID}, 'web', 'default', 'user:odd', 'odd one', "
        f"1, {BASE_MS}, {BASE_MS})"
    )
    store.execute(
        "INSERT INTO session_messages (session_id, role, content, ts) "
        f"VALUES ({ODD_ID}, 'user', 'osprey nest', {BASE_MS})"
    )
    ((odd_message,),) = store.execute("SELECT max(id) FROM session_messages")
    sync.sync_once()
    assert found_by_search("osprey") == {odd_message}
    for _ in range(2):  # an idle pass, then one after the row is edited
        report = sync.sync_once()
        assert report.sessions_forgotten == 0
        assert found_by_search("osprey") == {odd_message}
        assert indexed_messages() == store.count("session_messages")
        assert_no_drift()
        store.execute(f"UPDATE sessions SET title = 'odd, renamed' WHERE id = {ODD_ID}")
    store.execute(f"DELETE FROM session_messages WHERE session_id = {ODD_ID}")
    store.execute(f"DELETE FROM sessions WHERE id = {ODD_ID}")
    report = sync.sync_once()
    assert report.sessions_forgotten == 1
    assert found_by_search("osprey") == set()
    assert indexed_messages() == store.count("session_messages") == 4
    assert_no_drift()
