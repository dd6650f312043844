"""``make screens``: a picture of every screen at 1440 and 390 px wide, in docs/screens/.

Builds a demo host home and a data folder in a temporary directory (nothing
under var/ is touched), serves the dashboard from it with ``runserver`` on a
free port, logs in with Playwright on Debian's Chromium and saves
``docs/screens/<screen>-<width>.png`` for each screen that
``tests/browser/screens.py`` lists. A screen taller than 1,800 px is cut there:
the pictures are for seeing the layout, not for reading every row (and a few
megabytes in the repository is what they should cost). Each picture is
compressed losslessly (oxipng) before it is written.

Redraw only the screens a change touched, so the history grows by those
pictures alone: ``scripts/screens.py sessions session`` (names as in
``tests/browser/screens.py``; ``make screens SCREENS="sessions session"``).
With no name, every screen is drawn again and pictures of screens gone are
removed.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import oxipng

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
# The screens list needs the app's id helpers, which need settings to import.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.settings")

from tests.browser.conftest import CHROMIUM_FLAGS, chromium_path  # noqa: E402
from tests.browser.screens import WIDTHS, Screen, all_screens, demo_samples  # noqa: E402

OUT = ROOT / "docs" / "screens"
#: A fixed seed draws the same sessions each run (their times follow the clock).
DEMO_ARGS = ["--sessions", "400", "--seed", "7"]
TALLEST_PX = 1800
#: oxipng's effort (0-6): on the 48 pictures level 2 takes 25 s and saves 26 %; 4, 98 s for 27 %.
OXIPNG_LEVEL = 2


def manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def demo_server(folder: Path) -> Iterator[tuple[str, str, Path]]:
    """Serve a fresh demo store; yield the base URL, the staff password and the home."""
    home = folder / "home"
    env = {
        **os.environ,
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "SESSIONS_ADMIN_VAR_DIR": str(folder / "var"),
        "AGENTS_HOST_HOME": str(home),
        "DJANGO_LOG_FORMAT": "text",
        "DJANGO_LOG_LEVEL": "WARNING",
        # One host of a fleet: its sync publishes, so the fleet's screens have rows.
        "SESSIONS_ADMIN_FLEET": "1",
        "SESSIONS_ADMIN_STORE_NAME": "demo-host",
        "SESSIONS_ADMIN_PUBLIC_URL": "https://demo-host.example",
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    manage(env, "make_demo_store", str(home), *DEMO_ARGS)
    manage(env, "migrate", "--noinput", "--skip-checks", "--verbosity", "0")
    manage(env, "ensure_staff", "--skip-checks")
    manage(env, "sync_index")
    # Static files come from the finders (WHITENOISE_USE_FINDERS); an empty
    # STATIC_ROOT only keeps whitenoise from warning that it is missing.
    (folder / "var" / "staticfiles").mkdir()
    password = (folder / "var" / "admin-password").read_text().strip()
    url = f"http://127.0.0.1:{free_port()}"
    server = subprocess.Popen(
        [sys.executable, "manage.py", "runserver", url.removeprefix("http://"), "--noreload"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
    )
    try:
        wait_until_up(url)
        yield url, password, home
    finally:
        server.terminate()
        server.wait(timeout=10)


def wait_until_up(url: str) -> None:
    deadline = time.monotonic() + 30
    while True:
        try:
            urllib.request.urlopen(url + "/healthz", timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def picture(page, url: str, screen: Screen, width: int, height: int) -> Path:
    page.set_viewport_size({"width": width, "height": height})
    page.goto(url + screen.path, wait_until="networkidle")
    full = page.evaluate("document.documentElement.scrollHeight")
    path = OUT / f"{screen.name}-{width}.png"
    data = page.screenshot(
        full_page=True,
        clip={"x": 0, "y": 0, "width": width, "height": min(full, TALLEST_PX)},
    )
    path.write_bytes(oxipng.optimize_from_memory(data, level=OXIPNG_LEVEL))
    return path


def log_in(page, url: str, password: str) -> None:
    page.goto(url + "/login/")
    page.fill("#id_username", "admin")
    page.fill("#id_password", password)
    page.click("button[type=submit]")
    page.wait_for_url(url + "/sessions/")


def main(names: list[str]) -> int:
    from playwright.sync_api import sync_playwright

    OUT.mkdir(parents=True, exist_ok=True)
    if not names:
        for old in OUT.glob("*.png"):  # a screen renamed or dropped leaves no stale picture
            old.unlink()
    with (
        tempfile.TemporaryDirectory(prefix="sessions-admin-screens-") as folder,
        demo_server(Path(folder)) as (url, password, home),
        sync_playwright() as playwright,
    ):
        screens = all_screens(
            demo_samples(home / "data" / "agents" / "store.db", home / "sessions")
        )
        unknown = set(names) - {screen.name for screen in screens}
        if unknown:
            print(f"no such screen: {', '.join(sorted(unknown))}", file=sys.stderr)
            return 2
        screens = [screen for screen in screens if not names or screen.name in names]
        browser = playwright.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_FLAGS)
        pages = {True: browser.new_page(), False: browser.new_page()}  # by Screen.anonymous
        log_in(pages[False], url, password)
        for screen in screens:
            for width, height in WIDTHS.items():
                path = picture(pages[screen.anonymous], url, screen, width, height)
                print(path.relative_to(ROOT))
        browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
