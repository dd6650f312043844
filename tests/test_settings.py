"""Configuration comes from the environment; a bad value stops the start with its name."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GOOD = {"DJANGO_SECRET_KEY": "s" * 50, "DJANGO_SETTINGS_MODULE": "sessions_admin.settings"}


DEBUG_CODE = "from django.conf import settings as s; print(s.DEBUG)"


def start(tmp_path: Path, code: str = DEBUG_CODE, **env: str) -> subprocess.CompletedProcess:
    """Start Django in a child process with only ``env`` set; run ``code`` after setup."""
    environment = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "SESSIONS_ADMIN_", "AGENTS_"))
    }
    environment.update(GOOD, SESSIONS_ADMIN_VAR_DIR=str(tmp_path))
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup(); {code}"],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize(
    "name, value",
    [
        ("DJANGO_DEBUG", "maybe"),
        ("SESSIONS_ADMIN_READ_ONLY", "sometimes"),
        ("SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS", "fast"),
        ("SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS", "5"),
        ("SESSIONS_ADMIN_BUSY_TIMEOUT_MS", "-1"),
        ("DJANGO_ALLOWED_HOSTS", " , "),
        ("SESSIONS_ADMIN_TRACE_URL", "https://tracing.example/trace/"),
        ("SESSIONS_ADMIN_TRACE_URL", "javascript:alert({trace_id})"),
        ("DJANGO_SECRET_KEY", "short"),
        ("DJANGO_DATABASE_URL", "mysql://u@h/db"),
        ("DJANGO_DATABASE_URL", "not a url"),
        ("DJANGO_DATABASE_URL", "postgres://u@host"),
        ("DJANGO_LOG_FORMAT", "xml"),
        ("DJANGO_LOGIN_FAILURE_LIMIT", "0"),
        ("DJANGO_HSTS_PRELOAD", "perhaps"),
    ],
)
def test_a_bad_value_fails_at_start_with_a_message_naming_the_variable(tmp_path, name, value):
    result = start(tmp_path, **{name: value})
    assert result.returncode != 0
    assert "ImproperlyConfigured" in result.stderr
    assert name in result.stderr


def test_a_missing_secret_key_fails_at_start(tmp_path):
    result = start(tmp_path, DJANGO_SECRET_KEY="")
    assert result.returncode != 0 and "DJANGO_SECRET_KEY is not set" in result.stderr


def test_debug_is_off_unless_asked(tmp_path):
    assert start(tmp_path).stdout.strip() == "False"
    assert start(tmp_path, DJANGO_DEBUG="1").stdout.strip() == "True"


def test_the_store_paths_follow_the_host_home_and_its_overrides(tmp_path):
    code = (
        "from django.conf import settings as s; print(s.DATABASES['agents']['NAME']); "
        "print(s.FRAMES_DIR); print(s.DATABASES['agents']['OPTIONS']['read_only'])"
    )
    assert start(tmp_path, code, AGENTS_HOST_HOME="/srv/home").stdout.split() == [
        "/srv/home/data/agents/store.db",
        "/srv/home/sessions",
        "False",
    ]
    overridden = start(
        tmp_path,
        code,
        AGENTS_HOST_HOME="/srv/home",
        SESSIONS_ADMIN_STORE="/x/s.db",
        SESSIONS_ADMIN_FRAMES_DIR="/y/frames",
        SESSIONS_ADMIN_READ_ONLY="1",
    )
    assert overridden.stdout.split() == ["/x/s.db", "/y/frames", "True"]


def test_behind_a_tls_proxy_cookies_are_secure_and_hsts_and_redirects_can_be_asked_for(tmp_path):
    code = (
        "from django.conf import settings as s; "
        "print(s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SECURE_SSL_REDIRECT, "
        "s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER[0])"
    )
    result = start(
        tmp_path,
        code,
        DJANGO_BEHIND_TLS_PROXY="1",
        DJANGO_SSL_REDIRECT="1",
        DJANGO_HSTS_SECONDS="3600",
    )
    assert result.stdout.split() == ["True", "True", "True", "3600", "HTTP_X_FORWARDED_PROTO"]


def test_a_missing_data_folder_is_created(tmp_path):
    folder = tmp_path / "fresh" / "var"
    assert start(tmp_path, SESSIONS_ADMIN_VAR_DIR=str(folder)).returncode == 0
    assert folder.is_dir()


def test_a_data_folder_that_cannot_be_made_is_refused_naming_the_variable(tmp_path):
    (tmp_path / "a-file").write_text("")
    result = start(tmp_path, SESSIONS_ADMIN_VAR_DIR=str(tmp_path / "a-file" / "var"))
    assert result.returncode != 0
    assert "cannot be created" in result.stderr
    assert "set SESSIONS_ADMIN_VAR_DIR to a folder this user may write" in result.stderr


DATABASE_CODE = (
    "from django.conf import settings as s; d = s.DATABASES['default']; "
    "print(d['ENGINE'], d['NAME'], d['HOST'], d['PORT'], s.DATABASES['agents']['ENGINE'])"
)


def test_django_s_own_database_is_sqlite_in_the_data_folder_unless_a_url_says_otherwise(tmp_path):
    assert start(tmp_path, DATABASE_CODE).stdout.split() == [
        "django.db.backends.sqlite3",
        str(tmp_path / "django.sqlite3"),
        "sessions_admin.store.backend",
    ]
    url = "postgres://dash:secret@db.internal:5433/sessions_admin"
    assert start(tmp_path, DATABASE_CODE, DJANGO_DATABASE_URL=url).stdout.split() == [
        "django.db.backends.postgresql",
        "sessions_admin",
        "db.internal",
        "5433",
        "sessions_admin.store.backend",
    ]


def test_django_s_own_sqlite_database_commits_without_waiting_for_the_disk(tmp_path):
    code = (
        "from django.db import connection as c; cur = c.cursor(); "
        "print(cur.execute('PRAGMA journal_mode').fetchone()[0], "
        "cur.execute('PRAGMA synchronous').fetchone()[0])"
    )
    assert start(tmp_path, code).stdout.split() == ["wal", "1"]  # 1: NORMAL


def test_the_log_format_is_json_unless_text_is_asked_for(tmp_path):
    code = "from django.conf import settings as s; print(s.LOGGING['handlers']['console'])"
    assert "'formatter': 'json'" in start(tmp_path, code).stdout
    assert "'formatter': 'text'" in start(tmp_path, code, DJANGO_LOG_FORMAT="text").stdout


SILENCED = "from django.conf import settings as s; print(sorted(s.SILENCED_SYSTEM_CHECKS))"


def test_hsts_choices_left_unset_keep_their_deploy_warning(tmp_path):
    assert start(tmp_path, SILENCED).stdout.strip() == "[]"


def test_hsts_choices_said_no_to_are_taken_as_decided(tmp_path):
    result = start(
        tmp_path,
        SILENCED,
        DJANGO_HSTS_SECONDS="31536000",
        DJANGO_HSTS_INCLUDE_SUBDOMAINS="0",
        DJANGO_HSTS_PRELOAD="1",
        DJANGO_SSL_REDIRECT="0",
    )
    assert result.stdout.strip() == "['security.W005', 'security.W008']"


def test_the_admin_writes_dates_as_iso_not_as_us_english():
    from datetime import datetime

    from django.utils import formats

    moment = datetime(2026, 12, 3, 9, 14, 5)
    assert formats.date_format(moment, "DATETIME_FORMAT") == "2026-12-03 09:14:05"
    assert formats.date_format(moment.date(), "DATE_FORMAT") == "2026-12-03"
    assert formats.date_format(moment, "SHORT_DATETIME_FORMAT") == "2026-12-03 09:14"
