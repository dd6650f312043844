"""``make fleet-demo``: three demo hosts sharing one database, the fleet page showing all three."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PORT = 18701 + (os.getpid() % 40) * 3  # xdist workers each get their own three ports


def _get(opener, url: str, data: dict | None = None) -> str:
    body = urllib.parse.urlencode(data).encode() if data is not None else None
    with opener.open(url, body, timeout=10) as response:
        return response.read().decode()


def _wait(check, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            if check():
                return
        except OSError:
            pass
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.5)


@pytest.mark.slow
def test_the_fleet_demo_starts_three_hosts_that_all_show_the_fleet(tmp_path):
    env = {
        **os.environ,
        "FLEET_DEMO_DIR": str(tmp_path / "fleet"),
        "FLEET_DEMO_SESSIONS": "20",
        "DJANGO_SECRET_KEY": "fleet-demo-test-" + "x" * 40,
        "DJANGO_SETTINGS_MODULE": "sessions_admin.settings",  # not the tests' own
    }
    env.pop("DJANGO_DATABASE_URL", None)
    log = (tmp_path / "demo.log").open("w")  # a file: a full pipe would stall the servers
    demo = subprocess.Popen(
        [str(ROOT / "scripts" / "fleet-demo"), sys.executable, str(PORT)],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        for port in (PORT, PORT + 1, PORT + 2):
            url = f"http://127.0.0.1:{port}/healthz"
            try:
                _wait(lambda url=url: urllib.request.urlopen(url, timeout=2).status == 200, 120)
            except AssertionError:
                raise AssertionError((tmp_path / "demo.log").read_text()[-3000:]) from None
        password = (tmp_path / "fleet" / "host-a" / "var" / "admin-password").read_text().strip()
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        base = f"http://127.0.0.1:{PORT}"
        page = _get(opener, f"{base}/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
        _get(opener, f"{base}/login/", {"csrfmiddlewaretoken": token, "username": "admin",
                                        "password": password})  # fmt: skip

        def all_three_published() -> bool:
            fleet = _get(opener, f"{base}/fleet/")
            return all(f"host-{x}" in fleet for x in "abc") and "never" not in fleet

        _wait(all_three_published, 120)
        fleet = _get(opener, f"{base}/fleet/")
        for offset, name in enumerate(("host-a", "host-b", "host-c")):
            assert f'href="http://127.0.0.1:{PORT + offset}/"' in fleet, name
        sessions = _get(opener, f"{base}/fleet/sessions/?host=host-b")
        assert f"http://127.0.0.1:{PORT + 1}/sessions/" in sessions
    finally:
        os.killpg(demo.pid, signal.SIGINT)
        demo.wait(timeout=60)
        log.close()
    # Stopped by the signal (130; 143 when a host's own stop raced it), nothing left over.
    assert demo.returncode in (130, 143), (tmp_path / "demo.log").read_text()[-3000:]
    leftover = subprocess.run(
        ["pgrep", "-f", f"127.0.0.1:{PORT}"], capture_output=True, text=True
    ).stdout
    assert leftover == "", leftover
