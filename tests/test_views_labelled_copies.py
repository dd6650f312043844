"""The list's ?label= pages from our copies of the sort values equal a brute-force
reading of the store, however the runtime changed it between labelling and paging:
messages appended (the sessions move), rows deleted, edited without a message,
re-created under the same id, or holding values no integer orders as."""

from __future__ import annotations

import pytest

from sessions_admin.lists import labelled
from sessions_admin.lists.labelled import labelled_page
from sessions_admin.models import Label, LabelCopiesMark, SessionLabel
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.forget import forget_gone
from sessions_admin.store.connection import run_sql
from sessions_admin.store.queries import SORTS, SessionFilter
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

LABELLED = [f"sess_{n:04d}" for n in range(0, 150, 2)]  # 75: more than a page
FILTERS = [SessionFilter(), SessionFilter(target="ops.pager"), SessionFilter(q="moved")]


@pytest.fixture
def label(store):
    for number in range(150):
        created = BASE_MS + (number * 7 % 40) * 60_000
        store.add_session(
            f"sess_{number:04d}",
            target=("ops.pager", "infra.deployer")[number % 5 < 2],
            turn_count=(None, 0, 2)[number % 3],
            created_at=created,
            last_active=created + (number % 3) * 60_000,  # ties on purpose
        )
    regression = Label.objects.create(name="regression")
    for sid in LABELLED:
        labels.add_label(sid, regression, None)
    forget_gone()  # what each sync_index pass does: the copies' mark is set
    return regression


def brute_force(store, label: Label, session_filter: SessionFilter, sort: str) -> list[str]:
    """Every labelled session the store holds that matches, in SQLite's own order."""
    ids = list(SessionLabel.objects.filter(label=label).values_list("session_id", flat=True))
    column, descending = SORTS[sort]
    clauses, params = session_filter.where()
    where = " AND ".join([f"id IN ({', '.join('?' * len(ids))})", *clauses])
    direction = "DESC" if descending else "ASC"
    expr = "COALESCE(turn_count, 0)" if column == "turn_count" else column
    # The app's connection: the text filter's folding is an SQL function it registers.
    rows = run_sql(
        f"SELECT id FROM sessions WHERE {where} ORDER BY {expr} {direction}, id {direction}",
        [*ids, *params],
    )
    return [row[0] for row in rows]


def paged(label: Label, session_filter: SessionFilter, sort: str) -> tuple[list[str], set[str]]:
    """Every page's ids in turn, and which ways the pages were read."""
    seen, ways, cursor = [], set(), None
    while True:
        page = labelled_page(label, session_filter, sort, cursor, limit=20)
        seen += [row.id for row in page.rows]
        ways.add(page.strategy)
        if page.next_cursor is None:
            return seen, ways
        cursor = page.next_cursor


def assert_every_page_is_the_store(store, label: Label) -> set[str]:
    ways: set[str] = set()
    for session_filter in FILTERS:
        for sort in SORTS:
            seen, used = paged(label, session_filter, sort)
            assert seen == brute_force(store, label, session_filter, sort), (session_filter, sort)
            ways |= used
    return ways


@STORE_DB
def test_pages_from_the_copies_equal_the_store(store, label):
    assert assert_every_page_is_the_store(store, label) == {"label copies"}


@STORE_DB
def test_sessions_the_runtime_touched_deleted_or_renamed_since_the_pass_are_placed_right(
    store, label
):
    for sid in ("sess_0148", "sess_0010", "sess_0002"):
        store.add_message(sid, ts=BASE_MS + 90 * 60_000)  # the trigger moves them to the top
    store.add_message("sess_0004", role="assistant", ts=BASE_MS - 60_000)  # back in time
    with store.connect() as conn:  # the runtime's cascade and a title it derived
        for sid in ("sess_0000", "sess_0020"):
            conn.execute("DELETE FROM session_messages WHERE session_id = ?", (sid,))
            conn.execute("DELETE FROM sessions WHERE id = ?", (sid,))
        conn.execute("UPDATE sessions SET title = 'moved' WHERE id IN ('sess_0040', 'sess_0041')")
    assert assert_every_page_is_the_store(store, label) == {"label copies"}
    top = labelled_page(label, SessionFilter(), "-last_active", None).rows
    assert [row.id for row in top[:3]] == ["sess_0148", "sess_0010", "sess_0002"]


@STORE_DB
def test_a_session_the_runtime_re_created_is_placed_right_then_forgotten(store, label):
    with store.connect() as conn:  # deleted, then created again and prompted
        conn.execute("DELETE FROM sessions WHERE id = 'sess_0060'")
        conn.execute(
            "INSERT INTO sessions (id, target_key, created_at, last_active) "
            f"VALUES ('sess_0060', 'ops.pager', {BASE_MS + 1}, {BASE_MS + 1})"
        )
    store.add_message("sess_0060", ts=BASE_MS + 99 * 60_000)
    assert assert_every_page_is_the_store(store, label) >= {"label copies"}
    forget_gone()  # the next pass: the new session is not the one labelled
    assert not SessionLabel.objects.filter(session_id="sess_0060").exists()
    assert assert_every_page_is_the_store(store, label) == {"label copies"}


@STORE_DB
def test_a_row_edited_without_a_message_is_read_the_exact_way_and_its_copy_corrected(store, label):
    with store.connect() as conn:  # not the runtime's way: its trigger moves last_active
        conn.execute(f"UPDATE sessions SET last_active = {BASE_MS} WHERE id = 'sess_0030'")
    assert "among" in assert_every_page_is_the_store(store, label)
    assert SessionLabel.objects.get(session_id="sess_0030").session_last_active == BASE_MS
    assert assert_every_page_is_the_store(store, label) == {"label copies"}


@STORE_DB
def test_values_no_integer_orders_as_are_read_the_exact_way(store, label):
    with store.connect() as conn:
        conn.execute("UPDATE sessions SET last_active = 'soon' WHERE id = 'sess_0012'")
        conn.execute("UPDATE sessions SET turn_count = 2.5 WHERE id = 'sess_0014'")
        # The same moment as a REAL: the same session, and the same place in SQLite's order.
        conn.execute("UPDATE sessions SET created_at = created_at * 1.0 WHERE id = 'sess_0016'")
    forget_gone()
    assert SessionLabel.objects.get(session_id="sess_0012").session_last_active is None
    assert SessionLabel.objects.get(session_id="sess_0016").session_created_at is not None
    ways = assert_every_page_is_the_store(store, label)
    assert "among" in ways and "label copies" in ways  # created_at sorts from the copies


@STORE_DB
def test_without_a_pass_or_far_behind_the_pages_are_read_the_exact_way(store, label, monkeypatch):
    LabelCopiesMark.objects.all().delete()
    assert assert_every_page_is_the_store(store, label) == {"among"}
    forget_gone()
    monkeypatch.setattr(labelled, "TOUCHED_CAP", 2)
    for _ in range(3):
        store.add_message("sess_0008")
    assert assert_every_page_is_the_store(store, label) == {"among"}


@STORE_DB
def test_a_label_put_on_after_the_pass_is_listed_at_its_place(store, label):
    labels.add_label("sess_0001", label, None)
    store.add_message("sess_0003")  # unlabelled: moves nothing of the label's
    seen, ways = paged(label, SessionFilter(), "-last_active")
    assert "sess_0001" in seen and ways == {"label copies"}
    assert seen == brute_force(store, label, SessionFilter(), "-last_active")
