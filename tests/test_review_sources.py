"""A queue made from a list takes exactly the sessions that list shows: the "no principal"
page's sessions (not the whole store), and never an odd id's description ("no id
(NULL)", "binary value, 12 bytes") in place of a session id."""

from __future__ import annotations

import sqlite3

import pytest

from sessions_admin.demo import build_demo_home
from sessions_admin.demo.hostile import plant_hostile
from sessions_admin.models import ReviewItem, ReviewQueue
from sessions_admin.ourdata.review.forget import forget_gone
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import BASE_MS

#: Ids a store may hold that no text id names: NULL, a BLOB, TEXT that is not UTF-8.
ODD_IDS = {
    "NULL": "NULL",
    "BLOB": "X'000102030405060708090a0b'",
    "undecodable": "CAST(X'61ff' AS TEXT)",
}


def make(client, source: str) -> tuple[object, ReviewQueue | None]:
    response = client.post("/reviews/", {"name": "q", "source": source})
    return response, ReviewQueue.objects.filter(name="q").first()


def order(queue: ReviewQueue) -> list[str]:
    return list(queue.items.order_by("position").values_list("session_id", flat=True))


@pytest.fixture
def principals(store):
    """Two sessions with an empty principal, one with none (NULL), three of alice's."""
    for number, principal in enumerate(["", "", None, "user:alice", "user:alice", "user:alice"]):
        store.add_session(
            f"sess_{number}", principal=principal, last_active=BASE_MS + number * 60_000
        )


@STORE_DB
def test_the_no_principal_link_takes_the_sessions_with_an_empty_principal_only(
    principals, annotator_client
):
    response, queue = make(annotator_client, "/principals/~/?id=")
    assert response.status_code == 303
    assert order(queue) == ["sess_1", "sess_0"]  # newest first, as the lists show
    assert (queue.total, queue.capped) == (2, False)


@STORE_DB
def test_a_principal_source_still_takes_that_principals_sessions(principals, annotator_client):
    _, queue = make(annotator_client, "/principals/user%3Aalice/")
    assert order(queue) == ["sess_5", "sess_4", "sess_3"]


@pytest.fixture
def odd_ids(store):
    store.add_session("sess_text", last_active=BASE_MS)
    for number, id_sql in enumerate(ODD_IDS.values(), start=1):
        store.execute(
            f"INSERT INTO sessions (id, target_key, profile_key, principal_id, created_at, "
            f"last_active) VALUES ({id_sql}, 't', 'default', 'user:alice', ?, ?)",
            (BASE_MS + number, BASE_MS + number * 60_000),
        )


@pytest.mark.parametrize("source", ["/sessions/", "/principals/user%3Aalice/"])
@STORE_DB
def test_a_queue_never_takes_an_odd_ids_description_for_a_session_id(
    odd_ids, annotator_client, source
):
    response, queue = make(annotator_client, source)
    assert response.status_code == 303
    assert order(queue) == ["sess_text"]
    assert queue.total == 1 and queue.skipped == 3
    page = annotator_client.get(response["Location"]).content.decode()
    assert "3 sessions the source listed are not in this queue" in page


@STORE_DB
def test_the_next_sync_marks_none_of_a_queues_items_deleted(odd_ids, annotator_client):
    _, queue = make(annotator_client, "/sessions/")
    forget_gone()  # what each sync_index pass runs
    assert not ReviewItem.objects.filter(queue=queue, session_deleted=True).exists()


@pytest.fixture
def hostile_demo(tmp_path, settings, django_db_setup):
    summary = build_demo_home(tmp_path / "home", sessions=60, seed=7)
    plant_hostile(summary.store_path, summary.frames_root)
    settings.FRAMES_DIR = summary.frames_root
    point_store_at(summary.store_path)
    yield summary.store_path
    point_store_at(django_db_setup)


def store_text_ids(path) -> set[str]:
    with sqlite3.connect(path) as conn:
        return {row[0] for row in conn.execute("SELECT id FROM sessions WHERE typeof(id) = 'text'")}


@pytest.mark.parametrize("source", ["/sessions/", "/principals/user%3Ahostile/"])
@STORE_DB
def test_on_the_hostile_demo_store_every_item_is_a_session_the_store_holds(
    hostile_demo, annotator_client, source
):
    _, queue = make(annotator_client, source)
    items = order(queue)
    assert items and set(items) <= store_text_ids(hostile_demo)
    assert not {"no id (NULL)", "binary value, 12 bytes"} & set(items)
    assert queue.skipped > 0
    forget_gone()
    assert not ReviewItem.objects.filter(queue=queue, session_deleted=True).exists()
