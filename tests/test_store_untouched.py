"""The store is not ours: nothing we run creates, alters or drops anything in it."""

import hashlib

import pytest
from django.core.management import call_command
from django.db import DatabaseError, connections

from tests.conftest import STORE_DB


def fingerprint(store) -> tuple:
    return store.schema_objects(), hashlib.sha256(store.path.read_bytes()).hexdigest()


@STORE_DB
def test_migrate_leaves_the_store_byte_for_byte_unchanged(store):
    store.add_session()
    before = fingerprint(store)
    call_command("migrate", verbosity=0, skip_checks=True)
    assert fingerprint(store) == before


@STORE_DB
def test_migrate_into_the_store_is_refused_and_creates_nothing(store):
    before = fingerprint(store)
    with pytest.raises(DatabaseError, match="not authorized"):
        call_command("migrate", database="agents", verbosity=0, skip_checks=True)
    assert fingerprint(store) == before
    assert "django_migrations" not in [row[1] for row in store.schema_objects()]


@STORE_DB
def test_the_suite_setup_leaves_a_store_exactly_as_the_schema_builds_it(store, tmp_path):
    from tests.storebuilder import StoreBuilder, create_store

    reference = StoreBuilder(tmp_path / "reference")
    create_store(reference.path)
    connections["agents"].ensure_connection()
    assert store.schema_objects() == reference.schema_objects()


@STORE_DB
def test_browsing_every_page_leaves_the_store_file_unchanged(store, admin_client):
    session_id = store.add_session(title="t")
    store.add_message(session_id, "user", "hi")
    store.add_state(session_id, "repl_state", {"a": 1})
    before = fingerprint(store)
    for url in ["/sessions/", "/targets/", f"/sessions/{session_id}/", "/healthz"]:
        assert admin_client.get(url).status_code == 200, url
    connections["agents"].close()
    assert fingerprint(store) == before


@pytest.mark.parametrize(
    "statement",
    [
        "CREATE TABLE intruder (x)",
        "DROP TABLE memory_records",
        "ALTER TABLE sessions ADD COLUMN extra TEXT",
        "CREATE INDEX idx_extra ON sessions(title)",
        "INSERT INTO sessions (id, target_key, created_at, last_active) VALUES ('x', 't', 1, 1)",
        "UPDATE sessions SET title = 'changed'",
        "DELETE FROM memory_records",
        "PRAGMA journal_mode = DELETE",
        "PRAGMA user_version = 3",
        "ATTACH DATABASE ':memory:' AS other",
        "DROP TRIGGER trg_session_messages_touch",
    ],
)
@STORE_DB
def test_the_store_connection_refuses_anything_that_would_change_the_store(store, statement):
    store.add_session()
    before = fingerprint(store)
    with pytest.raises(DatabaseError), connections["agents"].cursor() as cursor:
        cursor.execute(statement)
    connections["agents"].close()
    assert fingerprint(store) == before


@STORE_DB
def test_a_demo_store_passes_the_schema_check_and_the_dashboard_leaves_it_unchanged(
    tmp_path, settings, admin_client
):
    from sessions_admin.demo import build_demo_home
    from sessions_admin.store.health import check_store
    from tests.conftest import point_store_at
    from tests.storebuilder import StoreBuilder

    home = tmp_path / "demo"
    build_demo_home(home, sessions=40, messages_per_session=8, seed=5, now_ms=1_764_000_000_000)
    demo = StoreBuilder(home)
    status = check_store(demo.path, read_only=True)
    assert status.ok and not status.warnings, status.errors
    point_store_at(demo.path)
    settings.FRAMES_DIR = demo.frames_root
    before = fingerprint(demo)
    call_command("migrate", verbosity=0, skip_checks=True)
    session_id = demo.execute("SELECT id FROM sessions ORDER BY last_active DESC LIMIT 1")[0][0]
    for url in [
        "/sessions/",
        "/targets/",
        f"/sessions/{session_id}/",
        f"/sessions/{session_id}/frames/",
        "/frames/orphans/",
        "/healthz",
    ]:
        assert admin_client.get(url).status_code == 200, url
    connections["agents"].close()
    assert fingerprint(demo) == before
