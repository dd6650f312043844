"""Django's own database on PostgreSQL: two dashboard instances share users, lockouts, audit.

These run only where a PostgreSQL server is given (``.ci/run`` starts one with
``scripts/with-postgres``, which sets ``SESSIONS_ADMIN_TEST_DATABASE_URL``);
elsewhere they are skipped with that reason. The rest of the Django-side
tests (marked ``ourdb``) then run against it too.
"""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from urllib.parse import quote

import pytest
from django.db import connections

from tests.prodserver import PASSWORD, Deployment, another_instance, deploy
from tests.storebuilder import StoreBuilder, create_store

TEST_DATABASE_URL = os.environ.get("SESSIONS_ADMIN_TEST_DATABASE_URL", "")
pytestmark = [
    pytest.mark.ourdb,
    pytest.mark.skipif(
        not TEST_DATABASE_URL,
        reason="Django's database is not PostgreSQL in this run: "
        "scripts/with-postgres provides one (.ci/run does)",
    ),
]


@pytest.mark.django_db
def test_django_s_own_tables_are_on_postgresql_and_the_store_stays_sqlite():
    assert connections["default"].vendor == "postgresql"
    assert connections["agents"].vendor == "sqlite"


@pytest.fixture(scope="module")
def fresh_database() -> str:
    """A database of its own on the test server, dropped afterwards."""
    import dj_database_url
    import psycopg

    config = dj_database_url.parse(TEST_DATABASE_URL)
    params = {
        "host": config["HOST"] or None,
        "port": config["PORT"] or None,
        "user": config["USER"] or None,
        "password": config["PASSWORD"] or None,
        "dbname": config["NAME"],
    }
    name = f"sessions_admin_two_{secrets.token_hex(4)}"
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    base = TEST_DATABASE_URL.rsplit("/", 1)[0]
    yield f"{base}/{name}"
    with psycopg.connect(**params, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def two_instances(tmp_path_factory, fresh_database) -> tuple[Deployment, Deployment]:
    workdir = tmp_path_factory.mktemp("two-instances")
    builder = StoreBuilder(workdir / "home")
    create_store(builder.path)
    builder.frames_root.mkdir(parents=True)
    builder.add_session("sess_shared", title="shared by both")
    first = deploy(workdir, builder.home, DJANGO_DATABASE_URL=fresh_database)
    second = another_instance(first, workdir)
    yield first, second
    second.stop()
    first.stop()


def test_a_login_on_one_instance_holds_on_the_other(two_instances):
    first, second = two_instances
    browser = first.browser()
    assert browser.log_in("admin", PASSWORD).status == 302
    browser.port = second.port
    page = browser.request("GET", "/sessions/")
    assert page.status == 200 and "shared by both" in page.body


def test_a_lockout_on_one_instance_holds_on_the_other(two_instances):
    first, second = two_instances
    for _ in range(5):
        reply = first.browser().log_in("admin", "wrong password")
    assert reply.status == 429
    assert second.browser().log_in("admin", PASSWORD).status == 429
    done = manage(first, "axes_reset_username", "admin")
    assert done.returncode == 0
    assert second.browser().log_in("admin", PASSWORD).status == 302


def test_a_delete_on_one_instance_is_in_the_other_s_audit_log(two_instances):
    first, second = two_instances
    browser = first.browser()
    browser.log_in("admin", PASSWORD)
    assert browser.submit(f"/sessions/{quote('sess_shared')}/delete/", {}).status == 303
    browser.port = second.port
    audits = browser.request("GET", "/admin/sessions_admin/deletionaudit/")
    assert audits.status == 200
    assert "Delete one session" in audits.body and "1 deletion audit" in audits.body


def manage(deployment: Deployment, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=deployment.repo,
        env=deployment.env,
        capture_output=True,
        text=True,
        timeout=60,
    )
