"""Every screen in a real browser, checked by axe-core, at a laptop's width and a phone's.

axe-core is vendored for the tests only (``vendor/axe.min.js``, see its README)
and injected by Playwright; the dashboard never serves it. The store is a demo
home with the hostile cases planted (long ids, odd values), synced, so each
screen shows what a person would see. One test per width visits every screen
and reports every violation at once: rule, impact and the elements it names.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from sessions_admin.demo import build_demo_home
from sessions_admin.demo.hostile import plant_hostile
from sessions_admin.ourdata import sync
from tests.browser.screens import WIDTHS, Samples, Screen, all_screens, demo_samples
from tests.conftest import STORE_DB, point_store_at

AXE = Path(__file__).parent / "vendor" / "axe.min.js"
PHONE = 390


@pytest.fixture
def demo(tmp_path, settings, var_dir, django_db_setup) -> Iterator[Samples]:
    summary = build_demo_home(tmp_path / "home", sessions=60, seed=7)
    plant_hostile(summary.store_path, summary.frames_root)
    settings.FRAMES_DIR = summary.frames_root
    point_store_at(summary.store_path)
    sync.sync_once()
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
