"""SESSIONS_ADMIN_RESUME_URL: "Resume in Director Chat" on the session page, encoded values."""

from __future__ import annotations

from sessions_admin.templatetags.sessions_admin import fill_url_template
from tests.conftest import STORE_DB


def test_every_placeholder_is_percent_encoded():
    url = fill_url_template(
        "https://chat.example/resume?s={session_id}&t={target_key}&p={profile_key}",
        session_id="a/b?c#d e&f",
        target_key="ops.pager",
        profile_key=None,
    )
    assert url == "https://chat.example/resume?s=a%2Fb%3Fc%23d%20e%26f&t=ops.pager&p="


@STORE_DB
def test_the_session_page_offers_resume_when_configured(store, staff_client, settings):
    settings.RESUME_URL_TEMPLATE = "https://chat.example/{target_key}/{profile_key}/{session_id}"
    sid = store.add_session("sess x/1", target="infra.deployer", profile="edit")
    html = staff_client.get("/sessions/sess%20x%2F1/").content.decode()
    assert 'href="https://chat.example/infra.deployer/edit/sess%20x%2F1"' in html
    assert "Resume in Director Chat" in html and sid


@STORE_DB
def test_the_session_page_has_no_resume_button_without_the_setting(store, staff_client, settings):
    settings.RESUME_URL_TEMPLATE = ""
    store.add_session("sess_plain", title="plain session title")
    response = staff_client.get("/sessions/sess_plain/")
    html = response.content.decode()
    assert response.status_code == 200 and "plain session title" in html  # the page is there
    assert "Resume in Director Chat" not in html
