"""The admin's capped counts read as "more than", and Clear all's typed phrase."""

from __future__ import annotations

from sessions_admin import admin as site_admin
from sessions_admin import sqlhelpers
from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB

MESSAGES = "/admin/sessions_admin/message/"
CLEAR_ALL = "/admin/sessions_admin/session/clear-all/"


@STORE_DB
def test_a_capped_message_count_reads_as_more_than_the_cap(store, admin_client, monkeypatch):
    monkeypatch.setattr(sqlhelpers, "COUNT_CAP", 3)
    sid = store.add_session("s")
    for _ in range(5):
        store.add_message(sid)
    html = admin_client.get(MESSAGES).content.decode()
    assert "more than 3 messages" in html
    assert "4 messages" not in html
    searched = admin_client.get(MESSAGES, {"q": "s"}).content.decode()
    assert "more than 3 results" in searched and "4 results" not in searched


@STORE_DB
def test_select_all_across_a_capped_count_says_more_than(store, admin_client, monkeypatch):
    monkeypatch.setattr(sqlhelpers, "COUNT_CAP", 3)
    monkeypatch.setattr(site_admin.store.SessionAdmin, "list_per_page", 2)
    for i in range(5):
        store.add_session(f"s{i}")
    html = admin_client.get("/admin/sessions_admin/session/").content.decode()
    assert "Select all more than 3 sessions" in html and "All more than 3 selected" in html
    assert "Select all 4 sessions" not in html


@STORE_DB
def test_an_uncapped_count_is_shown_as_it_is(store, admin_client):
    sid = store.add_session("s")
    store.add_message(sid)
    store.add_message(sid)
    assert "2 messages" in admin_client.get(MESSAGES).content.decode()


@STORE_DB
def test_a_wrong_phrase_shows_the_expected_one_beside_what_was_typed_and_keeps_it(
    store, admin_client
):
    store.add_session("a")
    store.add_session("b")
    wrong = admin_client.post(CLEAR_ALL, {"expected": "2", "phrase": "delete 2 sesions"})
    html = wrong.content.decode()
    assert wrong.status_code == 400
    assert "Expected “delete 2 sessions”, typed “delete 2 sesions”." in html
    assert 'value="delete 2 sesions"' in html
    assert store.count("sessions") == 2 and not DeletionAudit.objects.exists()


def test_the_number_may_be_typed_without_its_thousands_separators():
    assert site_admin.confirms_clear_all("delete 2,000 sessions", 2000)
    assert site_admin.confirms_clear_all("delete 2000 sessions", 2000)
    assert not site_admin.confirms_clear_all("delete 20,00 sessions", 2000)
    assert not site_admin.confirms_clear_all("delete 200 sessions", 2000)
    assert not site_admin.confirms_clear_all("delete 2.000 sessions", 2000)
    assert not site_admin.confirms_clear_all("delete 2000 session", 2000)


@STORE_DB
def test_the_plain_number_still_checks_the_count_the_server_reads(store, admin_client):
    store.add_session("a")
    store.add_session("b")
    store.add_session("c")  # arrived after the page showed 2
    response = admin_client.post(CLEAR_ALL, {"expected": "2", "phrase": "delete 2 sessions"})
    assert response.status_code == 400
    assert "it now holds 3 sessions" in response.content.decode()
    assert store.count("sessions") == 3
