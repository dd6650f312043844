"""``/principals/``, a principal's page, the erase form and the receipt, as staff see them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import jsonschema
import pytest
from django.db import connections
from django.test import Client
from django.test.utils import CaptureQueriesContext

from sessions_admin.ourdata import principals as side_principals
from sessions_admin.ourdata import sync
from sessions_admin.ourdata.erasures import Erasure
from tests import erasuredata as E
from tests.conftest import STORE_DB, point_store_at, staff_client_with
from tests.jobrunner import run_pending_jobs

pytestmark = [pytest.mark.usefixtures("fast_pacing", "var_dir"), STORE_DB]
SCHEMA = json.loads(
    (Path(__file__).resolve().parent.parent / "docs/erasure-receipt.schema.json").read_text()
)
ALICE_URL = "/principals/user%3Aalice/"
ERASE_URL = ALICE_URL + "erase/"


@pytest.fixture
def eraser() -> Client:
    return staff_client_with("erase_principal")


# --- The list -------------------------------------------------------------------------


def test_the_list_shows_each_principals_totals_newest_activity_first(store, staff_client):
    E.build(store)
    html = staff_client.get("/principals/").content.decode()
    rows = re.findall(r'<a class="principal-link" href="([^"]+)">([^<]+)</a>', html)
    assert rows == [("/principals/user%3Abob/", "user:bob"), (ALICE_URL, "user:alice")]
    alice_row = html.split(ALICE_URL)[1].split("</tr>")[0]
    cells = re.findall(r'<td class="num">([^<]+)</td>', alice_row)
    assert cells == ["3", "6", "3"]  # sessions, messages, tool calls


def test_the_list_reads_the_side_index_never_the_store(store, staff_client):
    E.build(store)
    staff_client.get("/principals/")  # the cached store health check, out of the way
    with CaptureQueriesContext(connections["agents"]) as store_queries:
        assert staff_client.get("/principals/?q=ALICE").status_code == 200
    assert store_queries.captured_queries == []


def test_the_filter_folds_case_as_everywhere_else_and_pages_by_keyset(
    store, staff_client, monkeypatch
):
    for n, name in enumerate(["user:STRASSE", "user:straße", "user:ſam", "user:other"]):
        store.add_session(f"sess_{n}", principal=name, created_at=1_000 + n)
    sync.sync_once()
    html = staff_client.get("/principals/?q=strasse").content.decode()
    assert "user:STRASSE" in html and "user:straße" in html and "user:other" not in html
    assert "user:ſam" in staff_client.get("/principals/?q=SAM").content.decode()
    monkeypatch.setattr(side_principals, "PAGE_SIZE", 3)
    first = staff_client.get("/principals/").content.decode()
    more = re.search(r'href="(/principals/\?cursor=[^"]+)"', first).group(1)
    rest = staff_client.get(more.replace("&amp;", "&"), headers={"HX-Request": "true"})
    html = rest.content.decode()
    assert "<html" not in html and "End of the list." in html
    assert "user:STRASSE" in html  # the oldest activity comes last
    assert first.count("principal-link") == 3 and html.count("principal-link") == 1


def test_a_bad_cursor_is_a_400_naming_it(store, staff_client):
    E.build(store)
    response = staff_client.get("/principals/?cursor=yesterday")
    assert response.status_code == 400 and "cursor" in response.content.decode()


def test_the_list_says_when_the_index_is_not_built(store, staff_client):
    store.add_session("sess_x")
    assert "has not been built yet" in staff_client.get("/principals/").content.decode()


def test_every_principal_cell_links_to_its_page(store, staff_client):
    E.build(store)
    link = f'href="{ALICE_URL}"'
    assert link in staff_client.get("/sessions/").content.decode()
    assert link in staff_client.get(f"/search/?q={E.ALICE_ONLY}").content.decode()
    assert link in staff_client.get("/tools/fs.read/").content.decode()
    assert link in staff_client.get("/?window=all").content.decode()


# --- A principal's page ---------------------------------------------------------------


def test_the_page_counts_exactly_what_sql_counts_with_odd_principals_beside(store, staff_client):
    E.build(store)
    with store.connect() as conn:  # odd values: none of them is user:alice
        rows = [
            ("n1", None),
            ("b1", b"user:alice\xff"),  # a BLOB
            ("u1", "user:alice"),  # TEXT that is not UTF-8 (made below)
        ]
        conn.executemany("INSERT INTO sessions VALUES (?, 't', 'p', ?, 't', 0, 1, 1)", rows)
        conn.execute("UPDATE sessions SET principal_id = CAST(X'ff75' AS TEXT) WHERE id = 'u1'")
        conn.execute(
            "INSERT INTO session_messages (session_id, role, content, ts) "
            "VALUES ('b1', 'user', 'x', 5)"
        )
    sync.sync_once()
    html = staff_client.get(ALICE_URL).content.decode()
    sessions, messages, state = E.exact_counts(store, E.ALICE)
    counts = dict(re.findall(r'<th scope="row">([a-z ]+)</th><td class="num">([0-9,]+)</td>', html))
    assert counts == {
        "sessions": str(sessions),
        "messages": str(messages),
        "state rows": str(state),
        "frame directories": "3",
        "our records": "1",
    }
    assert "erase 3 sessions of user:alice" not in html  # the viewer may not erase
    assert "fs.read" in html and "/sessions/?principal=user%3Aalice" in html
    # A BLOB or undecodable principal is listed as decoded and marked, with no link to a
    # page that would find none of its sessions.
    listed = staff_client.get("/principals/").content.decode()
    urls = set(re.findall(r'href="(/principals/[^"?]+/)"', listed))
    assert urls == {ALICE_URL, "/principals/user%3Abob/"} and "no principal" in listed
    assert listed.count("(binary or not valid UTF-8)") == 2


def test_the_page_counts_other_sessions_that_mention_the_principal(store, staff_client):
    world = E.build(store)
    html = staff_client.get(ALICE_URL).content.decode()
    assert "<strong>1</strong> other session contains" in html
    assert '/search/?q=user%3Aalice"' in html
    assert world.bob  # bob's session is the one that mentions alice


def test_ids_a_path_cannot_carry_use_the_query_form(store, staff_client):
    for name in ("~", "erasures/5", "a/erase", ".."):
        store.add_session(f"sess_{len(name)}{name[0]}", principal=name)
    from sessions_admin.ids import principal_url

    for name in ("~", "erasures/5", ".."):
        url = principal_url(name)
        assert url.startswith("/principals/~/?id=")
        assert f"<code>{name}</code>" in staff_client.get(url).content.decode()
    page = staff_client.get("/principals/a%2Ferase/").content.decode()
    assert "<code>a/erase</code>" in page and ">1</td>" in page


# --- Erasing --------------------------------------------------------------------------


def test_a_wrong_or_stale_phrase_is_refused_and_nothing_is_deleted(store, eraser):
    E.build(store)
    for typed in ("erase 2 sessions of user:alice", "yes"):
        response = eraser.post(ERASE_URL, {"confirm": typed})
        assert response.status_code == 400
        assert "erase 3 sessions of user:alice" in response.content.decode()
    assert E.exact_counts(store, E.ALICE)[0] == 3 and not Erasure.objects.exists()


def test_staff_without_the_permission_get_403_and_csrf_is_required(store, staff_client):
    world = E.build(store)
    phrase = {"confirm": "erase 3 sessions of user:alice"}
    assert staff_client.post(ERASE_URL, phrase).status_code == 403
    guarded = staff_client_with("erase_principal", enforce_csrf_checks=True)
    assert guarded.post(ERASE_URL, phrase).status_code == 403
    assert E.exact_counts(store, E.ALICE)[0] == 3
    assert all((store.frames_root / sid).is_dir() for sid in world.alice)


def test_an_erasure_answers_303_to_its_receipt_which_verifies_and_validates(store, eraser):
    world = E.build(store)
    response = eraser.post(ERASE_URL, {"confirm": "erase 3 sessions of user:alice"})
    assert response.status_code == 303
    receipt = Erasure.objects.get()
    assert response["Location"] == f"/principals/erasures/{receipt.pk}/"
    waiting = eraser.get(response["Location"]).content.decode()
    assert "Waiting for the worker" in waiting and 'hx-trigger="every 1s"' in waiting
    assert "written when the erasure ends" in waiting  # no digest before there is one
    assert E.exact_counts(store, E.ALICE)[0] == 3  # the request recorded it; nothing deleted
    assert run_pending_jobs() == 1
    html = eraser.get(response["Location"]).content.decode()
    assert "0 left" in html and "<strong>1" not in html and E.sha256_of(world.alice) in html
    document = json.loads(eraser.get(response["Location"] + "?format=json").content)
    jsonschema.validate(document, SCHEMA)
    assert document["status"] == "ok" and document["erased"]["sessions"] == 3
    assert document["session_ids_sha256"] == E.sha256_of(world.alice)
    assert set(document["verification"].values()) == {0}
    assert "Earlier erasures" in eraser.get(ALICE_URL).content.decode()


def test_the_receipt_of_a_partial_erasure_offers_to_erase_again(store, eraser, monkeypatch):
    E.build(store)

    from sessions_admin.deletion import jobs

    real = jobs.cascade_delete
    made = []

    def runtime_makes_one(*args, **kwargs):
        done = real(*args, **kwargs)
        made.append(store.add_session(f"sess_new{len(made)}", principal=E.ALICE))
        return done

    monkeypatch.setattr(jobs, "cascade_delete", runtime_makes_one)
    response = eraser.post(ERASE_URL, {"confirm": "erase 3 sessions of user:alice"})
    run_pending_jobs()
    html = eraser.get(response["Location"]).content.decode()
    assert "appeared during the erasure" in html and "Erase again" in html
    jsonschema.validate(
        json.loads(eraser.get(response["Location"] + "?format=json").content), SCHEMA
    )


def test_read_only_mode_refuses_with_its_sentence_and_no_receipt(store, eraser):
    E.build(store)
    point_store_at(store.path, read_only=True)
    assert 'name="confirm"' not in eraser.get(ALICE_URL).content.decode()
    response = eraser.post(ERASE_URL, {"confirm": "erase 3 sessions of user:alice"})
    assert "read-only mode" in response.content.decode()
    assert not Erasure.objects.exists() and E.exact_counts(store, E.ALICE)[0] == 3


def test_behind_gunicorn_the_raw_path_settles_the_id(store, eraser):
    store.add_session("sess_ae", principal="a/erase")
    store.add_session("sess_a", principal="a")
    raw = {"RAW_URI": "/principals/a%2Ferase/erase/"}
    phrase = {"confirm": "erase 1 session of a/erase"}
    response = eraser.post("/principals/a/erase/erase/", phrase, **raw)
    assert response.status_code == 303
    assert Erasure.objects.get().principal == "a/erase"
    run_pending_jobs()
    assert store.execute("SELECT principal_id FROM sessions") == [("a",)]
    assert eraser.get("/principals/a/erase/", RAW_URI="/principals/a/erase/").status_code == 405


def test_the_empty_principal_is_shown_but_never_erased(store, eraser):
    store.add_session("sess_empty", principal="")
    store.add_session("sess_none", principal=None)
    page = eraser.get("/principals/~/?id=")
    assert page.status_code == 200 and 'name="confirm"' not in page.content.decode()
    response = eraser.post("/principals/~/erase/?id=", {"confirm": "erase 1 session of "})
    assert response.status_code == 400 and "id" in response.content.decode()
    assert store.count("sessions") == 2 and not Erasure.objects.exists()


def test_the_list_marks_a_binary_or_undecodable_principal_and_links_only_real_text(
    store, staff_client
):
    with store.connect() as conn:
        conn.execute(
            "INSERT INTO sessions (id, target_key, profile_key, principal_id, created_at, "
            "last_active) VALUES ('blob', 't', 'p', x'80ff', 1, 1), "
            "('bad', 't', 'p', CAST(x'41ff' AS TEXT), 2, 2)"
        )
    store.add_session("real", principal="real \ufffd text")
    sync.sync_once()
    html = staff_client.get("/principals/").content.decode()
    assert html.count("(binary or not valid UTF-8)") == 2
    assert "/principals/A%EF%BF%BD/" not in html and "/principals/%EF%BF%BD%EF%BF%BD/" not in html
    assert "/principals/real%20%EF%BF%BD%20text/" in html  # valid text with U+FFFD: linked


def test_the_receipt_reads_as_one_sentence_with_its_reference_and_review_records(store, eraser):
    world = E.build(store)
    from sessions_admin.ourdata.review.models import Label, Note, SessionLabel

    Note.objects.create(session_id=world.alice[0], message_id=None, text="x", author_name="a")
    SessionLabel.objects.create(session_id=world.alice[1], label=Label.objects.create(name="l"))
    from sessions_admin.ourdata.reveals import Reveal

    for sid, reason in ((world.alice[0], "T-1"), (world.alice[2], "T-2"), (world.bob[0], "T-3")):
        Reveal.objects.create(session_id=sid, message_id=1, reason=reason, actor="a")
    response = eraser.post(
        ERASE_URL, {"confirm": "erase 3 sessions of user:alice", "reference": "DSR-2291"}
    )
    assert run_pending_jobs() == 1
    html = eraser.get(response["Location"]).content.decode()
    sentence = re.search(r'<p class="receipt-sentence">(.*?)</p>', html, re.S).group(1)
    assert sentence.startswith("All data of user:alice held by this dashboard")
    assert "3 conversations" in sentence and "1 review note" in sentence and "1 label" in sentence
    assert re.search(r" at \d\d:\d\d:\d\d UTC", sentence)
    assert "DSR-2291" in html and "what it is" in html
    assert not re.search(r"\d\d:\d\d:\d\d\.\d{6}", html)  # times to the second
    document = json.loads(eraser.get(response["Location"] + "?format=json").content)
    jsonschema.validate(document, SCHEMA)
    assert document["reference"] == "DSR-2291"
    assert document["review_records"] == {
        "notes": 1,
        "labels": 1,
        "queue_items_marked": 0,
        "reveals": 2,
    }
    assert "2 records of revealed values" in sentence
    # Who revealed what in alice's sessions is gone; bob's record stays.
    assert list(Reveal.objects.values_list("reason", flat=True)) == ["T-3"]
    too_long = eraser.post(ERASE_URL, {"confirm": "x", "reference": "r" * 201})
    assert too_long.status_code == 400 and b"reference" in too_long.content
