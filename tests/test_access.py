"""Staff only: anonymous users log in, others get 403; the health check is open."""

import pytest

from tests.conftest import STORE_DB

PAGES = ["/sessions/", "/targets/", "/sessions/sess_000001/"]


@pytest.mark.parametrize("url", PAGES)
@STORE_DB
def test_anonymous_users_are_sent_to_the_login_page(store, client, url):
    store.add_session("sess_000001")
    response = client.get(url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")


@STORE_DB
def test_htmx_requests_from_an_expired_login_redirect_the_whole_page(store, client):
    response = client.get("/sessions/", headers={"HX-Request": "true"})
    assert response.headers["HX-Redirect"].startswith("/login/")


@pytest.mark.parametrize("url", PAGES)
@STORE_DB
def test_signed_in_users_who_are_not_staff_get_403(store, nonstaff_client, url):
    store.add_session("sess_000001")
    assert nonstaff_client.get(url).status_code == 403


@STORE_DB
def test_staff_without_the_view_permission_get_403(store, client, django_user_model):
    user = django_user_model.objects.create_user("bare", password="x", is_staff=True)
    client.force_login(user)
    response = client.get("/sessions/")
    assert response.status_code == 403
    assert b"sessions_admin.view_session" in response.content


@STORE_DB
def test_the_health_check_needs_no_login(store, client):
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok"


@STORE_DB
def test_the_login_page_is_styled_like_the_rest_and_logs_staff_in(store, client, admin_user):
    page = client.get("/login/")
    assert b"sessions-admin" in page.content and b"app.css" in page.content
    response = client.post("/login/", {"username": "root", "password": "pw-root"})
    assert response.status_code == 302 and response["Location"] == "/sessions/"


@STORE_DB
def test_pages_send_a_content_security_policy_without_unsafe_inline(store, admin_client):
    policy = admin_client.get("/sessions/")["Content-Security-Policy"]
    assert "script-src 'self' 'nonce-" in policy
    assert "unsafe-inline" not in policy
