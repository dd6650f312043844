"""The Production steps of docs/operations.md, run on a copy of the repo without var/.

One deployment for the module (~20 s): a fresh copy, a new venv holding only
what the production doc's ``pip install`` puts there (requirements.txt: no test, lint
or benchmark tools), the production doc's exports and ``manage.py`` commands in order
with that venv's Python, then its gunicorn command with the repo's
``gunicorn.conf.py``, behind a pretend TLS proxy (``X-Forwarded-Proto: https``,
``Host: admin.example.com``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
from urllib.parse import quote

import pytest

from tests.prodserver import (
    PASSWORD,
    PRODUCTION_DOC,
    ROOT,
    Deployment,
    deploy,
    production_install,
    production_steps,
)
from tests.storebuilder import StoreBuilder, create_store

#: Ids a browser cannot send as one plain path segment.
AWKWARD_IDS = {
    "a/b": "slash inside",
    "100%": "percent sign",
    "with space": "spaces in it",
    "x": "plain x",
    "x/frames": "x slash frames",
}


#: Sessions of the principal the erasure test erases through the deployed site.
ERASED = 3
#: What requirements-dev.txt adds, by import name: none of it may reach a server.
DEV_ONLY = ["pytest", "pytest_django", "playwright", "hypothesis", "ruff", "locust"]
#: What the server does run, by import name.
RUNTIME = ["django", "django_htmx", "whitenoise", "gunicorn", "axes", "dj_database_url", "psycopg"]


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> StoreBuilder:
    builder = StoreBuilder(tmp_path_factory.mktemp("production-home"))
    create_store(builder.path)
    builder.frames_root.mkdir(parents=True)
    for session_id, title in AWKWARD_IDS.items():
        builder.add_session(session_id, title=f"title: {title}")
        builder.add_message(session_id, content=f"message of {title}")
    builder.add_session("doomed", title="title: to be deleted")
    builder.add_message("doomed", content="message of the doomed one")
    for n in range(ERASED):
        builder.add_session(f"theirs-{n}", principal="user:erase-me", title="to be erased")
        builder.add_message(f"theirs-{n}", content="a message of theirs")
        (builder.frames_root / f"theirs-{n}").mkdir()
    return builder


@pytest.fixture(scope="module")
def deployed(tmp_path_factory, store) -> Deployment:
    deployment = deploy(tmp_path_factory.mktemp("production"), store.home, fresh_venv=True)
    yield deployment
    deployment.stop()


def importable(python: str, modules: list[str]) -> dict[str, bool]:
    script = "import importlib.util, json, sys; "
    script += (
        "print(json.dumps({m: importlib.util.find_spec(m) is not None for m in sys.argv[1:]}))"
    )
    done = subprocess.run([python, "-c", script, *modules], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_the_readme_installs_only_the_production_requirements():
    assert production_install((ROOT / PRODUCTION_DOC).read_text()) == [
        "install",
        "-r",
        "requirements.txt",
    ]
    dev = (ROOT / "requirements-dev.txt").read_text().splitlines()
    assert dev[[line.startswith("#") for line in dev].index(False)] == "-r requirements.txt"


def test_the_server_venv_has_the_runtime_and_none_of_the_dev_tools(deployed):
    assert deployed.python != sys.executable  # not the test run's own venv
    assert importable(deployed.python, RUNTIME) == dict.fromkeys(RUNTIME, True)
    assert importable(deployed.python, DEV_ONLY) == dict.fromkeys(DEV_ONLY, False)
    # The same check on the test run's venv finds them: the check can fail.
    assert importable(sys.executable, DEV_ONLY) == dict.fromkeys(DEV_ONLY, True)


def test_the_readme_lists_every_step_the_issue_names():
    _, steps, server = production_steps((ROOT / PRODUCTION_DOC).read_text())
    commands = [" ".join(word for word in step if not word.startswith("--no")) for step in steps]
    assert [command.split(" --skip")[0] for command in commands] == [
        "migrate",
        "collectstatic",
        "check",
        "check --deploy",
        "sync_index --quiet",
        "sync_index --verify",
        "createsuperuser",
        "run_jobs &",
    ]
    assert server[:2] == ["-c", "gunicorn.conf.py"]


def test_the_readme_systemd_unit_is_the_one_in_docs_and_runs_follow():
    readme = (ROOT / PRODUCTION_DOC).read_text()
    unit = readme.split("```ini\n", 1)[1].split("```", 1)[0]
    assert unit == (ROOT / "docs" / "sessions-admin-sync.service").read_text()
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if "=" in line and line[0] != "#"
    )
    assert settings["ExecStart"].endswith("python manage.py sync_index --follow --quiet")
    assert settings["KillSignal"] == "SIGTERM"  # what sync_index stops cleanly on


def test_the_readme_jobs_unit_is_the_one_in_docs_and_runs_the_worker():
    readme = (ROOT / PRODUCTION_DOC).read_text()
    units = [block.split("```", 1)[0] for block in readme.split("```ini\n")[1:]]
    (unit,) = [u for u in units if "run_jobs" in u]
    assert unit == (ROOT / "docs" / "sessions-admin-jobs.service").read_text()
    settings = dict(
        line.split("=", 1) for line in unit.splitlines() if "=" in line and line[0] != "#"
    )
    assert settings["ExecStart"].endswith("python manage.py run_jobs")
    assert settings["KillSignal"] == "SIGTERM"  # what run_jobs stops cleanly on


def test_the_steps_run_on_a_clean_copy_and_the_deploy_check_finds_nothing(deployed):
    assert (deployed.repo / "var" / "django.sqlite3").exists()  # made by the first step
    # Silenced: only the two HSTS choices the README sets to 0 on purpose.
    assert "identified no issues (2 silenced)" in deployed.outputs["check --deploy"]


def test_the_verify_step_finds_no_drift_after_the_sync_step(deployed):
    # deploy() ran the production doc's `sync_index --verify` and required exit status 0.
    verified = deployed.outputs["sync_index --verify"]
    assert "No drift: the index and the rollups equal the store." in verified
    assert f"Checked {len(AWKWARD_IDS) + 1 + ERASED} sessions" in verified


def test_verify_from_the_server_venv_exits_1_on_drift_and_prints_it(deployed, tmp_path):
    side = deployed.repo / "var" / "side.sqlite3"
    copy = tmp_path / "var"
    copy.mkdir(mode=0o700)
    for name in ("side.sqlite3", "side-text.sqlite3"):
        for suffix in ("", "-wal"):
            if (side.parent / f"{name}{suffix}").exists():
                shutil.copy2(side.parent / f"{name}{suffix}", copy / f"{name}{suffix}")
    # A message the index holds but the store never had: drift, in a copy of the data folder.
    script = (
        "import sys; from sessions_admin.ourdata import sidedb; c = sidedb.connect(); "
        "c.execute(\"UPDATE rollup_session SET messages = messages + 1 WHERE session_id = 'a/b'\")"
    )
    env = {**deployed.env, "SESSIONS_ADMIN_VAR_DIR": str(copy)}
    broken = subprocess.run(
        [deployed.python, "manage.py", "shell", "-c", script],
        cwd=deployed.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert broken.returncode == 0, broken.stderr
    verified = subprocess.run(
        [deployed.python, "manage.py", "sync_index", "--verify"],
        cwd=deployed.repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert verified.returncode == 1
    assert "messages: 1 drifted" in verified.stdout
    assert "'a/b': rollups counts 2, store 1" in verified.stdout
    assert "The side index drifted from the store" in verified.stderr


def test_healthz_answers_without_a_login_even_over_plain_http(deployed):
    browser = deployed.browser()
    reply = browser.request("GET", "/healthz", **{"X-Forwarded-Proto": "http"})
    assert reply.status == 200
    assert json.loads(reply.body)["status"] == "ok"


def test_a_staff_member_logs_in_and_sees_the_sessions(deployed):
    browser = deployed.browser()
    assert browser.request("GET", "/sessions/").status == 302
    assert browser.log_in("admin", PASSWORD).status == 302
    page = browser.request("GET", "/sessions/")
    assert page.status == 200
    assert "title: slash inside" in page.body
    assert "max-age=31536000" in page.headers["Strict-Transport-Security"]


def test_search_answers_from_the_index_the_steps_built(deployed):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    page = browser.request("GET", "/search/?q=" + quote("message of percent"))
    assert page.status == 200
    assert "title: percent sign" in page.body
    assert "No search index yet" not in page.body
    assert "nothing newer to index" in page.body


def test_plain_http_is_redirected_to_https(deployed):
    reply = deployed.browser().request("GET", "/sessions/", **{"X-Forwarded-Proto": "http"})
    assert reply.status == 301
    assert reply.headers["Location"] == "https://admin.example.com/sessions/"


@pytest.mark.parametrize("session_id", list(AWKWARD_IDS))
def test_awkward_session_ids_open_exactly_through_gunicorn(deployed, session_id):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    page = browser.request("GET", f"/sessions/{quote(session_id, safe='')}/")
    assert page.status == 200
    assert f"message of {AWKWARD_IDS[session_id]}" in page.body
    others = [title for other, title in AWKWARD_IDS.items() if other != session_id]
    assert not any(f"message of {title}<" in page.body for title in others)


def test_a_subpage_of_x_is_not_the_session_x_slash_frames(deployed):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    frames_of_x = browser.request("GET", "/sessions/x/frames/")
    assert frames_of_x.status == 200
    assert "message of x slash frames" not in frames_of_x.body


def test_hashed_static_files_are_cached_for_a_year(deployed):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    page = browser.request("GET", "/sessions/").body
    css = re.search(r'href="(/static/sessions_admin/app\.[0-9a-f]{12}\.css)"', page).group(1)
    reply = browser.request("GET", css, **{"Accept-Encoding": "gzip"})
    assert reply.status == 200
    assert reply.headers["Cache-Control"] == "max-age=31536000, public, immutable"


def test_each_request_is_one_json_line_with_its_user_and_request_id(deployed):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    reply = browser.request("GET", "/sessions/?target=t1", **{"X-Request-ID": "req-from-proxy-1"})
    assert reply.headers["X-Request-ID"] == "req-from-proxy-1"
    lines = [json.loads(line) for line in deployed.log_lines() if line.startswith("{")]
    mine = [line for line in lines if line.get("request_id") == "req-from-proxy-1"]
    assert len(mine) == 1
    assert mine[0]["logger"] == "sessions_admin.request"
    assert {k: mine[0][k] for k in ("method", "path", "status", "user")} == {
        "method": "GET",
        "path": "/sessions/?target=t1",
        "status": 200,
        "user": "admin",
    }
    assert isinstance(mine[0]["duration_ms"], float)
    assert any(line["logger"] == "gunicorn.error" for line in lines)


def test_sync_index_from_the_server_venv_indexes_a_new_message(deployed, store):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    store.add_message("x", content="a needle appended later")
    synced = deployed.manage("sync_index", "--quiet")
    assert synced.returncode == 0, synced.stdout + synced.stderr
    page = browser.request("GET", "/search/?q=" + quote("needle appended"))
    assert page.status == 200
    assert "title: plain x" in page.body
    assert "nothing newer to index" in page.body


def test_delete_session_from_the_server_venv_removes_the_session(deployed):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    assert browser.request("GET", "/sessions/doomed/").status == 200
    deleted = deployed.manage("delete_session", "doomed")
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert browser.request("GET", "/sessions/doomed/").status == 404
    listing = browser.request("GET", "/sessions/").body
    assert "title: to be deleted" not in listing
    assert "title: plain x" in listing


def test_a_hup_restart_replaces_the_workers_without_dropping_a_request(deployed):
    """Last in the module: it restarts the shared server's workers."""
    import os
    import signal
    import time

    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    os.kill(deployed.process.pid, signal.SIGHUP)
    statuses = []
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        statuses.append(browser.request("GET", "/sessions/").status)
    assert statuses and set(statuses) == {200}
    log = "\n".join(deployed.log_lines())
    assert "Handling signal: hup" in log.lower() or "hang up" in log.lower(), log[-2000:]
    assert deployed.process.poll() is None


def test_an_erasure_posted_to_the_site_is_carried_out_by_the_readmes_worker(deployed, store):
    browser = deployed.browser()
    browser.log_in("admin", PASSWORD)
    principal = "/principals/user%3Aerase-me/"
    phrase = {"confirm": f"erase {ERASED} sessions of user:erase-me"}
    posted = browser.submit(principal, phrase, to=principal + "erase/")
    assert posted.status == 303
    receipt = posted.headers["Location"]
    deadline = time.monotonic() + 60
    while "Done" not in (page := browser.request("GET", receipt).body):
        assert time.monotonic() < deadline, page
        time.sleep(0.5)
    assert "0 left" in page
    assert store.execute("SELECT count(*) FROM sessions WHERE principal_id = 'user:erase-me'") == [
        (0,)
    ]
    assert not any(store.frames_root.glob("theirs-*"))
