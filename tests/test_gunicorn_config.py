"""gunicorn.conf.py: the whole command, sized for a small host, its timeout tied to the store's."""

from __future__ import annotations

import runpy

import pytest

from tests.prodserver import ROOT


def load(monkeypatch, **env: str) -> dict:
    for name in ("GUNICORN_WORKERS", "GUNICORN_THREADS", "SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(ROOT / "gunicorn.conf.py"))


def test_it_names_the_wsgi_app_so_no_module_argument_is_needed(monkeypatch):
    config = load(monkeypatch)
    assert config["wsgi_app"] == "sessions_admin.wsgi:application"
    assert config["chdir"] == str(ROOT)


def test_it_runs_a_threaded_worker_per_core_plus_one(monkeypatch):
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1})
    config = load(monkeypatch)
    assert (config["worker_class"], config["workers"], config["threads"]) == ("gthread", 3, 4)
    assert load(monkeypatch, GUNICORN_WORKERS="5", GUNICORN_THREADS="2")["workers"] == 5


@pytest.mark.parametrize("limit_ms, timeout", [("3000", 30), ("20000", 80), ("12345", 50)])
def test_the_timeout_follows_the_store_query_time_limit(monkeypatch, limit_ms, timeout):
    config = load(monkeypatch, SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS=limit_ms)
    assert config["timeout"] == config["graceful_timeout"] == timeout


def test_restarts_are_graceful_and_spread_out(monkeypatch):
    config = load(monkeypatch)
    assert config["preload_app"] is False  # HUP loads new code
    assert config["max_requests"] > 0 and config["max_requests_jitter"] > 0


def test_gunicorn_s_own_lines_use_our_format_and_its_access_log_stays_quiet(monkeypatch):
    config = load(monkeypatch, DJANGO_LOG_FORMAT="text")["logconfig_dict"]
    assert config["formatters"]["ours"]["()"] == "sessions_admin.logs.TextFormatter"
    assert config["loggers"]["gunicorn.access"]["handlers"] == []
