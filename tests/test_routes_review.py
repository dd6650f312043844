"""The review routes (notes, labels, queues, verdicts) walked as each kind of user.

Every one of them writes only our own records, so read-only mode does not refuse
them; each POST is: anonymous → login, non-staff → 403, staff without the
permission → 403 and nothing written, with it → 303, and a POST without its CSRF
token → 403. ``tests/test_routes.py`` checks that these tables and its own name
every route of the URL map.
"""

from __future__ import annotations

import pytest
from django.test import Client

from sessions_admin.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from tests.conftest import STORE_DB
from tests.review_routes import FORM_POSTS, PAGES, POSTS, SESSION_POSTS, SID


def written() -> tuple:
    """Everything the review routes could change, to compare before and after."""
    return (
        list(Note.objects.values_list("pk", "text")),
        list(SessionLabel.objects.values_list("session_id", "label__name")),
        list(ReviewQueue.objects.values_list("pk", "name")),
        list(ReviewItem.objects.values_list("pk", "verdict", "text", "claimed_by")),
    )


@pytest.fixture
def world(store, annotator):
    store.add_session(SID)
    store.add_message(SID, "user", "hello")
    Label.objects.create(name="regression")
    note = Note.objects.create(
        pk=1, session_id=SID, text="first", author=annotator, author_name="annotator"
    )
    queue = ReviewQueue.objects.create(pk=1, name="q", source="/sessions/", total=1)
    ReviewItem.objects.create(queue=queue, session_id=SID, position=0)
    return note


POST_ONLY = {**{f"session:{k}": v for k, v in SESSION_POSTS.items()}, **POSTS}
ALL_POSTS = {**POST_ONLY, **{f"form:{k}": v for k, v in FORM_POSTS.items()}}


@pytest.mark.parametrize("name", sorted(ALL_POSTS))
@STORE_DB
def test_anonymous_posts_go_to_the_login_page_and_write_nothing(world, client, name):
    before = written()
    response = client.post(ALL_POSTS[name].url, ALL_POSTS[name].data)
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert written() == before


@pytest.mark.parametrize("name", sorted(ALL_POSTS))
@STORE_DB
def test_non_staff_and_staff_without_the_permission_get_403(
    world, nonstaff_client, viewer_client, name
):
    before = written()
    assert nonstaff_client.post(ALL_POSTS[name].url, ALL_POSTS[name].data).status_code == 403
    response = viewer_client.post(ALL_POSTS[name].url, ALL_POSTS[name].data)
    assert response.status_code == 403
    assert ALL_POSTS[name].permission in response.content.decode()
    assert written() == before


@pytest.mark.parametrize("name", sorted(ALL_POSTS))
@STORE_DB
def test_staff_with_the_permission_are_answered_see_other(world, annotator, name):
    from django.contrib.auth.models import Permission

    annotator.user_permissions.add(
        Permission.objects.get(codename="delete_any_note", content_type__app_label="sessions_admin")
    )
    client = Client()
    client.force_login(annotator)
    response = client.post(ALL_POSTS[name].url, ALL_POSTS[name].data)
    assert response.status_code == 303, response.content[:500]


@pytest.mark.parametrize("name", sorted(ALL_POSTS))
@STORE_DB
def test_a_post_without_its_csrf_token_is_refused(world, annotator, name):
    client = Client(enforce_csrf_checks=True)
    client.force_login(annotator)
    before = written()
    assert client.post(ALL_POSTS[name].url, ALL_POSTS[name].data).status_code == 403
    assert written() == before


@pytest.mark.parametrize("name", sorted(POST_ONLY))
@STORE_DB
def test_a_get_is_not_allowed(world, annotator_client, name):
    assert annotator_client.get(POST_ONLY[name].url).status_code == 405


@pytest.mark.parametrize("name", sorted(PAGES))
@STORE_DB
def test_review_pages_are_for_staff_only(world, client, nonstaff_client, viewer_client, name):
    response = client.get(PAGES[name])
    assert response.status_code == 302 and response["Location"].startswith("/login/")
    assert nonstaff_client.get(PAGES[name]).status_code == 403
    assert viewer_client.get(PAGES[name]).status_code == 200
