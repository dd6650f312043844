"""Notes on a session and on a message: added, shown escaped with links, edited and
deleted by whom the rules allow, refused with a 400 naming the field when bad."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from django.contrib.auth.models import Permission, User
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from sessions_admin.models import Note
from tests.conftest import STORE_DB

SID = "sess_notes"


@pytest.fixture
def session(store):
    store.add_session(SID, title="notes here")
    ids = [store.add_message(SID, "user", f"message {n}") for n in range(3)]
    store.add_session("sess_other")
    other = store.add_message("sess_other", "user", "elsewhere")
    return ids, other


def other_annotator(*codenames: str, name: str = "second") -> Client:
    user = User.objects.create_user(name, is_staff=True)
    for codename in ("view_session", "annotate", *codenames):
        user.user_permissions.add(
            Permission.objects.get(codename=codename, content_type__app_label="sessions_admin")
        )
    client = Client()
    client.force_login(user)
    return client


@STORE_DB
def test_a_note_on_the_session_is_added_and_shown_in_the_header_count(session, annotator_client):
    response = annotator_client.post(f"/sessions/{SID}/notes/", {"text": "first look"})
    assert response.status_code == 303 and response["Location"].endswith("#notes")
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert "1 note" in page and "first look" in page and "on the session" in page
    note = Note.objects.get()
    assert (note.author_name, note.message_id, note.session_id) == ("annotator", None, SID)


@STORE_DB
def test_a_note_on_a_message_shows_beside_that_message(session, annotator_client):
    ids, _ = session
    response = annotator_client.post(
        f"/sessions/{SID}/notes/", {"text": "the wrong tool", "message": str(ids[1])}
    )
    assert response["Location"].endswith(f"#message-{ids[1]}")
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    beside = page.split(f'id="message-{ids[1]}"', 1)[1].split('id="message-', 1)[0]
    assert "the wrong tool" in beside and 'class="message-notes"' in beside
    assert f"annotator · #{ids[1]}" in page  # the header jumps to it


@STORE_DB
def test_htmx_gets_the_notes_region_only(session, annotator_client):
    response = annotator_client.post(
        f"/sessions/{SID}/notes/", {"text": "quick"}, headers={"HX-Request": "true"}
    )
    body = response.content.decode()
    assert response.status_code == 200 and body.lstrip().startswith('<section id="notes"')
    assert "quick" in body and "<html" not in body


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"text": ""}, "text"),
        ({"text": "   \n  "}, "text"),
        ({"text": "x" * 10_001}, "text"),
        ({"text": "ok", "message": "999999"}, "message"),
        ({"text": "ok", "message": "²"}, "message"),
        ({"text": "ok", "message": "other"}, "message"),
    ],
)
@STORE_DB
def test_bad_input_is_a_400_naming_the_field(session, annotator_client, data, field):
    _, other = session
    if data.get("message") == "other":
        data = {**data, "message": str(other)}  # a message of another session
    response = annotator_client.post(f"/sessions/{SID}/notes/", data)
    assert response.status_code == 400
    assert f"{field} " in response.content.decode()
    assert Note.objects.count() == 0


@STORE_DB
def test_ten_thousand_characters_are_allowed(session, annotator_client):
    response = annotator_client.post(f"/sessions/{SID}/notes/", {"text": "y" * 10_000})
    assert response.status_code == 303 and len(Note.objects.get().text) == 10_000


@STORE_DB
def test_notes_are_escaped_and_only_web_addresses_become_links(session, annotator_client):
    text = (
        '<script>alert("x")</script> <b>bold</b>\nsee https://example.com/a?b=1&c=2.\n'
        'javascript:alert(1) <a href="javascript:alert(2)">click</a> data:text/html,hi'
    )
    annotator_client.post(f"/sessions/{SID}/notes/", {"text": text})
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert "<script>alert" not in page and "<b>bold</b>" not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert 'href="https://example.com/a?b=1&amp;c=2"' in page  # the full stop left out
    assert 'href="javascript:' not in page and 'href="data:' not in page
    assert "&lt;b&gt;bold&lt;/b&gt;\nsee" in page  # the line break is kept


@STORE_DB
def test_only_the_author_may_edit_a_note(session, annotator_client):
    annotator_client.post(f"/sessions/{SID}/notes/", {"text": "draft"})
    note = Note.objects.get()
    second = other_annotator("delete_any_note")
    assert (
        second.post(f"/sessions/{SID}/notes/{note.pk}/edit/", {"text": "mine"}).status_code == 403
    )
    response = annotator_client.post(f"/sessions/{SID}/notes/{note.pk}/edit/", {"text": "final"})
    assert response.status_code == 303
    note.refresh_from_db()
    assert note.text == "final" and note.edited_at is not None
    empty = annotator_client.post(f"/sessions/{SID}/notes/{note.pk}/edit/", {"text": ""})
    assert empty.status_code == 400 and "text " in empty.content.decode()


@STORE_DB
def test_a_note_is_deleted_by_its_author_or_with_can_delete_any_note(session, annotator_client):
    for text in ("one", "two"):
        annotator_client.post(f"/sessions/{SID}/notes/", {"text": text})
    one, two = Note.objects.order_by("pk")
    plain = other_annotator()
    assert plain.post(f"/sessions/{SID}/notes/{one.pk}/delete/").status_code == 403
    assert annotator_client.post(f"/sessions/{SID}/notes/{one.pk}/delete/").status_code == 303
    moderator = other_annotator("delete_any_note", name="moderator")
    assert moderator.post(f"/sessions/{SID}/notes/{two.pk}/delete/").status_code == 303
    assert Note.objects.count() == 0


@STORE_DB
def test_a_note_of_another_session_or_store_is_not_found_here(session, annotator_client):
    annotator_client.post("/sessions/sess_other/notes/", {"text": "other session"})
    note = Note.objects.get()
    assert annotator_client.post(f"/sessions/{SID}/notes/{note.pk}/delete/").status_code == 404
    Note.objects.create(session_id=SID, text="far away", author_name="x", store_name="other-host")
    assert "far away" not in annotator_client.get(f"/sessions/{SID}/").content.decode()


@STORE_DB
def test_staff_without_can_annotate_see_notes_but_no_form(session, annotator_client, viewer_client):
    annotator_client.post(f"/sessions/{SID}/notes/", {"text": "visible"})
    page = viewer_client.get(f"/sessions/{SID}/").content.decode()
    assert "visible" in page and 'id="note-form"' not in page and "note-link" not in page
    page = annotator_client.get(f"/sessions/{SID}/?tab=state").content.decode()
    assert "visible" in page


@STORE_DB
def test_the_edit_link_fills_the_one_note_form_and_delete_buttons_share_one_form(
    session, annotator_client
):
    ids, _ = session
    annotator_client.post(f"/sessions/{SID}/notes/", {"text": "mine <b>", "message": str(ids[0])})
    note = Note.objects.get()
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert f'formaction="/sessions/{SID}/notes/{note.pk}/delete/"' in page
    assert 'form="note-actions"' in page and '<form id="note-actions" method="post"' in page
    edit = re.search(r'<a href="(\?edit=\d+#note-form)"', page).group(1).replace("&amp;", "&")
    editing = annotator_client.get(f"/sessions/{SID}/{edit}").content.decode()
    assert "Edit your note" in editing and "mine &lt;b&gt;</textarea>" in editing
    assert f'action="/sessions/{SID}/notes/{note.pk}/edit/"' in editing
    second = other_annotator()
    theirs = second.get(f"/sessions/{SID}/?edit={note.pk}").content.decode()
    assert "Edit your note" not in theirs and f"{note.pk}/delete/" not in theirs


@STORE_DB
def test_the_header_links_to_a_note_on_another_page_of_the_transcript(store, annotator_client):
    store.add_session(SID)
    ids = [store.add_message(SID, "user", f"m{n}") for n in range(120)]
    annotator_client.post(f"/sessions/{SID}/notes/", {"text": "deep", "message": str(ids[-1])})
    note = Note.objects.get()
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert f'href="/sessions/{SID}/?at={ids[-1]}#note-{note.pk}"' in page
    assert f'id="note-{note.pk}"' not in page  # drawn on its message's page, not this one
    there = annotator_client.get(f"/sessions/{SID}/?at={ids[-1]}").content.decode()
    assert f'<li id="note-{note.pk}">' in there and f'href="#note-{note.pk}"' in there


@STORE_DB
def test_a_note_written_during_a_review_goes_back_to_the_review(session, annotator_client):
    ids, _ = session
    response = annotator_client.post(
        f"/sessions/{SID}/notes/", {"text": "x", "message": str(ids[0]), "review": "7"}
    )
    assert response["Location"] == f"/sessions/{SID}/?at={ids[0]}&review=7#message-{ids[0]}"


@STORE_DB
@pytest.mark.parametrize(
    ("zone", "shown"), [("UTC", "2026-03-01 23:30"), ("Asia/Tokyo", "2026-03-02 08:30")]
)
def test_a_note_beside_its_message_shows_its_time_in_the_dashboards_zone(
    session, annotator_client, settings, zone, shown
):
    ids, _ = session
    note = Note.objects.create(session_id=SID, message_id=ids[0], text="t", author_name="a")
    Note.objects.filter(pk=note.pk).update(created_at=datetime(2026, 3, 1, 23, 30, 5, tzinfo=UTC))
    settings.TIME_ZONE = zone
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    beside = page.split('class="message-notes"', 1)[1]
    instant = re.search(r'class="note-time small" datetime="([^"]+)">([^<]+)<', beside)
    assert instant is not None and instant.group(2) == shown
    assert datetime.fromisoformat(instant.group(1)) == datetime(2026, 3, 1, 23, 30, 5, tzinfo=UTC)


@given(st.datetimes(timezones=st.just(UTC)))
def test_a_notes_stored_time_reads_back_as_the_same_instant(moment):
    from sessions_admin.ourdata.review.notes import utc_iso_text

    stored = str(moment.replace(tzinfo=None))  # how Django's SQLite keeps it
    assert datetime.fromisoformat(utc_iso_text(stored)) == moment
    for other in (moment.isoformat(), moment.astimezone(timezone(timedelta(hours=5))).isoformat()):
        assert datetime.fromisoformat(utc_iso_text(other)) == moment
