"""Fixtures: stores built from the runtime's schema, the three kinds of user, a synced store.

Only Django's own database is created by pytest-django; the ``agents``
connection is pointed at a store file each test builds (never at a real one).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from random import Random

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connections
from django.test import Client

from sessions_admin import clock, deletion
from sessions_admin.ourdata import sync
from sessions_admin.store.health import forget_cached_status
from tests import rollupdata
from tests.frames_files import jl
from tests.storebuilder import StoreBuilder, create_store

STORE_DB = pytest.mark.django_db(transaction=True, databases=["default", "agents"])

#: Test modules whose subject is Django's own database (users and permissions,
#: login throttling, the deletion audit, the admin): ``.ci/run`` runs them a
#: second time on PostgreSQL (``-m ourdb``). The whole suite there would cost
#: minutes of table flushes for no new coverage.
DJANGO_SIDE_MODULES = {
    "test_access",
    "test_admin",
    "test_erasure_principals",
    "test_fleet",
    "test_jobs",
    "test_store_identity",
    "test_store_ids_exact",
    "test_migrations_carry_data",
    "test_login_throttling",
    "test_logs",
    "test_postgres",
    "test_review_claims",
    "test_review_deletes",
    "test_views_labels",
    "test_views_labelled_copies",
    "test_views_notes",
    "test_views_reviews",
    "test_views_deletes",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if (
            item.module is not None
            and item.module.__name__.rsplit(".", 1)[-1] in DJANGO_SIDE_MODULES
        ):
            item.add_marker(pytest.mark.ourdb)


@pytest.fixture(scope="session")
def django_db_setup(django_test_environment, django_db_blocker, tmp_path_factory):
    from django.test.utils import setup_databases, teardown_databases

    neutral = tmp_path_factory.mktemp("neutral") / "store.db"
    create_store(neutral)
    point_store_at(neutral)
    with django_db_blocker.unblock():
        config = setup_databases(verbosity=0, interactive=False, aliases={"default"})
    yield neutral
    with django_db_blocker.unblock():
        teardown_databases(config, verbosity=0)


def point_store_at(path: Path, *, read_only: bool = False) -> None:
    connection = connections["agents"]
    connection.close()
    connection.settings_dict["NAME"] = str(path)
    connection.settings_dict["OPTIONS"]["read_only"] = read_only
    forget_cached_status()


@pytest.fixture
def store(tmp_path, settings, django_db_setup) -> Iterator[StoreBuilder]:
    """An empty store from schema.sql in a fresh host home, used by the app."""
    builder = StoreBuilder(tmp_path / "home")
    create_store(builder.path)
    builder.frames_root.mkdir(parents=True)
    settings.FRAMES_DIR = builder.frames_root
    point_store_at(builder.path)
    yield builder
    point_store_at(django_db_setup)


def _user(
    username: str, *, staff: bool, perms: tuple[str, ...] = (), superuser: bool = False
) -> User:
    user = User.objects.create_user(
        username, password="pw-" + username, is_staff=staff, is_superuser=superuser
    )
    for codename in perms:
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="sessions_admin")
        )
    return user


def staff_user_with(codename: str) -> User:
    """A staff member who may view sessions and do what ``codename`` allows."""
    return _user(f"may-{codename}", staff=True, perms=("view_session", codename))


def staff_client_with(codename: str, *, enforce_csrf_checks: bool = False) -> Client:
    client = Client(enforce_csrf_checks=enforce_csrf_checks)
    client.force_login(staff_user_with(codename))
    return client


@pytest.fixture
def admin_user(db) -> User:
    return _user("root", staff=True, superuser=True)


@pytest.fixture
def staff_client(db) -> Client:
    """A staff member who may view and delete sessions (not clear all)."""
    client = Client()
    client.force_login(_user("staff", staff=True, perms=("view_session", "delete_session")))
    return client


@pytest.fixture
def viewer_client(db) -> Client:
    """A staff member who may only look."""
    client = Client()
    client.force_login(_user("viewer", staff=True, perms=("view_session",)))
    return client


@pytest.fixture
def annotator(db) -> User:
    """A staff member who may view, annotate and manage review queues."""
    return _user(
        "annotator", staff=True, perms=("view_session", "annotate", "manage_review_queues")
    )


@pytest.fixture
def annotator_client(annotator) -> Client:
    client = Client()
    client.force_login(annotator)
    return client


@pytest.fixture
def admin_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def nonstaff_client(db) -> Client:
    client = Client()
    client.force_login(_user("outsider", staff=False))
    return client


@pytest.fixture
def var_dir(tmp_path, settings) -> Path:
    """A data folder of the test's own, so each test gets a fresh side database."""
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    return settings.VAR_DIR


@pytest.fixture
def old() -> float:
    """An mtime long enough ago that the live tail does not start."""
    return time.time() - 3600


@pytest.fixture
def outside(tmp_path) -> Path:
    """A directory outside the frames root holding a secret request file."""
    place = tmp_path / "outside"
    place.mkdir()
    secret = {"kind": "SECRET-FRAME", "traceId": "tr-x"}
    (place / "activity-req.jsonl").write_text(json.dumps(secret) + "\n")
    (place / "secret.txt").write_text("SECRET-TEXT\n")
    return place


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty frames root for the store layer's own tests."""
    r = tmp_path / "sessions"
    r.mkdir()
    return r


@pytest.fixture
def foreign_dir(tmp_path: Path) -> Path:
    """A directory outside the frames root with a file that must never be read or removed."""
    o = tmp_path / "outside"
    o.mkdir()
    (o / "activity-secret.jsonl").write_bytes(jl({"secret": True}))
    (o / "passwd").write_text("root:x:0:0\n")
    return o


@pytest.fixture
def conversation(store):
    """A small session with a call and its result, state, and every role."""
    sid = store.add_session(
        "sess_demo",
        target="infra.deployer",
        profile="edit",
        principal="user:alice",
        title="deploy rollback plan",
        turn_count=3,
    )
    ids = {
        "user": store.add_message(sid, "user", "Roll back\n    billing  please", trace_id="tr-1"),
        "call": store.add_message(
            sid,
            "assistant",
            "I'll check.",
            tool_call_id="call_7a",
            model_id="claude-x",
            trace_id="tr-1",
            span_id="sp-2",
        ),
        "tool": store.add_message(
            sid,
            "tool",
            "",
            tool_name="registry.lookup",
            tool_call_id="call_7a",
            tool_target="system.registry",
            tool_op="lookup",
            tool_args={"path": "/srv", "limit": 20},
            tool_result={"ok": True, "rows": 3},
            tool_duration_ms=120,
            trace_id="tr-1",
            span_id="sp-3",
        ),
        "slow": store.add_message(
            sid,
            "tool",
            "",
            tool_name="sql.query",
            tool_call_id="call_9b",
            tool_op="select",
            tool_args={"q": 1},
            tool_result={"ok": False, "error": "timeout"},
            tool_duration_ms=4200,
        ),
        "system": store.add_message(sid, "system", "be brief"),
        "other": store.add_message(sid, "critic", "looks fine"),
    }
    store.add_state(sid, "snapshot", {"root": {"children": [1, 2]}})
    store.add_state(sid, "repl_state", "{broken")
    return sid, ids


@pytest.fixture
def synced(store, settings, tmp_path, monkeypatch):
    """A store full of calls, synced by the runner, with "now" just after its last message."""
    settings.VAR_DIR = tmp_path / "var"
    rollupdata.fill_store(store, Random(13), sessions=12)
    sync.sync_once()
    last = store.execute("SELECT max(ts) FROM session_messages")[0][0]
    monkeypatch.setattr(clock, "now_ms", lambda: last + 1000)
    return store


@pytest.fixture
def fast_pacing(monkeypatch):
    """Small batches and short pauses, so bulk paths run many batches quickly."""
    monkeypatch.setattr(deletion.bulk, "MIN_PAUSE_MS", 0)
    monkeypatch.setattr(deletion.bulk, "PAUSE_FRACTION", 0)
