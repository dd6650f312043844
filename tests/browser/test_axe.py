"""Every screen in a real browser, checked by axe-core, at a laptop's width and a phone's.

axe-core is vendored for the tests only (``vendor/axe.min.js``, see its README)
and injected by Playwright; the dashboard never serves it. The store is a demo
home with the hostile cases planted (long ids, odd values), synced, so each
screen shows what a person would see. One test per width visits every screen
and reports every violation at once: rule, impact and the elements it names.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions_admin.demo import build_demo_home
from sessions_admin.demo.hostile import plant_hostile
from sessions_admin.ids import session_url
from sessions_admin.models import Note
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.fleet.publish import publish_after_pass
from sessions_admin.store.connection import run_sql
from tests.browser.screens import WIDTHS, Samples, Screen, all_screens, demo_samples
from tests.conftest import STORE_DB, point_store_at

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
PHONE = 390


@pytest.fixture
def demo(tmp_path, settings, var_dir, django_db_setup) -> Iterator[Samples]:
    summary = build_demo_home(tmp_path / "home", sessions=60, seed=7)
    plant_hostile(summary.store_path, summary.frames_root)
    settings.FRAMES_DIR = summary.frames_root
    settings.FLEET_PUBLISH = True  # the fleet's screens show this host's directory
    settings.PUBLIC_URL = "https://demo-host.example"
    point_store_at(summary.store_path)
    sync.sync_once()
    publish_after_pass()
    yield demo_samples(summary.store_path, summary.frames_root)
    point_store_at(django_db_setup)


@pytest.fixture
def visitors(browser, live_server, admin_user) -> Iterator[dict[bool, object]]:
    """A signed-in staff page and an anonymous one (for the login page), keyed by
    ``Screen.anonymous``. The CSP is bypassed only so the injected axe may run."""
    contexts = [browser.new_context(bypass_csp=True) for _ in range(2)]
    staff, anonymous = (context.new_page() for context in contexts)
    staff.goto(f"{live_server.url}/login/")
    staff.fill("#id_username", admin_user.username)
    staff.fill("#id_password", "pw-" + admin_user.username)
    staff.click("button[type=submit]")
    staff.wait_for_url(f"{live_server.url}/sessions/")
    yield {False: staff, True: anonymous}
    for context in contexts:
        context.close()


def open_screen(visitors, base_url: str, screen: Screen, width: int):
    page = visitors[screen.anonymous]
    page.set_viewport_size({"width": width, "height": WIDTHS[width]})
    response = page.goto(base_url + screen.path)
    # The regions htmx loads after the page (the session's statistics) are in: their
    # requests start before "load" and carry .htmx-request until swapped and settled.
    page.wait_for_function(
        "!document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling')"
    )
    assert response.status == screen.status, f"{screen.name}: {response.status}"
    return page


def axe_violations(page) -> list[str]:
    page.add_script_tag(path=str(AXE))
    result = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    return [
        f"{v['id']} ({v['impact']}): " + ", ".join(" ".join(n["target"]) for n in v["nodes"][:5])
        for v in result["violations"]
    ]


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}: {line}" for name, lines in found.items() for line in lines)


@pytest.mark.parametrize("width", sorted(WIDTHS))
@STORE_DB
def test_no_screen_has_an_axe_violation(demo, visitors, live_server, width):
    found = {}
    screens = all_screens(demo)
    for screen in screens:
        violations = axe_violations(open_screen(visitors, live_server.url, screen, width))
        if violations:
            found[f"{screen.name} at {width} px"] = violations
    assert len(screens) > 20
    assert not found, "axe-core found:\n" + report(found)


@STORE_DB
def test_no_screen_is_wider_than_a_phone(demo, visitors, live_server):
    too_wide = {}
    for screen in all_screens(demo):
        page = open_screen(visitors, live_server.url, screen, PHONE)
        width = page.evaluate("document.documentElement.scrollWidth")
        if width > PHONE:
            too_wide[screen.name] = width
    assert not too_wide, f"wider than {PHONE} px: {too_wide}"


# A session page carrying notes. The screens above show a session without any; the
# notes' markup is built in Python (views.notes), so it is checked here with the
# oddest text a reviewer writes. SESSIONS_ADMIN_SCREENSHOTS=<dir> saves each picture.
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


# The review screens need a queue: one made from the demo's sessions, one verdict
# given, a label on the first session, which is then opened from the queue.
@pytest.fixture
def reviewing(demo, admin_user) -> list[Screen]:
    from sessions_admin.ourdata.review import labels, queues, verdicts
    from sessions_admin.ourdata.review.models import Label

    # As a source does, only sessions whose id is text (the hostile ones include a BLOB).
    ids = [
        row[0]
        for row in run_sql("SELECT id FROM sessions ORDER BY last_active DESC")
        if isinstance(row[0], str)
    ]
    queue = queues.make_queue(
        "sql.query failures, <1 Dec>", "/sessions/", ids, capped=False, user=admin_user
    )
    first = queues.claim_next(queue, admin_user)
    verdicts.give_verdict(
        first, "fail", "Wrong tool: https://runbooks.example/x?a=1&b=2", admin_user
    )
    label = Label.objects.create(name="regression", color="#b91c1c", description="broke again")
    labels.add_label(first.session_id, label, admin_user)
    return [
        Screen("reviews", "/reviews/"),
        Screen("review-queue", f"/reviews/{queue.pk}/"),
        Screen("review-session", session_url(first.session_id, review=queue.pk)),
        Screen("labelled", "/sessions/?label=regression"),
    ]


@STORE_DB
def test_the_review_screens_pass_axe_and_fit_a_phone(reviewing, visitors, live_server):
    found, too_wide = {}, {}
    shots = os.environ.get("SESSIONS_ADMIN_SCREENSHOTS")
    for width in sorted(WIDTHS):
        for screen in reviewing:
            page = open_screen(visitors, live_server.url, screen, width)
            if shots:
                page.screenshot(path=str(Path(shots) / f"{screen.name}-{width}.png"))
            violations = axe_violations(page)
            if violations:
                found[f"{screen.name} at {width} px"] = violations
            if width == PHONE and page.evaluate("document.documentElement.scrollWidth") > PHONE:
                too_wide[screen.name] = page.evaluate("document.documentElement.scrollWidth")
    assert not found, "axe-core found:\n" + report(found)
    assert not too_wide, f"wider than {PHONE} px: {too_wide}"


# Masked values and their reveal (issue 33): read by a screen reader by their kind.
@pytest.fixture
def masked(store) -> Screen:
    sid = store.add_session("sess_secret", title="refund for carol@example.org")
    store.add_message(sid, "user", "my card is 4242 4242 4242 4242, mail carol@example.org")
    store.add_message(sid, "tool", "ok", tool_name="crm.lookup",
                      tool_args={"email": "carol@example.org", "api_key": "sk-abc"},
                      tool_result={"token": "opaque-token-value"})  # fmt: skip
    return Screen("session-masked", session_url(sid))


@STORE_DB
def test_masked_values_pass_axe_and_one_message_is_revealed_in_place(masked, visitors, live_server):
    found = {}
    for width in sorted(WIDTHS):
        page = open_screen(visitors, live_server.url, masked, width)
        assert "carol@example.org" not in page.content()
        assert page.get_by_text("hidden e-mail address").count() >= 2
        if shots := os.environ.get("SESSIONS_ADMIN_SCREENSHOTS"):
            page.screenshot(path=str(Path(shots) / f"session-masked-{width}.png"))
        violations = axe_violations(page)
        if violations:
            found[f"masked session at {width} px"] = violations
    assert not found, "axe-core found:\n" + report(found)
    page = open_screen(visitors, live_server.url, masked, max(WIDTHS))
    first = page.locator("#messages > li").first
    first.get_by_role("button", name="reveal…").click()
    dialog = page.locator("#reveal-form")
    assert dialog.is_visible() and page.evaluate("document.activeElement.name") == "reason"
    assert axe_violations(page) == []
    page.fill("#reveal-reason", "TICKET-7")
    dialog.get_by_role("button", name="Reveal").click()
    page.locator("#messages > li").first.get_by_text("carol@example.org").wait_for()
    assert not dialog.is_visible()
    assert page.locator("#messages > li").nth(1).get_by_text("opaque-token-value").count() == 0
    page.reload()
    assert "carol@example.org" not in page.content()
