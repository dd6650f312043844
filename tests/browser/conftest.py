"""A real Chromium (Debian's package) driven by Playwright against the live server.

Nothing downloads a browser: Playwright launches ``/usr/bin/chromium`` (or
``$CHROMIUM``). The flags keep it off the network this machine does not have.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest

from sessions_admin import clock
from sessions_admin.ourdata import sync

os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM_FLAGS = [
    "--headless=new",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def chromium_path() -> str:
    path = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    if not os.path.exists(path):
        pytest.fail(
            "The browser tests need Debian's Chromium (apt-get install chromium), "
            "or CHROMIUM=/path/to/chromium. They are never skipped."
        )
    return path


def pytest_collection_modifyitems(items):
    for item in items:
        if "tests/browser/" in str(item.fspath):
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def browser() -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        yield browser
        browser.close()


class ConsoleWatcher:
    def __init__(self) -> None:
        self.errors: list[str] = []

    def on_console(self, message) -> None:
        if message.type in ("error", "warning") and "favicon" not in message.text:
            self.errors.append(f"{message.type}: {message.text}")

    def on_page_error(self, error) -> None:
        self.errors.append(f"pageerror: {error}")


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    watcher = ConsoleWatcher()
    page.on("console", watcher.on_console)
    page.on("pageerror", watcher.on_page_error)
    page.console_errors = watcher.errors
    yield page
    context.close()


@pytest.fixture
def logged_in_page(page, live_server, admin_user):
    page.goto(f"{live_server.url}/login/")
    page.fill("#id_username", admin_user.username)
    page.fill("#id_password", "pw-" + admin_user.username)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/sessions/")
    return page


DAY = 86_400_000


def failure(code: str, message: str) -> dict:
    return {"ok": False, "error": {"code": code, "message": message}}


@pytest.fixture
def triage_store(store, settings, tmp_path, monkeypatch):
    """Two sessions: one with three failed http.get calls (two alike), one with none."""
    settings.VAR_DIR = tmp_path / "var"
    bad = store.add_session("sess_bad", title="flaky", principal="user:carol", last_active=9)
    good = store.add_session("sess_good", title="fine", principal="user:dan", last_active=8)
    now = 1_700_000_000_000
    results = [
        ("http.get", failure("ETIMEDOUT", "timed out after 5000 ms"), bad),
        ("http.get", failure("ETIMEDOUT", "timed out after 3000 ms"), bad),
        ("http.get", failure("ECONNREFUSED", "connection refused by 10.0.0.7"), bad),
        ("http.get", {"ok": True}, bad),
        *[("sql.query", {"ok": True}, good) for _ in range(9)],
        ("sql.query", failure("SQLITE_BUSY", "database is locked"), good),
    ]
    for n, (tool, result, sid) in enumerate(results):
        store.add_message(
            sid,
            "tool",
            "",
            ts=now + n * 60_000,
            tool_name=tool,
            tool_call_id=f"c{n}",
            tool_result=result,
            tool_duration_ms=10 * (n + 1),
        )
    sync.sync_once()
    monkeypatch.setattr(clock, "now_ms", lambda: now + DAY)
    return store
