"""Fixtures: stores built from the runtime's schema, and the three kinds of user.

Only Django's own database is created by pytest-django; the ``agents``
connection is pointed at a store file each test builds (never at a real one).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connections
from django.test import Client

from sessions_admin.store.health import forget_cached_status
from tests.storebuilder import StoreBuilder, create_store

STORE_DB = pytest.mark.django_db(transaction=True, databases=["default", "agents"])

#: Test modules whose subject is Django's own database (users and permissions,
#: login throttling, the deletion audit, the admin): ``.ci/run`` runs them a
#: second time on PostgreSQL (``-m ourdb``). The whole suite there would cost
#: minutes of table flushes for no new coverage.
DJANGO_SIDE_MODULES = {
    "test_access",
    "test_admin",
    "test_login_throttling",
    "test_logs",
    "test_postgres",
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
def admin_client(admin_user) -> Client:
    client = Client()
    client.force_login(admin_user)
    return client


@pytest.fixture
def nonstaff_client(db) -> Client:
    client = Client()
    client.force_login(_user("outsider", staff=False))
    return client
