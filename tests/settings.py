"""Test settings: the real settings with a throwaway secret and var dir."""

import os
import tempfile

os.environ.setdefault("DJANGO_SECRET_KEY", "tests-only-" + "x" * 40)
_VAR = tempfile.mkdtemp(prefix="sessions-admin-tests-")
if os.environ.get("PYTEST_XDIST_WORKER"):
    # Each pytest-xdist worker (make test-fast) keeps its own data folder, whatever
    # the process that started it exported.
    os.environ["SESSIONS_ADMIN_VAR_DIR"] = _VAR
os.environ.setdefault("SESSIONS_ADMIN_VAR_DIR", _VAR)
# The suite points the store at files it builds itself (see tests/conftest.py).
os.environ["AGENTS_HOST_HOME"] = os.path.join(_VAR, "no-home-yet")
for _name in (
    "SESSIONS_ADMIN_STORE",
    "SESSIONS_ADMIN_FRAMES_DIR",
    "SESSIONS_ADMIN_READ_ONLY",
    "SESSIONS_ADMIN_TRACE_URL",
    "SESSIONS_ADMIN_RESUME_URL",
    "DJANGO_DATABASE_URL",
    "DJANGO_LOGIN_FAILURE_LIMIT",
    "DJANGO_LOGIN_COOLOFF_MINUTES",
    "DJANGO_PROXY_COUNT",
    "DJANGO_LOG_FORMAT",
):
    os.environ.pop(_name, None)

from sessions_admin.settings import *  # noqa: E402,F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# Django's own test database is a file, not SQLite's shared-cache memory database:
# the review queue's claim is tested with threads writing at once, and a shared
# cache answers "table is locked" at once where a file (as in production) waits in
# the busy handler.
DATABASES["default"]["TEST"] = {"NAME": os.path.join(_VAR, "django-tests.sqlite3")}  # noqa: F405

# .ci/run repeats the Django-side tests with Django's own database on PostgreSQL
# (scripts/with-postgres sets this); the store stays SQLite either way.
if os.environ.get("SESSIONS_ADMIN_TEST_DATABASE_URL"):
    from sessions_admin.env import env_database_url

    DATABASES["default"] = {  # noqa: F405
        **env_database_url("SESSIONS_ADMIN_TEST_DATABASE_URL"),
        "CONN_MAX_AGE": 0,
    }

# The suite points one data folder at many throwaway stores; the store-identity
# tests (tests/test_store_identity.py) turn the check back on.
STORE_IDENTITY_CHECK = False
