"""The fleet: three hosts, each its own store, data folder and name, one shared database.

Each host's sync pass publishes its sessions to the directory; the directory must
equal a brute-force reading of every store after the runtime appends, deletes, edits
and re-creates sessions, after a publish that failed or was cut short, and the fleet's
pages must answer every value a store can hold without a 5xx.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import DatabaseError

from sessions_admin.deletion.fleet import carry_out_parts
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.fleet import publish as publishing
from sessions_admin.ourdata.fleet.models import FleetHost, FleetSession, exact_key
from sessions_admin.ourdata.fleet.publish import publish_after_pass, shown
from sessions_admin.ourdata.storeids import decode_id, encode_id
from tests.conftest import STORE_DB, point_store_at, staff_client_with
from tests.jobrunner import run_pending_jobs
from tests.storebuilder import StoreBuilder, create_store

HOSTS = ("host-a", "host-b", "host-c")


class Fleet:
    """Three hosts in one test process: each pass runs with that host's settings."""

    def __init__(self, tmp_path: Path, settings, neutral: Path) -> None:
        self.settings = settings
        self.neutral = neutral
        self.stores: dict[str, StoreBuilder] = {}
        for name in HOSTS:
            builder = StoreBuilder(tmp_path / name / "home")
            create_store(builder.path)
            builder.frames_root.mkdir(parents=True)
            (tmp_path / name / "var").mkdir()
            self.stores[name] = builder
        self.tmp_path = tmp_path
        settings.FLEET_PUBLISH = True

    @contextlib.contextmanager
    def on(self, name: str) -> Iterator[StoreBuilder]:
        builder = self.stores[name]
        self.settings.VAR_DIR = self.tmp_path / name / "var"
        self.settings.STORE_NAME = name
        self.settings.PUBLIC_URL = f"https://{name}.example"
        self.settings.FRAMES_DIR = builder.frames_root
        point_store_at(builder.path)
        try:
            yield builder
        finally:
            point_store_at(self.neutral)

    def pass_on(self, name: str):
        """One ``sync_index`` pass of a host: sync, publish, its fleet erasures' parts."""
        with self.on(name):
            sync.sync_once()
            done = publish_after_pass()
            if done is not None and not done.error:
                carry_out_parts()
            return done

    def jobs_on(self, name: str) -> int:
        """The host's job worker: carry out what its parts asked for."""
        with self.on(name):
            return run_pending_jobs()

    def pass_everywhere(self) -> None:
        for name in HOSTS:
            done = self.pass_on(name)
            assert done is not None and not done.error, done


@pytest.fixture
def fleet(tmp_path, settings, django_db_setup) -> Fleet:
    settings.STORE_IDENTITY_CHECK = False
    return Fleet(tmp_path, settings, django_db_setup)


def _store_rows(path: Path) -> set[tuple]:
    """Every session of a store as the directory should show it, read by hand."""
    conn = sqlite3.connect(path)
    conn.text_factory = bytes
    try:
        counts = dict(
            conn.execute("SELECT session_id, count(*) FROM session_messages GROUP BY 1").fetchall()
        )
        rows = set()
        for sid, target, profile, principal, title, created, last in conn.execute(
            "SELECT id, target_key, profile_key, principal_id, title, created_at, last_active "
            "FROM sessions WHERE typeof(id) = 'text'"
        ):
            rows.add(
                (
                    _text(sid),
                    shown(_text(target)),
                    shown(_text(profile)),
                    shown(_text(principal)),
                    shown(_text(title), 300),
                    _int(created),
                    _int(last),
                    counts.get(sid, 0),
                )
            )
        return rows
    finally:
        conn.close()


def _int(value: object) -> int | None:
    """A time as the directory keeps it: a whole number of 64 bits (text digits too)."""
    if isinstance(value, float):
        value = int(value) if value.is_integer() else None
    elif isinstance(value, bytes):
        try:
            value = int(value)
        except ValueError:
            value = None
    return value if value is None or -(2**63) <= value < 2**63 else None


def _text(value: object) -> str | None:
    if value is None or isinstance(value, int | float):
        return None if value is None else str(value)
    try:
        return value.decode("utf-8")
    except UnicodeDecodeError:
        return value.decode("utf-8", "replace")


def _directory_rows(name: str) -> set[tuple]:
    return {
        (
            str.__str__(decode_id(encode_id(row.session_id))),
            row.target,
            row.profile,
            row.principal,
            row.title,
            row.created_at,
            row.last_active,
            row.messages,
        )
        for row in FleetSession.objects.filter(host__store_name=name)
    }


def assert_directory_equals_stores(fleet: Fleet) -> None:
    for name, builder in fleet.stores.items():
        assert _directory_rows(name) == _store_rows(builder.path), name
        rows = FleetSession.objects.filter(host__store_name=name)
        keys = list(rows.values_list("key", flat=True))
        assert len(keys) == len(set(keys)), name


def _fill(fleet: Fleet, sessions: int = 6) -> None:
    for n, (name, builder) in enumerate(fleet.stores.items()):
        for i in range(sessions):
            sid = builder.add_session(
                f"s{i}", principal="user:alice" if i % 2 else f"user:{name}", title=f"t{i} {name}"
            )
            for m in range(i + n):
                builder.add_message(sid, "user", f"m{m}")
            if i % 3 == 0:
                builder.add_message(sid, "assistant", "", tool_name="fs.read", tool_call_id="c1")
                builder.add_message(
                    sid, "tool", "", tool_name="fs.read", tool_call_id="c1",
                    tool_result={"ok": False, "error": "boom"},
                )  # fmt: skip


@STORE_DB
def test_three_hosts_publish_a_directory_equal_to_their_stores(fleet):
    _fill(fleet)
    fleet.pass_everywhere()
    assert_directory_equals_stores(fleet)
    assert FleetHost.objects.count() == 3
    for host in FleetHost.objects.all():
        assert host.sessions == 6 and host.last_outcome == "ok" and host.unpublished == 0
        assert host.public_url == f"https://{host.store_name}.example"
    # Failed calls per session come from the rollups: one failed call in s0 and s3.
    failed = FleetSession.objects.filter(host__store_name="host-a", failed_calls=1)
    assert sorted(str(r.session_id) for r in failed) == ["s0", "s3"]


@STORE_DB
def test_the_directory_follows_appends_deletes_edits_and_recreated_ids(fleet):
    _fill(fleet)
    fleet.pass_everywhere()
    a, b, c = (fleet.stores[name] for name in HOSTS)
    a.add_message("s1", "user", "one more")  # append
    a.add_session("new-on-a", principal="user:alice")
    b.execute("DELETE FROM session_messages WHERE session_id = 's2'")  # the runtime's delete
    b.execute("DELETE FROM session_state WHERE session_id = 's2'")
    b.execute("DELETE FROM sessions WHERE id = 's2'")
    c.execute("UPDATE sessions SET title = 'renamed', last_active = last_active + 5 WHERE id='s4'")
    c.execute("DELETE FROM session_messages WHERE session_id = 's5'")  # re-created, same id
    c.execute("DELETE FROM sessions WHERE id = 's5'")
    c.add_session("s5", principal="user:zed", title="again", target="other.target")
    fleet.pass_everywhere()
    assert_directory_equals_stores(fleet)
    assert not FleetSession.objects.filter(host__store_name="host-b", key=exact_key("s2")).exists()


@STORE_DB
def test_a_database_that_cannot_be_reached_leaves_the_index_current_and_catches_up(
    fleet, monkeypatch
):
    _fill(fleet)
    fleet.pass_everywhere()
    fleet.stores["host-a"].add_session("late", principal="user:alice")

    def away(*args, **kwargs):
        raise DatabaseError("could not connect to server")

    with monkeypatch.context() as patch:
        patch.setattr(publishing, "_insert", away)
        done = fleet.pass_on("host-a")
    assert done is not None and "could not connect" in done.error
    assert not FleetSession.objects.filter(key=exact_key("late")).exists()
    host = FleetHost.objects.get(store_name="host-a")
    assert host.last_outcome == "failed" and "could not connect" in host.last_error
    assert host.unpublished == 1  # waiting in the side database
    done = fleet.pass_on("host-a")
    assert not done.error
    assert_directory_equals_stores(fleet)
    assert FleetHost.objects.get(store_name="host-a").last_outcome == "ok"


@STORE_DB
def test_a_publish_cut_short_is_completed_by_the_next_pass(fleet, monkeypatch):
    _fill(fleet, sessions=9)
    fleet.settings.FLEET_PUBLISH_CHUNK = 2
    real = publishing._write
    calls = []

    def cut(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt  # the process stopped between two chunks
        return real(*args, **kwargs)

    monkeypatch.setattr(publishing, "_write", cut)
    with pytest.raises(KeyboardInterrupt):
        fleet.pass_on("host-a")
    published = FleetSession.objects.filter(host__store_name="host-a").count()
    assert published == 4  # two chunks committed, whole
    fleet.pass_everywhere()
    assert_directory_equals_stores(fleet)


HOSTILE = [
    ("nul\x00inside", "title\x00with nul", "target\x00x", "user:\x00"),
    ("trailing ", "  spaced  ", " t ", "user:space "),
    ("ünï", "<script>alert(1)</script>", "t/with/slashes", "user:a/b?c#d"),
]


@STORE_DB
def test_the_fleet_pages_show_any_value_a_store_holds(fleet, staff_client):
    builder = fleet.stores["host-a"]
    for sid, title, target, principal in HOSTILE:
        builder.add_session(sid, title=title, target=target, principal=principal)
        builder.add_message(sid, "user", "hi")
    builder.execute(
        "INSERT INTO sessions (id, target_key, profile_key, principal_id, title, turn_count, "
        "created_at, last_active) VALUES (CAST(x'ff00fe' AS TEXT), 't', 'p', CAST(x'c3' AS TEXT), "
        "x'00ff', 'many', 'soon', -9223372036854775808)"
    )
    fleet.pass_everywhere()
    assert_directory_equals_stores(fleet)
    pages = ["/fleet/", "/fleet/sessions/", "/fleet/sessions/?host=host-a&q=nul"]
    for _sid, _title, target, principal in HOSTILE:
        pages.append("/fleet/sessions/?" + _query(target=target, principal=principal))
        pages.append(_principal_page(principal))
    for page in pages:
        response = staff_client.get(page)
        assert response.status_code == 200, page
    body = staff_client.get("/fleet/sessions/").content.decode()
    assert "<script>alert(1)</script>" not in body and "&lt;script&gt;" in body
    # A principal ending in a space is its own: the filter keeps the space.
    spaced = staff_client.get("/fleet/sessions/?" + _query(principal="user:space ")).content
    assert b"trailing" in spaced
    assert staff_client.get("/fleet/sessions/?q=a%00b").status_code == 400
    assert staff_client.get("/fleet/sessions/?cursor=nope").status_code == 400


def _query(**values: str) -> str:
    from urllib.parse import urlencode

    return urlencode(values)


def _principal_page(principal: str) -> str:
    from sessions_admin.ids import fleet_principal_url

    return fleet_principal_url(principal)


@STORE_DB
def test_the_sessions_of_every_host_page_newest_first_each_once(fleet, staff_client):
    _fill(fleet, sessions=40)
    fleet.pass_everywhere()
    seen, url = [], "/fleet/sessions/?principal=user:alice"
    while url:
        response = staff_client.get(url)
        assert response.status_code == 200
        context = response.context
        seen += [(row.host.store_name, str(row.session_id)) for row, _ in context["rows"]]
        url = "/fleet/sessions/" + context["next_url"] if context["next_url"] else None
    expected = FleetSession.objects.filter(principal_key=exact_key("user:alice")).order_by(
        "-newest", "-id"
    )
    assert seen == [(r.host.store_name, str(r.session_id)) for r in expected]
    assert len(seen) == 60  # 20 of alice's sessions on each of three hosts


@STORE_DB
def test_a_principal_across_the_fleet_counts_per_host_and_links_to_each(fleet, staff_client):
    _fill(fleet)
    fleet.pass_everywhere()
    response = staff_client.get(_principal_page("user:alice"))
    parts = {part.host.store_name: part for part in response.context["parts"]}
    assert set(parts) == set(HOSTS)
    for name in HOSTS:
        mine = FleetSession.objects.filter(
            host__store_name=name, principal_key=exact_key("user:alice")
        )
        assert parts[name].sessions == mine.count() == 3
        assert parts[name].messages == sum(r.messages for r in mine)
        assert parts[name].url == f"https://{name}.example/principals/user%3Aalice/"
    body = response.content.decode()
    assert "9 sessions on 3 hosts" in body


@STORE_DB
def test_a_stale_or_failed_host_is_marked(fleet, staff_client, settings):
    _fill(fleet, sessions=1)
    fleet.pass_everywhere()
    FleetHost.objects.filter(store_name="host-b").update(last_outcome="failed", last_error="boom")
    settings.FLEET_STALE_S = 1
    from datetime import timedelta

    from django.utils import timezone

    FleetHost.objects.filter(store_name="host-c").update(
        last_pass_at=timezone.now() - timedelta(seconds=60)
    )
    body = staff_client.get("/fleet/").content.decode()
    assert "2 hosts need a look" in body
    assert "failed" in body and "boom" in body and "stale" in body


def test_the_fleet_pages_are_for_staff_only(client, nonstaff_client):
    for page in ("/fleet/", "/fleet/sessions/", "/fleet/principals/user:a/"):
        assert client.get(page).status_code == 302
        assert nonstaff_client.get(page).status_code == 403


@STORE_DB
def test_a_host_that_does_not_publish_writes_nothing(store, var_dir, settings):
    settings.FLEET_PUBLISH = False
    store.add_session("s1")
    sync.sync_once()
    assert publish_after_pass() is None
    assert not FleetSession.objects.exists() and not FleetHost.objects.exists()


@STORE_DB
def test_verify_compares_the_directory_with_the_store(fleet):
    from sessions_admin.ourdata import verify

    _fill(fleet)
    fleet.pass_everywhere()
    for name in HOSTS:
        with fleet.on(name):
            verdict = verify.verify()
            assert verdict.ok, verdict.lines()
    FleetSession.objects.filter(host__store_name="host-b", key=exact_key("s1")).update(title="x")
    FleetSession.objects.filter(host__store_name="host-c", key=exact_key("s2")).delete()
    with fleet.on("host-b"):
        assert "directory: 1 drifted" in verify.verify().lines()
    with fleet.on("host-c"):
        assert "directory: 1 drifted" in verify.verify().lines()
    with fleet.on("host-a"):
        assert verify.verify().ok
    fleet.stores["host-a"].add_session("not-yet")  # waits for the next pass: not drift
    with fleet.on("host-a"):
        assert verify.verify().ok


def _store_holds(builder: StoreBuilder, principal: str) -> int:
    return builder.execute("SELECT count(*) FROM sessions WHERE principal_id = ?", (principal,))[0][
        0
    ]


@STORE_DB
def test_a_fleet_erasure_with_a_host_down_is_pending_then_ok(fleet):
    from sessions_admin.ourdata import verify
    from sessions_admin.ourdata.fleet.models import FleetErasure

    _fill(fleet)
    fleet.pass_everywhere()
    client = staff_client_with("erase_principal", enforce_csrf_checks=False)
    page = client.get(_principal_page("user:alice"))
    assert page.context["phrase"] == "erase 9 sessions of user:alice on 3 hosts"
    url = _principal_page("user:alice") + "erase/"
    refused = client.post(url, {"confirm": "erase 8 sessions of user:alice on 3 hosts"})
    assert refused.status_code == 400 and not FleetErasure.objects.exists()
    answer = client.post(url, {"confirm": page.context["phrase"], "reference": "DSR-1"})
    assert answer.status_code == 303
    erasure = FleetErasure.objects.get()
    assert answer["Location"] == f"/fleet/erasures/{erasure.pk}/"
    # host-b is down: only a and c run their passes and jobs.
    for name in ("host-a", "host-c"):
        fleet.pass_on(name)  # takes its part: asks its worker
        assert fleet.jobs_on(name) == 1
        fleet.pass_on(name)  # reads its receipt
    receipt = client.get(f"/fleet/erasures/{erasure.pk}/?format=json").json()
    assert receipt["status"] == "pending"
    parts = {part["host"]: part for part in receipt["parts"]}
    assert parts["host-a"]["status"] == parts["host-c"]["status"] == "ok"
    assert parts["host-b"]["status"] == "pending" and parts["host-b"]["receipt"] is None
    assert parts["host-a"]["sessions"] == 3
    assert _store_holds(fleet.stores["host-a"], "user:alice") == 0
    assert _store_holds(fleet.stores["host-b"], "user:alice") == 3
    # host-b comes back.
    fleet.pass_on("host-b")
    fleet.jobs_on("host-b")
    fleet.pass_on("host-b")
    receipt = client.get(f"/fleet/erasures/{erasure.pk}/?format=json").json()
    assert receipt["status"] == "ok" and receipt["erased"]["sessions"] == 9
    for name, builder in fleet.stores.items():
        assert _store_holds(builder, "user:alice") == 0
        with fleet.on(name):
            assert verify.verify().ok
    assert not FleetSession.objects.filter(principal_key=exact_key("user:alice")).exists()
    body = client.get(f"/fleet/erasures/{erasure.pk}/").content.decode()
    assert "Done on every host" in body and "https://host-b.example/principals/erasures/" in body


@STORE_DB
def test_a_host_that_joins_after_a_fleet_erasure_gets_its_part(fleet):
    from sessions_admin.ourdata.fleet.models import FleetErasure

    _fill(fleet)
    for name in ("host-a", "host-b"):
        fleet.pass_on(name)
    client = staff_client_with("erase_principal")
    phrase = client.get(_principal_page("user:alice")).context["phrase"]
    assert phrase == "erase 6 sessions of user:alice on 2 hosts"
    client.post(_principal_page("user:alice") + "erase/", {"confirm": phrase})
    erasure = FleetErasure.objects.get()
    FleetErasure.objects.filter(pk=erasure.pk).update(
        requested_at=erasure.requested_at - timedelta(seconds=5)
    )
    fleet.pass_on("host-c")  # joins now, holding three of alice's sessions
    fleet.pass_on("host-c")  # its part is added from what it published
    part = erasure.parts.get(host__store_name="host-c")
    assert part.late and part.status in ("pending", "running")
    assert erasure.status != "ok"


@STORE_DB
def test_erasing_across_the_fleet_needs_the_permission_and_csrf(fleet, staff_client):
    _fill(fleet, sessions=2)
    fleet.pass_everywhere()
    url = _principal_page("user:alice") + "erase/"
    assert staff_client.post(url, {"confirm": "x"}).status_code == 403
    strict = staff_client_with("erase_principal", enforce_csrf_checks=True)
    assert strict.post(url, {"confirm": "x"}).status_code == 403


@STORE_DB
def test_on_postgresql_each_host_has_a_partition_of_its_own(fleet):
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the directory is partitioned by host on PostgreSQL only")
    _fill(fleet, sessions=3)
    fleet.pass_everywhere()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tableoid::regclass::text, host_id, count(*) "
            "FROM sessions_admin_fleetsession GROUP BY 1, 2"
        )
        placed = {(table, host): n for table, host, n in cursor.fetchall()}
    for host in FleetHost.objects.all():
        assert placed[(f"sessions_admin_fleetsession_h{host.pk}", host.pk)] == 3
    assert len(placed) == 3
