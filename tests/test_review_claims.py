"""Claiming the next session of a review queue: never shared, even when reviewers press
"next" at the same moment (threads against the real database: SQLite here, and
PostgreSQL again in .ci/run); a claim lapses after 30 minutes."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection, connections
from django.utils import timezone

from sessions_admin.models import ReviewItem
from sessions_admin.ourdata.review import queues, verdicts

# The queue reads its sessions' creation times from the store (an empty one here).
pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "agents"])

REVIEWERS = 6


@pytest.fixture
def queue(store):
    return queues.make_queue(
        "q", "/sessions/", [f"s{n:03d}" for n in range(40)], capped=False, user=None
    )


def reviewers(count: int) -> list[User]:
    return [User.objects.create_user(f"reviewer{n}", is_staff=True) for n in range(count)]


def claim_at_once(queue, users: list[User], rounds: int) -> dict[str, list[str]]:
    """Each user claims and gives a verdict ``rounds`` times, all threads released together."""
    got: dict[str, list[str]] = {user.username: [] for user in users}
    errors: list[BaseException] = []
    start = threading.Barrier(len(users))

    def work(user: User) -> None:
        try:
            start.wait()
            for _ in range(rounds):
                item = queues.claim_next(queue, user)
                if item is None:
                    return
                got[user.username].append(item.session_id)
                verdicts.give_verdict(item, "pass", "", user)
        except BaseException as exc:  # reported below, not lost in the thread
            errors.append(exc)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=work, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not errors, errors
    return got


def test_reviewers_claiming_at_once_never_share_a_session(queue):
    got = claim_at_once(queue, reviewers(REVIEWERS), rounds=10)
    claimed = [sid for sids in got.values() for sid in sids]
    assert len(claimed) == len(set(claimed)) == 40  # every session once, none twice
    assert ReviewItem.objects.filter(queue=queue, verdict="pass").count() == 40
    assert queues.claim_next(queue, User.objects.first()) is None  # the queue is done


def test_concurrent_first_claims_take_different_sessions(queue):
    users = reviewers(REVIEWERS)
    got = claim_at_once(queue, users, rounds=1)
    firsts = [sids[0] for sids in got.values()]
    assert len(set(firsts)) == REVIEWERS
    held = ReviewItem.objects.filter(queue=queue, claimed_by__isnull=False)
    assert held.count() == 0  # each gave a verdict, which releases the claim


def test_a_reviewer_gets_their_own_claim_back_and_others_get_the_next(queue):
    alice, bob = reviewers(2)
    first = queues.claim_next(queue, alice)
    assert queues.claim_next(queue, alice).pk == first.pk
    assert queues.claim_next(queue, bob).pk != first.pk


def test_a_claim_lapses_after_thirty_minutes(queue):
    alice, bob = reviewers(2)
    first = queues.claim_next(queue, alice)
    ReviewItem.objects.filter(pk=first.pk).update(claimed_at=timezone.now() - timedelta(minutes=29))
    assert queues.claim_next(queue, bob).pk != first.pk
    ReviewItem.objects.filter(pk=first.pk).update(claimed_at=timezone.now() - timedelta(minutes=31))
    bob_again = User.objects.create_user("carol")
    assert queues.claim_next(queue, bob_again).pk == first.pk


def test_reviewed_and_deleted_sessions_are_not_claimed(queue):
    (alice,) = reviewers(1)
    items = list(ReviewItem.objects.filter(queue=queue).order_by("position"))
    ReviewItem.objects.filter(pk=items[0].pk).update(verdict="fail")
    ReviewItem.objects.filter(pk=items[1].pk).update(session_deleted=True)
    assert queues.claim_next(queue, alice).pk == items[2].pk


def test_the_claim_uses_row_locks_where_the_database_has_them():
    # PostgreSQL takes the SKIP LOCKED path, SQLite the conditional UPDATE: both run above.
    expected = connection.vendor == "postgresql"
    assert connection.features.has_select_for_update_skip_locked is expected
