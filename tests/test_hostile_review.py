"""Issue 17's hostile-review fixes: out-of-range page positions, world-readable
data files, leftover -wal/-shm beside the store, raw titles in Markdown, tool
names too long for a URL."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from random import Random

import pytest
from django.core import signing
from django.core.management import call_command
from django.db import connections
from django.utils.html import escape

from sessions_admin.ids import session_url
from sessions_admin.ourdata import sidedb, sync
from tests import rollupdata as R
from tests.conftest import STORE_DB
from tests.frames_files import jl
from tests.prodserver import ROOT, clean_environment

TOO_BIG = str(2**63)  # one past SQLite's largest INTEGER
TOO_SMALL = str(-(2**63) - 1)


@pytest.fixture
def tools_synced(store, var_dir):
    R.fill_store(store, Random(5), sessions=2)
    sync.sync_once()
    return store


def assert_refused(response, name: str) -> None:
    """A 400 whose message (not just any text on the page) names the parameter."""
    assert response.status_code == 400
    message = re.search(r'class="error-message">(.*?)</p>', response.content.decode(), re.S)
    assert message and re.search(rf"\b{name}\b", message.group(1)), message


@STORE_DB
@pytest.mark.parametrize(
    "cursor",
    [f"{TOO_BIG}_1", f"1_{TOO_BIG}", f"{TOO_SMALL}_1", "1_-1_", "x_1", "1", "²_1", "1_" + "9" * 30],
)
def test_a_tool_pages_cursor_out_of_range_or_malformed_is_a_400_naming_it(
    tools_synced, staff_client, cursor
):
    ok = staff_client.get(f"/tools/{R.TOOLS[0]}/")
    assert ok.status_code == 200 and R.TOOLS[0] in ok.content.decode()
    assert_refused(staff_client.get(f"/tools/{R.TOOLS[0]}/", {"cursor": cursor}), "cursor")


@STORE_DB
@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**80])
def test_a_session_list_cursor_holding_an_out_of_range_number_is_a_400(store, staff_client, value):
    store.add_session("a")
    # A token only the server can sign: were the key ever known, still no 500.
    token = signing.dumps(["-last_active", value, "a"], salt="sessions.cursor", compress=True)
    assert_refused(staff_client.get("/sessions/", {"cursor": token}), "cursor")
    assert_refused(staff_client.get("/sessions/", {"cursor": "not-a-token"}), "cursor")


@STORE_DB
@pytest.mark.parametrize("before", [TOO_BIG, "9" * 30, "-1", "x", "²"])
def test_a_search_page_position_out_of_range_or_malformed_is_a_400(store, staff_client, before):
    assert_refused(staff_client.get("/search/", {"q": "hello", "before": before}), "before")


@STORE_DB
@pytest.mark.parametrize("name", ["after", "before", "at"])
@pytest.mark.parametrize("value", [TOO_BIG, TOO_SMALL, "x"])
def test_a_transcript_position_out_of_range_is_a_400(conversation, staff_client, name, value):
    sid, _ = conversation
    assert_refused(staff_client.get(session_url(sid), {name: value}), name)


@STORE_DB
@pytest.mark.parametrize("name", ["offset", "n"])
def test_a_frames_position_out_of_range_is_a_400_and_the_largest_one_answers(
    store, staff_client, name
):
    sid = store.add_session("s")
    (store.frames_root / sid).mkdir()
    (store.frames_root / sid / "activity-r1.jsonl").write_bytes(jl({"kind": "start"}))
    page = session_url(sid, "frames/r1")
    assert_refused(staff_client.get(page, {name: TOO_BIG}), name)
    assert_refused(staff_client.get(page, {name: "-1"}), name)
    largest = staff_client.get(page, {name: str(2**63 - 1)})
    assert largest.status_code == 200


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def with_umask_022() -> None:
    os.umask(0o022)  # the usual login default: new files 0644, folders 0755


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


@STORE_DB
def test_a_new_data_folder_and_every_file_the_steps_write_in_it_are_private(store, tmp_path):
    store.add_session("a")
    store.add_message("a", content="hello")
    var = tmp_path / "fresh" / "var"
    env = clean_environment(
        DJANGO_SECRET_KEY="perm-test-" + "k" * 40,
        SESSIONS_ADMIN_VAR_DIR=str(var),
        AGENTS_HOST_HOME=str(store.home),
    )
    for step in (["migrate", "--skip-checks"], ["ensure_staff", "--skip-checks"], ["sync_index"]):
        done = subprocess.run(
            [sys.executable, "manage.py", *step],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            preexec_fn=with_umask_022,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert mode(var) == 0o700
    files = {path.name: mode(path) for path in var.iterdir() if path.is_file()}
    assert files == {
        "django.sqlite3": 0o600,
        "admin-password": 0o600,
        "side.sqlite3": 0o600,
        "side-text.sqlite3": 0o600,  # the trigram index's own file
        "side.sqlite3.lock": 0o600,  # the one writer's lock (sidedb.pass_lock)
        "store-identity.json": 0o600,  # the store this folder was made for
    }


@STORE_DB
def test_the_side_databases_wal_and_shm_are_private_too(store, var_dir, umask_022):
    store.add_session("a")
    store.add_message("a", content="hello")
    sync.sync_once()
    reader = sidedb.connect()  # held open: SQLite keeps -wal and -shm while it is
    reader.execute("SELECT count(*) FROM sqlite_master").fetchone()
    files = {path.name: mode(path) for path in var_dir.iterdir()}
    reader.close()
    assert files == {
        "side.sqlite3": 0o600,
        "side.sqlite3-wal": 0o600,
        "side.sqlite3-shm": 0o600,
        "side-text.sqlite3": 0o600,
        "side-text.sqlite3-wal": 0o600,
        "side-text.sqlite3-shm": 0o600,
        "side.sqlite3.lock": 0o600,
    }


def test_make_creates_the_data_folder_and_secret_key_private(tmp_path):
    venv = Path(sys.executable).parent.parent
    done = subprocess.run(
        ["make", "-s", "-f", str(ROOT / "Makefile"), "var/secret_key", f"VENV={venv}"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        preexec_fn=with_umask_022,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert mode(tmp_path / "var") == 0o700
    assert mode(tmp_path / "var" / "secret_key") == 0o600
    assert len((tmp_path / "var" / "secret_key").read_text().strip()) >= 50


def wal_store(store) -> set[str]:
    """The store in WAL mode, as the runtime keeps it, with nothing holding it open."""
    store.add_session("a", title="a session in wal mode")
    store.add_message("a", content="hello")
    conn = store.connect()
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    before = {path.name for path in store.path.parent.iterdir()}
    assert before == {"store.db"}
    return before


@STORE_DB
def test_the_check_command_leaves_no_wal_or_shm_beside_an_idle_store(store, capsys):
    before = wal_store(store)
    call_command("check")
    assert "System check identified no issues" in capsys.readouterr().out
    assert {path.name for path in store.path.parent.iterdir()} == before


@STORE_DB
def test_a_page_view_leaves_no_wal_or_shm_beside_an_idle_store(store, staff_client):
    before = wal_store(store)
    page = staff_client.get("/sessions/")
    assert page.status_code == 200 and "a session in wal mode" in page.content.decode()
    connections["agents"].close()  # what the end of a request does outside the test client
    assert {path.name for path in store.path.parent.iterdir()} == before


LONG_TOOL = "tool." + "".join(f"seg{i}é/" for i in range(700))[:4995]


def tool_links(html: str) -> list[str]:
    return [
        href.replace("&amp;", "&")
        for href in re.findall(r'href="(/tools/[^"]+)"', html)
        if href != "/tools/"
    ]


@STORE_DB
@pytest.mark.parametrize("tool", [LONG_TOOL, "~/" + "0" * 32, "~/plain"])
def test_every_tool_gets_a_short_link_that_opens_its_page(store, var_dir, staff_client, tool):
    sid = store.add_session("s")
    store.add_message(sid, "tool", "", tool_name=tool, tool_call_id="c1", tool_duration_ms=5)
    store.add_message(sid, "tool", "", tool_name="short.tool", tool_call_id="c2")
    sync.sync_once()
    links = tool_links(staff_client.get("/tools/?window=all").content.decode())
    assert "/tools/short.tool/" in links  # a readable name keeps its readable URL
    (link,) = [href for href in links if "short.tool" not in href and "errors=1" not in href]
    assert len(link) < 300
    page = staff_client.get(link)
    assert page.status_code == 200
    html = page.content.decode()
    assert escape(tool) in html
    assert session_url(sid) in html  # its call, linked to its message
    assert "short.tool" not in html.split("<main", 1)[1]


@STORE_DB
def test_a_tool_key_that_names_no_tool_is_a_404(store, var_dir, staff_client):
    store.add_session("s")
    sync.sync_once()
    assert staff_client.get("/tools/~/" + "f" * 32 + "/").status_code == 404
    assert staff_client.get("/tools/~/not-a-key/").status_code == 404
