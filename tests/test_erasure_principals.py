"""Erasure takes exactly one principal's rows, whatever the principals hold.

Principals of every storage class sit side by side: TEXT with NUL, trailing
spaces, LIKE and GLOB wildcards, U+FFFD; TEXT that is not UTF-8 (and valid
text that reads the same after replacement); BLOBs, numbers, NULL. Erasing
one takes exactly the sessions whose principal is that value, byte for byte;
the receipt's numbers equal a count made by hand; "ok" means nothing is left.
Runs on PostgreSQL too (``ourdb``): our records must hold any principal.
"""

from __future__ import annotations

import sqlite3
import tempfile
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.deletion.erasure import erase_principal, erasure_phrase, request_erasure
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.store.values import Undecodable
from tests.conftest import STORE_DB, point_store_at
from tests.deletion_rows import ACTOR
from tests.storebuilder import StoreBuilder, create_store
from tests.strategies import NotUtf8Text, insert_row

pytestmark = [pytest.mark.usefixtures("fast_pacing", "var_dir"), STORE_DB]

TEXTS = st.text(
    st.sampled_from(["a", "A", " ", "\x00", "%", "_", "*", "?", "\ufffd", "é"]),
    min_size=1,
    max_size=5,
)
#: What a principal column may hold: (the value to store, the value a caller erases by).
PRINCIPALS = st.one_of(
    TEXTS.map(lambda t: (t, t)),
    st.sampled_from([b"\xffA", b"A\xfe", b"\xff", b"a \xc3"]).map(
        lambda raw: (NotUtf8Text(raw), Undecodable(raw))
    ),
    st.binary(min_size=0, max_size=3).map(lambda b: (b, None)),
    st.sampled_from([0, -1, 2**63 - 1, -(2**63), 1.5]).map(lambda n: (n, None)),
    st.just((None, None)),
)


def stored_bytes(value: object) -> tuple[str, bytes | None]:
    """(storage class, bytes) as SQLite keeps a value: what "exactly this principal" means."""
    if isinstance(value, NotUtf8Text):
        return "text", bytes(value)
    if isinstance(value, str):
        return "text", value.encode("utf-8")
    if isinstance(value, bytes):
        return "blob", value
    return type(value).__name__, None


def build(principals: list[object]) -> StoreBuilder:
    home = StoreBuilder(Path(tempfile.mkdtemp(prefix="erase-principals-")) / "home")
    create_store(home.path)
    home.frames_root.mkdir(parents=True)
    with home.connect() as conn:
        for n, principal in enumerate(principals):
            for copy in range(2):
                sid = f"s{n}-{copy}"
                insert_row(
                    conn,
                    "sessions",
                    {
                        "id": sid,
                        "target_key": "t",
                        "profile_key": "p",
                        "principal_id": principal,
                        "created_at": 1,
                        "last_active": 1,
                    },
                )
                conn.execute(
                    "INSERT INTO session_messages (session_id, role, content, ts) "
                    "VALUES (?, 'user', 'hello', 1)",
                    (sid,),
                )
                (home.frames_root / sid).mkdir()
    return home


def by_hand(home: StoreBuilder, target: tuple[str, bytes | None]) -> tuple[set[str], int]:
    """The sessions whose principal is exactly ``target``, and their messages."""
    conn = sqlite3.connect(home.path)
    conn.text_factory = bytes
    try:
        rows = conn.execute(
            "SELECT id, typeof(principal_id), CAST(principal_id AS BLOB) FROM sessions"
        ).fetchall()
        ids = {sid.decode() for sid, kind, raw in rows if (kind.decode(), raw) == target}
        marks = ",".join("?" * len(ids))
        messages = conn.execute(
            f"SELECT count(*) FROM session_messages WHERE session_id IN ({marks})", sorted(ids)
        ).fetchone()[0]
    finally:
        conn.close()
    return ids, messages if ids else 0


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(PRINCIPALS, min_size=1, max_size=5), st.data())
def test_an_erasure_takes_exactly_that_principals_rows_and_the_receipt_equals_a_count(
    settings, principals, data
):
    erasable = [(stored, by) for stored, by in principals if isinstance(by, str) and by != ""]
    if not erasable:
        return
    stored, target = data.draw(st.sampled_from(erasable))
    home = build([value for value, _ in principals])
    settings.FRAMES_DIR = home.frames_root
    point_store_at(home.path)
    settings.VAR_DIR = Path(tempfile.mkdtemp(prefix="erase-principals-var-"))
    sync.sync_once()  # the side index and rollups hold every principal too
    expected_ids, expected_messages = by_hand(home, stored_bytes(stored))
    before = {row[0] for row in home.execute("SELECT id FROM sessions")}
    receipt = erase_principal(target, actor=ACTOR)
    after = {row[0] for row in home.execute("SELECT id FROM sessions")}
    assert before - after == expected_ids
    assert receipt.sessions == len(expected_ids)
    assert receipt.messages == expected_messages
    assert receipt.frame_dirs == len(expected_ids)
    assert sorted(p.name for p in home.frames_root.iterdir()) == sorted(after)
    assert receipt.status == Erasure.Status.OK, receipt.detail
    assert by_hand(home, stored_bytes(stored)) == (set(), 0)  # "ok": nothing is left


def test_a_principal_ending_in_a_space_is_erased_with_its_own_phrase(store):
    store.add_session("sess_bob", principal="bob ")
    store.add_session("sess_bob2", principal="bob")
    phrase = erasure_phrase("bob ", 1)
    assert phrase.endswith("bob ")
    receipt = request_erasure("bob ", actor=ACTOR, confirm=phrase)
    assert receipt.job is not None
    # The trailing space cannot be dropped: "bob" is another principal.
    assert request_erasure("bob", actor=ACTOR, confirm=erasure_phrase("bob", 1)).pk != receipt.pk


def test_the_command_line_erases_a_principal_that_is_not_utf8_without_a_traceback(store):
    with store.connect() as conn:
        insert_row(
            conn,
            "sessions",
            {
                "id": "sess_bad",
                "target_key": "t",
                "profile_key": "p",
                "principal_id": NotUtf8Text(b"user:\xff"),
                "created_at": 1,
                "last_active": 1,
            },
        )
    store.add_session("sess_look_alike", principal="user:\ufffd")
    out = StringIO()
    argument = b"user:\xff".decode("utf-8", "surrogateescape")  # how Python hands it over
    call_command("erase_principal", argument, "--yes", stdout=out, stderr=StringIO())
    assert "Receipt" in out.getvalue()
    assert store.execute("SELECT id FROM sessions") == [("sess_look_alike",)]


def test_a_principal_holding_nul_is_erased_and_its_receipt_kept(store):
    store.add_session("sess_nul", principal="user:\x00x")
    receipt = erase_principal("user:\x00x", actor=ACTOR)
    assert receipt.status == Erasure.Status.OK and receipt.sessions == 1
    assert receipt.principal == "user:\u2400x"
    assert list(Erasure.of_principal("user:\x00x")) == [receipt]
    assert list(Erasure.of_principal("user:\u2400x")) == []


def test_an_undecodable_principal_and_its_look_alike_keep_apart_in_the_side_index(
    store, settings, tmp_path
):
    settings.VAR_DIR = tmp_path / "side"
    settings.VAR_DIR.mkdir()
    with store.connect() as conn:
        insert_row(
            conn,
            "sessions",
            {
                "id": "sess_bad",
                "target_key": "t",
                "profile_key": "p",
                "principal_id": NotUtf8Text(b"\xffA"),
                "created_at": 1,
                "last_active": 1,
            },
        )
    store.add_message("sess_bad", content="one")
    for n in range(2):
        sid = store.add_session(f"sess_alike{n}", principal="\ufffdA")
        store.add_message(sid, content="two")
        store.add_message(sid, content="three")
    sync.sync_once()
    receipt = erase_principal(Undecodable(b"\xffA"), actor=ACTOR)
    assert receipt.status == Erasure.Status.OK, receipt.detail
    assert receipt.sessions == 1
    assert receipt.index_entries == 2  # its session's entry and its message's
    look_alike = erase_principal("\ufffdA", actor=ACTOR)
    assert look_alike.status == Erasure.Status.OK, look_alike.detail
    assert look_alike.sessions == 2 and look_alike.index_entries == 6
