"""The session page carrying notes (beside messages and on the session), in a real browser:
no axe-core violation at a laptop's width or a phone's, nothing wider than the phone.

The screens of ``test_axe`` show a session without notes; the notes' markup is built
in Python (``views.notes``), so it is checked here with the oddest text a reviewer
writes. ``SESSIONS_ADMIN_SCREENSHOTS=<dir>`` also saves each width's picture.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sessions_admin.ids import session_url
from sessions_admin.models import Note
from sessions_admin.store.connection import run_sql
from tests.browser.screens import WIDTHS, Screen
from tests.browser.test_axe import PHONE, axe_violations, demo, open_screen, report, visitors
from tests.conftest import STORE_DB

__all__ = ["demo", "visitors"]  # the fixtures test_axe defines, used here

TEXTS = [
    "Wrong tool: see https://runbooks.example/payments?step=3&retry=1. Then <b>ask</b> ops.",
    "A very long word: " + "x" * 300 + " and a line break\nsecond line, 東京都, résumé",
    "javascript:alert(1) \"quoted\" 'single' & ampersand; http://",
]


@pytest.fixture
def noted(demo, admin_user):
    ids = [row[0] for row in run_sql(
        "SELECT id FROM session_messages WHERE session_id = ? ORDER BY id LIMIT 6",
        [demo.session_id],
    )]  # fmt: skip
    for n, text in enumerate(TEXTS * 3):
        Note.objects.create(
            session_id=demo.session_id,
            message_id=None if n == 0 else ids[n % len(ids)],
            text=text,
            author=admin_user,
            author_name=admin_user.username,
        )
    return Screen("session-notes", session_url(demo.session_id))


@STORE_DB
def test_a_session_page_with_notes_passes_axe_at_both_widths(noted, visitors, live_server):
    found = {}
    shots = os.environ.get("SESSIONS_ADMIN_SCREENSHOTS")
    for width in sorted(WIDTHS):
        page = open_screen(visitors, live_server.url, noted, width)
        assert page.locator(".message-notes li").count() == 8
        assert page.locator(".message-notes a[href^='https://runbooks.example']").count() >= 2
        assert page.locator(".message-notes a[href^='javascript']").count() == 0
        if shots:
            page.locator(".message-notes").first.scroll_into_view_if_needed()
            page.screenshot(path=str(Path(shots) / f"session-notes-{width}.png"))
        violations = axe_violations(page)
        if violations:
            found[f"session with notes at {width} px"] = violations
        if width == PHONE:
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE
    assert not found, "axe-core found:\n" + report(found)
