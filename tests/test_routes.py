"""Every route of the URL map, and every admin URL, walked as each kind of user.

The tables below must name every route (a test fails when one is missing), so a
new screen cannot land without its access rule being checked here:
anonymous → login, non-staff → 403, staff without the delete permission → 403 on
what deletes, staff with it → allowed, read-only mode → refused with its sentence.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from django.contrib import admin
from django.urls import URLPattern, URLResolver

from sessions_admin import urls
from sessions_admin.models import DeletionAudit, Erasure, FleetErasure
from tests import review_routes as review
from tests.conftest import STORE_DB, point_store_at, staff_client_with
from tests.jobrunner import run_pending_jobs

SID = "sess_000001"
READ_ONLY_SENTENCE = "read-only mode"


@dataclass(frozen=True)
class Route:
    url: str
    #: POST data for a destructive action (None: the route only reads).
    post: dict[str, str] | None = None
    #: The permission (codename) a destructive action needs.
    permission: str = "delete_session"


#: Top-level routes (by name, or by path for unnamed ones), one sample URL each.
PAGES = {
    "overview": Route("/"),
    "tools": Route("/tools/"),
    "compare": Route("/compare/"),
    "failures": Route("/failures/"),
    "tool": Route("/tools/fs.read/"),
    "sessions": Route("/sessions/"),
    "targets": Route("/targets/"),
    "frames_orphans": Route("/frames/orphans/"),
    "search": Route("/search/?q=wombat"),
    "principals": Route("/principals/"),
    "principal": Route("/principals/user%3Aalice/"),
    "erasure": Route("/principals/erasures/1/"),
    "fleet": Route("/fleet/"),
    "fleet_sessions": Route("/fleet/sessions/"),
    "fleet_principal": Route("/fleet/principals/user%3Aalice/"),
    "fleet_erasure": Route("/fleet/erasures/1/"),
}
#: The session subpages of urls.SESSION_PAGES, by name.
SESSION_PAGES = {
    "": Route(f"/sessions/{SID}/"),
    "state": Route(f"/sessions/{SID}/state/"),
    "state_value": Route(f"/sessions/{SID}/state/k/value/"),
    "stats": Route(f"/sessions/{SID}/stats/"),
    "message_value": Route(f"/sessions/{SID}/messages/1/content/"),
    "export": Route(f"/sessions/{SID}/export/?format=json"),
    "delete": Route(f"/sessions/{SID}/delete/", post={"wipe_frames": "0"}),
    "frames": Route(f"/sessions/{SID}/frames/"),
    "frames_request": Route(f"/sessions/{SID}/frames/req_1/"),
}
#: Destructive forms posted to a page that also reads (same URL, its own guard).
DESTRUCTIVE_POSTS = {
    "frames_orphans": Route("/frames/orphans/", post={"session_id": "gone_1"}),
    "principal_erase": Route(
        "/principals/user%3Aalice/erase/",
        post={"confirm": "erase 1 session of user:alice"},
        permission="erase_principal",
    ),
}
#: Session subpages that only take a POST and answer a page, not a redirect (their
#: guards, reason and CSRF are walked in tests/test_masking.py).
SESSION_ANSWERING_POSTS = {"reveal": Route(f"/sessions/{SID}/reveal/", post={"message": "1"})}
#: Routes anyone may open, and the auth pages themselves.
OPEN = {"healthz", "login", "logout"}
GUARDED = {**PAGES, **{f"session:{name}": route for name, route in SESSION_PAGES.items()}}
DESTRUCTIVE = {
    **{name: route for name, route in GUARDED.items() if route.post is not None},
    **DESTRUCTIVE_POSTS,
}


@pytest.fixture
def world(store):
    """One session with a message, a state row and a request file; one orphan dir."""
    store.add_session(SID)
    store.add_message(SID, "user", "hello")
    store.add_state(SID, "k", {"a": 1})
    request_dir = store.frames_root / SID
    request_dir.mkdir(parents=True)
    (request_dir / "activity-req_1.jsonl").write_text(json.dumps({"ts": 1, "kind": "x"}) + "\n")
    orphan = store.frames_root / "gone_1"
    orphan.mkdir()
    (orphan / "activity-r.jsonl").write_text("{}\n")
    audit = DeletionAudit.objects.create(actor="test", operation="erase_principal")
    Erasure.objects.create(pk=1, principal="user:x", audit=audit)
    FleetErasure.objects.create(
        pk=1, actor="test", principal="user:x", principal_id_exact="t:user:x", principal_key="k"
    )
    return store


def test_every_route_of_the_url_map_is_walked_here():
    top = {p.name or str(p.pattern) for p in urls.urlpatterns if isinstance(p, URLPattern)}
    assert top - {"session"} == set(PAGES) | OPEN | set(review.POSTS) | set(review.PAGES)
    assert {page.name for page in urls.SESSION_PAGES} == set(SESSION_PAGES) | set(
        review.SESSION_POSTS
    ) | set(SESSION_ANSWERING_POSTS)


@STORE_DB
def test_an_anonymous_post_to_a_page_answering_post_is_sent_to_log_in(world, client):
    for route in SESSION_ANSWERING_POSTS.values():
        response = client.post(route.url, route.post)
        assert response.status_code == 302 and response["Location"].startswith("/login/")


def test_every_view_of_the_url_map_carries_its_own_guard():
    views = [p.callback for p in urls.urlpatterns if isinstance(p, URLPattern)]
    views += [page.view for page in urls.SESSION_PAGES]
    unguarded = {
        getattr(view, "view_class", view).__name__
        for view in views
        if not getattr(view, "staff_only", False)
    }
    assert unguarded == {"healthz", "LoginView", "LogoutView"}


@pytest.mark.parametrize("name", sorted(GUARDED))
@STORE_DB
def test_anonymous_users_are_sent_to_log_in(world, client, name):
    response = client.get(GUARDED[name].url)
    assert response.status_code == 302
    assert response["Location"].startswith("/login/?next=")
    htmx = client.get(GUARDED[name].url, headers={"HX-Request": "true"})
    assert htmx["HX-Redirect"].startswith("/login/?next=")


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
@STORE_DB
def test_anonymous_posts_delete_nothing(world, client, name):
    response = client.post(DESTRUCTIVE[name].url, DESTRUCTIVE[name].post)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert world.count("sessions") == 1 and (world.frames_root / "gone_1").is_dir()


@pytest.mark.parametrize("name", sorted(GUARDED))
@STORE_DB
def test_signed_in_users_who_are_not_staff_get_403(world, nonstaff_client, name):
    assert nonstaff_client.get(GUARDED[name].url).status_code == 403


@pytest.mark.parametrize("name", sorted(set(GUARDED) - {"session:delete"}))
@STORE_DB
def test_staff_who_may_view_open_every_page(world, viewer_client, name):
    assert viewer_client.get(GUARDED[name].url).status_code == 200


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
@STORE_DB
def test_staff_without_the_delete_permission_get_403_on_every_destructive_action(
    world, viewer_client, name
):
    route = DESTRUCTIVE[name]
    response = viewer_client.post(route.url, route.post)
    assert response.status_code == 403
    assert f"sessions_admin.{route.permission}".encode() in response.content
    assert world.count("sessions") == 1 and (world.frames_root / "gone_1").is_dir()


def made_here():
    """The audit rows of the action under test (not the world's receipt's own)."""
    return DeletionAudit.objects.exclude(receipt__pk=1)


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
@STORE_DB
def test_staff_with_the_delete_permission_may_delete(world, name):
    route = DESTRUCTIVE[name]
    response = staff_client_with(route.permission).post(route.url, route.post)
    assert response.status_code == 303
    run_pending_jobs()  # an erasure is recorded by the request, carried out by the worker
    assert made_here().get().outcome == DeletionAudit.Outcome.OK


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
@STORE_DB
def test_read_only_mode_refuses_every_destructive_action_with_its_sentence(world, name):
    point_store_at(world.path, read_only=True)
    route = DESTRUCTIVE[name]
    response = staff_client_with(route.permission).post(route.url, route.post, follow=True)
    assert READ_ONLY_SENTENCE in response.content.decode()
    assert world.count("sessions") == 1 and (world.frames_root / "gone_1").is_dir()
    assert made_here().get().outcome == DeletionAudit.Outcome.REFUSED


# --- The admin --------------------------------------------------------------------------


def _admin_names(patterns, prefix: str = "admin") -> dict[str, str]:
    """Every named admin URL: ``{name: its route text}``."""
    found: dict[str, str] = {}
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            found.update(_admin_names(pattern.url_patterns, prefix))
        elif pattern.name:
            found[f"{prefix}:{pattern.name}"] = str(pattern.pattern)
    return found


def _model_urls(label: str, pk: str) -> dict[str, str]:
    base = f"/admin/{label}/"
    name = label.replace("/", "_")
    return {
        f"admin:{name}_changelist": base,
        f"admin:{name}_add": f"{base}add/",
        f"admin:{name}_change": f"{base}{pk}/change/",
        f"admin:{name}_delete": f"{base}{pk}/delete/",
        f"admin:{name}_history": f"{base}{pk}/history/",
    }


def _admin_urls(audit_pk: int, user_pk: int) -> dict[str, str]:
    return {
        "admin:index": "/admin/",
        "admin:login": "/admin/login/",
        "admin:logout": "/admin/logout/",
        "admin:password_change": "/admin/password_change/",
        "admin:password_change_done": "/admin/password_change/done/",
        "admin:autocomplete": "/admin/autocomplete/",
        "admin:jsi18n": "/admin/jsi18n/",
        "admin:view_on_site": "/admin/r/1/1/",
        "admin:app_list": "/admin/sessions_admin/",
        "admin:sessions_admin_session_clear_all": "/admin/sessions_admin/session/clear-all/",
        "admin:sessions_admin_session_clear_all_step": (
            f"/admin/sessions_admin/session/clear-all/{audit_pk}/"
        ),
        "admin:auth_user_password_change": f"/admin/auth/user/{user_pk}/password/",
        **_model_urls("sessions_admin/session", SID),
        **_model_urls("sessions_admin/message", "1"),
        **_model_urls("sessions_admin/deletionaudit", str(audit_pk)),
        **_model_urls("sessions_admin/label", "1"),
        **_model_urls("sessions_admin/erasure", "1"),
        **_model_urls("sessions_admin/reveal", "1"),
        **_model_urls("auth/user", str(user_pk)),
        **_model_urls("auth/group", "1"),
        # django-axes: failed logins and lockouts (deleting an attempt unlocks).
        **_model_urls("axes/accessattempt", "1"),
        **_model_urls("axes/accesslog", "1"),
        **_model_urls("axes/accessfailurelog", "1"),
    }


#: Admin pages that delete, and the permission-free answer a viewer gets.
ADMIN_DESTRUCTIVE = {
    "admin:sessions_admin_session_delete": {"post": "yes"},
    "admin:sessions_admin_session_clear_all": {"expected": "1", "phrase": "delete 1 session"},
    "admin:sessions_admin_session_clear_all_step": {},
    "admin:axes_accessattempt_delete": {"post": "yes"},
}
OPEN_ADMIN = {"admin:login", "admin:logout"}


@pytest.fixture
def audit(db):
    return DeletionAudit.objects.create(
        actor="test", operation=DeletionAudit.Operation.CLEAR_ALL, target={"all": True}
    )


@STORE_DB
def test_every_admin_url_is_walked_here(world, audit, admin_user):
    names = set(_admin_names(admin.site.get_urls()))
    assert names == set(_admin_urls(audit.pk, admin_user.pk))


@STORE_DB
def test_anonymous_and_non_staff_users_are_sent_to_the_admin_login(
    world, audit, admin_user, client, nonstaff_client
):
    for name, url in _admin_urls(audit.pk, admin_user.pk).items():
        if name in OPEN_ADMIN:
            continue
        for who in (client, nonstaff_client):
            response = who.get(url)
            assert response.status_code == 302, (name, url)
            assert response["Location"].startswith("/admin/login/?next="), (name, url)


@pytest.mark.parametrize("name", sorted(ADMIN_DESTRUCTIVE))
@STORE_DB
def test_staff_without_the_delete_permission_get_403_in_the_admin(
    world, audit, admin_user, viewer_client, name
):
    url = _admin_urls(audit.pk, admin_user.pk)[name]
    assert viewer_client.get(url).status_code == 403
    assert viewer_client.post(url, ADMIN_DESTRUCTIVE[name]).status_code == 403
    assert world.count("sessions") == 1


@STORE_DB
def test_staff_may_delete_through_the_admin_with_the_permission(world, staff_client):
    url = f"/admin/sessions_admin/session/{SID}/delete/"
    assert staff_client.get(url).status_code == 200
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert world.count("sessions") == 0


@STORE_DB
def test_the_admin_action_deletes_only_with_the_permission(world, viewer_client, staff_client):
    data = {"action": "delete_with_cascade", "_selected_action": [SID], "confirmed": "yes"}
    changelist = "/admin/sessions_admin/session/"
    viewer_client.post(changelist, data)
    assert world.count("sessions") == 1
    staff_client.post(changelist, data)
    assert world.count("sessions") == 0


@STORE_DB
def test_read_only_mode_refuses_admin_deletes_with_its_sentence(world, admin_client):
    point_store_at(world.path, read_only=True)
    assert admin_client.post(f"/admin/sessions_admin/session/{SID}/delete/").status_code == 403
    clear_all = "/admin/sessions_admin/session/clear-all/"
    response = admin_client.post(clear_all, {"expected": "1", "phrase": "delete 1 session"})
    assert READ_ONLY_SENTENCE in response.content.decode()
    data = {"action": "delete_with_cascade", "_selected_action": [SID], "confirmed": "yes"}
    admin_client.post("/admin/sessions_admin/session/", data)
    assert world.count("sessions") == 1
