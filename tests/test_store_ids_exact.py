"""Our records hold any id the store holds, on SQLite and on PostgreSQL (``ourdb``).

A session id or principal with NUL (which PostgreSQL's text and jsonb refuse),
TEXT that is not UTF-8, a BLOB: notes, labels, queue items, verdicts, the
deletion audit and the erasure receipt keep it exactly and find it again. Free
text with NUL (a note, a queue's name, a verdict's text, ``?label=``) gets a
400 naming the field instead of a 503 from the database.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.deletion.erasure import erasure_phrase
from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.ourdata.review.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from sessions_admin.ourdata.storeids import ESC, from_column, to_column
from sessions_admin.store.values import Undecodable
from tests.conftest import STORE_DB
from tests.jobrunner import run_pending_jobs

pytestmark = [pytest.mark.usefixtures("var_dir")]

NUL_ID = "a\x00b"
NUL_PRINCIPAL = "p\x00q"

#: What a store's session id can be, as the dashboard reads it.
STORE_IDS = st.one_of(
    st.text(max_size=8),
    st.text(st.sampled_from(["\x00", ESC, "a", " ", "\ufffd", "\ud800"]), max_size=6),
    st.binary(min_size=1, max_size=4).map(lambda raw: Undecodable(b"x" + raw + b"\xff")),
    st.binary(max_size=4),
)


@given(STORE_IDS)
def test_a_store_id_goes_into_our_column_and_comes_back_exactly(value):
    stored = to_column(value)
    assert isinstance(stored, str)
    assert "\x00" not in stored
    assert from_column(stored) == value
    assert type(from_column(stored)) is type(value)


@pytest.mark.django_db
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(STORE_IDS, min_size=1, max_size=4, unique_by=lambda v: (type(v), v)))
def test_notes_on_any_ids_are_kept_and_found_exactly(ids):
    Note.objects.all().delete()
    for n, sid in enumerate(ids):
        Note.objects.create(session_id=sid, text=f"note {n}", author_name="a")
    for n, sid in enumerate(ids):
        (note,) = Note.objects.filter(session_id=sid)
        assert note.text == f"note {n}"
        assert note.session_id == sid
        assert type(note.session_id) is type(sid)
    found = set(Note.objects.filter(session_id__in=ids).values_list("session_id", flat=True))
    assert found == set(ids)


@pytest.mark.django_db
def test_the_audit_keeps_an_id_holding_nul_inside_its_json():
    audit = DeletionAudit.objects.create(
        actor="t", operation="delete_session", target={"session_ids": [NUL_ID, "plain"]}
    )
    audit.refresh_from_db()
    assert audit.target["session_ids"] == [NUL_ID, "plain"]


@STORE_DB
def test_a_session_id_holding_nul_is_noted_labelled_queued_judged_and_deleted(store, admin_client):
    sid = store.add_session(NUL_ID, principal="user:alice")
    store.add_message(sid, content="hello")
    Label.objects.create(name="regression")
    page = f"/sessions/{quote(sid, safe='')}/"

    assert admin_client.get(page).status_code == 200
    assert admin_client.post(page + "notes/", {"text": "seen"}).status_code == 303
    assert admin_client.post(page + "labels/", {"label": "regression"}).status_code == 303
    assert Note.objects.get().session_id == NUL_ID
    assert SessionLabel.objects.get().session_id == NUL_ID
    assert "seen" in admin_client.get(page).content.decode()
    listed = admin_client.get("/sessions/?label=regression")
    assert listed.status_code == 200 and "a session" in listed.content.decode()

    made = admin_client.post("/reviews/", {"name": "q", "source": "/sessions/"})
    assert made.status_code == 303
    queue = ReviewQueue.objects.get()
    assert list(queue.items.values_list("session_id", flat=True)) == [NUL_ID]
    assert admin_client.post(f"/reviews/{queue.pk}/next/").status_code == 303
    judged = admin_client.post(
        f"/reviews/{queue.pk}/verdict/", {"session": sid, "verdict": "fail", "text": "bad"}
    )
    assert judged.status_code == 303
    assert ReviewItem.objects.get().verdict == "fail"

    deleted = admin_client.post(page + "delete/", {"confirm": sid})
    assert deleted.status_code == 303
    assert store.count("sessions") == 0
    assert DeletionAudit.objects.get().target["session_ids"] == [NUL_ID]
    assert not Note.objects.exists() and not SessionLabel.objects.exists()


@STORE_DB
def test_a_principal_and_session_holding_nul_are_erased_with_a_true_receipt(store, admin_client):
    for sid in (NUL_ID, "plain"):
        store.add_session(sid, principal=NUL_PRINCIPAL)
        store.add_message(sid, content="hi")
    store.add_session("other", principal="p")
    Note.objects.create(session_id=NUL_ID, text="about her", author_name="a")
    url = f"/principals/{quote(NUL_PRINCIPAL, safe='')}/erase/"
    answer = admin_client.post(url, {"confirm": erasure_phrase(NUL_PRINCIPAL, 2)})
    assert answer.status_code == 303
    run_pending_jobs()
    receipt = Erasure.objects.get()
    assert (receipt.status, receipt.sessions, receipt.messages) == ("ok", 2, 2)
    assert not Note.objects.exists()
    assert DeletionAudit.objects.get(pk=receipt.audit_id).notes_deleted == 1
    assert store.execute("SELECT id FROM sessions") == [("other",)]
    assert admin_client.get(answer["Location"]).status_code == 200


@pytest.mark.parametrize(
    ("method", "url", "data", "field"),
    [
        ("post", "/sessions/s1/notes/", {"text": "no\x00te"}, "text"),
        ("post", "/reviews/", {"name": "q\x00", "source": "/sessions/"}, "name"),
        ("get", "/sessions/?label=a%00b", None, "label"),
        ("get", "/search/?q=hello&label=a%00b", None, "label"),
    ],
)
@STORE_DB
def test_free_text_holding_nul_gets_a_400_naming_its_field(
    store, admin_client, method, url, data, field
):
    store.add_session("s1")
    answer = admin_client.post(url, data) if method == "post" else admin_client.get(url)
    assert answer.status_code == 400
    assert f"{field} cannot contain a NUL character" in answer.content.decode()


@STORE_DB
def test_a_verdict_text_holding_nul_gets_a_400_and_the_claim_stays(store, admin_client):
    sid = store.add_session("s1")
    queue = ReviewQueue.objects.create(name="q", source="/sessions/")
    ReviewItem.objects.create(queue=queue, session_id=sid, position=1)
    assert admin_client.post(f"/reviews/{queue.pk}/next/").status_code == 303
    answer = admin_client.post(
        f"/reviews/{queue.pk}/verdict/", {"session": sid, "verdict": "pass", "text": "x\x00"}
    )
    assert answer.status_code == 400
    assert "text cannot contain a NUL character" in answer.content.decode()
    item = ReviewItem.objects.get()
    assert item.verdict == "" and item.claimed_by is not None
