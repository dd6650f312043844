"""A broken store gets a clear sentence: on the console, in the browser, on /healthz."""

import sqlite3

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError
from django.db import connections

from sessions_admin.checks import check_store_schema
from tests.conftest import STORE_DB, point_store_at
from tests.storebuilder import SCHEMA, create_store


def break_store(store, how: str) -> str:
    """Damage the test store one way; return the phrase staff should read."""
    if how == "missing":
        store.path.unlink()
        return "does not exist"
    if how == "not sqlite":
        store.path.write_bytes(b"this is a text file, not a database\n" * 200)
        return "not an SQLite database"
    if how == "missing table":
        store.path.unlink()
        create_store(
            store.path,
            schema="CREATE TABLE sessions (id TEXT PRIMARY KEY);PRAGMA user_version = 2;",
        )
        return "no `session_messages` table"
    if how == "missing column":
        store.path.unlink()
        text = SCHEMA.read_text().replace("  tool_op       TEXT,\n", "")
        create_store(store.path, schema=text)
        return "lacks column(s) tool_op"
    if how == "old version":
        with sqlite3.connect(store.path) as conn:
            conn.execute("PRAGMA user_version = 1")
        return "schema version 1"
    raise AssertionError(how)


CASES = ["missing", "not sqlite", "missing table", "missing column", "old version"]


@pytest.mark.parametrize("how", CASES)
@STORE_DB
def test_each_broken_store_is_a_system_check_error_with_a_clear_message(store, how):
    phrase = break_store(store, how)
    point_store_at(store.path)
    messages = check_store_schema()
    assert messages and messages[0].is_serious()
    assert phrase in " ".join(message.msg for message in messages)
    with pytest.raises(SystemCheckError, match="sessions_admin.E001"):
        call_command("check")


@pytest.mark.parametrize("how", CASES)
@STORE_DB
def test_each_broken_store_gives_a_friendly_page_not_a_traceback(store, admin_client, how):
    phrase = break_store(store, how)
    point_store_at(store.path)
    response = admin_client.get("/sessions/")
    assert response.status_code == 503
    assert phrase in response.content.decode()
    assert b"Traceback" not in response.content


@pytest.mark.parametrize("how", CASES)
@STORE_DB
def test_the_health_check_answers_503_with_the_problem_and_no_paths(store, client, how):
    break_store(store, how)
    point_store_at(store.path)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "error" and body["problems"]
    assert str(store.path) not in response.content.decode()


@STORE_DB
def test_a_newer_schema_version_is_a_warning_not_a_refusal(store, admin_client, client):
    with sqlite3.connect(store.path) as conn:
        conn.execute("PRAGMA user_version = 3")
    point_store_at(store.path)
    messages = check_store_schema()
    assert [m.id for m in messages] == ["sessions_admin.W001"]
    assert admin_client.get("/sessions/").status_code == 200
    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["warnings"]


@STORE_DB
def test_a_store_locked_by_the_runtime_gives_a_friendly_page(store, admin_client, settings):
    store.add_session()
    connection = connections["agents"]
    connection.settings_dict["OPTIONS"]["timeout"] = 0.2
    connection.close()
    locker = sqlite3.connect(store.path, check_same_thread=False)
    locker.execute("PRAGMA locking_mode = EXCLUSIVE")
    locker.execute("BEGIN EXCLUSIVE")
    try:
        response = admin_client.get("/sessions/")
    finally:
        locker.rollback()
        locker.close()
        connection.settings_dict["OPTIONS"]["timeout"] = 5.0
        connection.close()
    assert response.status_code == 503
    assert b"locked" in response.content
