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
    environment.update(GOOD, SESSIONS_ADMIN_VAR_DIR=str(tmp_path), **env)
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
