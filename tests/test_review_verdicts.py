"""A verdict is tied to its claim: it comes from the reviewer holding the session (or
a queue manager, recorded as such), another reviewer's attempt is a 409 with a
sentence, and a changed verdict keeps the earlier one with who gave it and when."""

from __future__ import annotations

import csv
import io
import json

import pytest
from django.contrib.auth.models import Permission, User
from django.db import IntegrityError, transaction
from django.test import Client

from sessions_admin.models import EarlierVerdict, ReviewItem, ReviewQueue
from sessions_admin.ourdata.review import queues
from sessions_admin.ourdata.review.forget import forget_sessions
from tests.conftest import STORE_DB

SID = "sess_1"


@pytest.fixture
def queue(store) -> ReviewQueue:
    for sid in ("sess_1", "sess_2"):
        store.add_session(sid)
    return queues.make_queue("q", "/sessions/", [SID, "sess_2"], capped=False, user=None)


def reviewer(name: str) -> Client:
    """A staff member who may annotate (claim, give verdicts) but not manage queues."""
    user = User.objects.create_user(name, is_staff=True)
    user.user_permissions.add(
        *Permission.objects.filter(
            codename__in=("view_session", "annotate"), content_type__app_label="sessions_admin"
        )
    )
    client = Client()
    client.force_login(user)
    return client


def verdict(client: Client, queue: ReviewQueue, value: str, text: str = "") -> object:
    return client.post(
        f"/reviews/{queue.pk}/verdict/", {"session": SID, "verdict": value, "text": text}
    )


def item(queue: ReviewQueue) -> ReviewItem:
    return ReviewItem.objects.select_related("reviewer", "claimed_by").get(
        queue=queue, session_id=SID
    )


def claim(client: Client, queue: ReviewQueue) -> None:
    response = client.post(f"/reviews/{queue.pk}/next/")
    assert response["Location"] == f"/sessions/{SID}/?review={queue.pk}"


@STORE_DB
def test_it_refuses_a_verdict_on_a_session_another_reviewer_holds(queue):
    alice, bob = reviewer("alice"), reviewer("bob")
    claim(alice, queue)
    response = verdict(bob, queue, "fail")
    assert response.status_code == 409
    assert "alice is reviewing this session" in response.content.decode()
    held = item(queue)
    assert (held.verdict, held.claimed_by.username) == ("", "alice")


@STORE_DB
def test_it_refuses_to_overwrite_another_reviewers_verdict(queue):
    alice, bob = reviewer("alice"), reviewer("bob")
    claim(alice, queue)
    assert verdict(alice, queue, "pass", "fine").status_code == 303
    response = verdict(bob, queue, "fail", "not fine")
    assert response.status_code == 409
    assert "alice gave this session" in response.content.decode()
    kept = item(queue)
    assert (kept.verdict, kept.text, kept.reviewer.username) == ("pass", "fine", "alice")
    assert not EarlierVerdict.objects.exists()


@STORE_DB
def test_a_changed_verdict_keeps_the_earlier_one_with_who_and_when(queue):
    alice = reviewer("alice")
    claim(alice, queue)
    verdict(alice, queue, "pass", "looked fine")
    first_at = item(queue).reviewed_at
    assert verdict(alice, queue, "fail", "missed a refund").status_code == 303
    now = item(queue)
    assert (now.verdict, now.text, now.reviewer.username) == ("fail", "missed a refund", "alice")
    (earlier,) = now.earlier_verdicts.all()
    assert (earlier.verdict, earlier.text, earlier.reviewer_name) == (
        "pass",
        "looked fine",
        "alice",
    )
    assert earlier.reviewed_at == first_at and not earlier.by_manager
    page = alice.get(f"/reviews/{queue.pk}/").content.decode()
    assert "earlier: pass by alice" in page


@STORE_DB
def test_a_queue_manager_may_give_a_verdict_over_a_claim_recorded_as_such(queue, annotator_client):
    alice = reviewer("alice")
    claim(alice, queue)
    assert verdict(annotator_client, queue, "skip").status_code == 303
    given = item(queue)
    assert (given.verdict, given.reviewer.username, given.by_manager) == ("skip", "annotator", True)
    assert given.claimed_by is None
    assert "as queue manager" in annotator_client.get(f"/reviews/{queue.pk}/").content.decode()
    assert verdict(alice, queue, "pass").status_code == 409  # her claim went with the verdict


@STORE_DB
def test_a_queue_manager_changing_a_verdict_keeps_the_reviewers(queue, annotator_client):
    alice = reviewer("alice")
    claim(alice, queue)
    verdict(alice, queue, "pass")
    assert verdict(annotator_client, queue, "fail").status_code == 303
    (earlier,) = item(queue).earlier_verdicts.all()
    assert (earlier.verdict, earlier.reviewer_name) == ("pass", "alice")
    assert item(queue).by_manager


@STORE_DB
def test_a_free_session_takes_the_verdict_and_it_is_the_reviewers_own(queue):
    assert verdict(reviewer("bob"), queue, "pass").status_code == 303
    given = item(queue)
    assert (given.verdict, given.reviewer.username, given.by_manager) == ("pass", "bob", False)


@STORE_DB
def test_the_review_bar_says_who_holds_the_session_instead_of_offering_verdicts(queue):
    alice, bob = reviewer("alice"), reviewer("bob")
    claim(alice, queue)
    bar = bob.get(f"/sessions/{SID}/?review={queue.pk}").content.decode()
    assert "alice is reviewing this session" in bar and 'id="review-form"' not in bar
    assert 'id="review-form"' in alice.get(f"/sessions/{SID}/?review={queue.pk}").content.decode()


@STORE_DB
def test_the_export_carries_the_earlier_verdicts(queue):
    alice = reviewer("alice")
    claim(alice, queue)
    verdict(alice, queue, "pass")
    verdict(alice, queue, "fail")
    response = alice.get(f"/reviews/{queue.pk}/export/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0]["earlier_verdicts"].startswith("verdict pass, reviewer alice, ")
    assert rows[0]["by_manager"] == "false"
    response = alice.get(f"/reviews/{queue.pk}/export/?format=jsonl")
    (earlier,) = json.loads(b"".join(response.streaming_content).splitlines()[0])[
        "earlier_verdicts"
    ]
    assert (earlier["verdict"], earlier["reviewer"]) == ("pass", "alice")


@STORE_DB
def test_a_deleted_sessions_earlier_verdicts_lose_their_text_as_the_current_one_does(queue):
    alice = reviewer("alice")
    claim(alice, queue)
    verdict(alice, queue, "pass", "private detail")
    verdict(alice, queue, "fail", "another detail")
    forget_sessions([SID])
    assert list(EarlierVerdict.objects.values_list("verdict", "text")) == [("pass", "")]
    assert item(queue).text == ""


@STORE_DB
def test_the_database_refuses_a_verdict_outside_pass_fail_and_skip(queue):
    with pytest.raises(IntegrityError), transaction.atomic():
        ReviewItem.objects.filter(queue=queue).update(verdict="maybe")
