"""Review queues: ``/reviews/`` (the queues, and POST to make one from a source URL),
``/reviews/<id>/`` (progress, verdicts, items), ``POST /reviews/<id>/next/`` (claim the
next session), ``POST /reviews/<id>/verdict/`` and ``/reviews/<id>/export/``.

Making a queue takes "Can manage review queues"; claiming and verdicts take
"Can annotate". The session page shows the review bar when opened with
``?review=<id>`` (:func:`review_bar_context`).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from sessions_admin import params
from sessions_admin.access import ANNOTATE, MANAGE_REVIEW_QUEUES, staff_view
from sessions_admin.ids import session_url
from sessions_admin.ourdata.review import queues, verdicts
from sessions_admin.ourdata.review.forget import forget_sessions
from sessions_admin.ourdata.review.models import NOTE_MAX_CHARS, QUEUE_MAX_ITEMS, ReviewQueue
from sessions_admin.params import BadParameter
from sessions_admin.store import queries
from sessions_admin.views.errors import conflict
from sessions_admin.views.responses import HttpResponseSeeOther
from sessions_admin.views.review_sources import sessions_of_source

#: Items a queue page lists (then "more", by position).
ITEMS_PAGE = 200
SOURCE_MAX_CHARS = 4000


def _queue(queue_id: int) -> ReviewQueue:
    queue = queues.queue_of_store(queue_id)
    if queue is None:
        raise Http404(f"No review queue {queue_id} for this store.")
    return queue


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view()
def review_list(request: HttpRequest) -> HttpResponse:
    """The queues (GET), or a new one from ``name`` and ``source`` (POST)."""
    if request.method == "POST":
        return _make_queue(request)
    shown = list(queues.queues_of_store()[:200])
    tallies = queues.progress_of(shown)
    context = {
        "queues": [(queue, tallies[queue.pk]) for queue in shown],
        "can_manage": request.user.has_perm(MANAGE_REVIEW_QUEUES),
        "source": params.text(request.GET, "source", max_chars=SOURCE_MAX_CHARS) or "",
        "max_items": QUEUE_MAX_ITEMS,
    }
    return render(request, "sessions_admin/reviews.html", context)


@staff_view(MANAGE_REVIEW_QUEUES)
def _make_queue(request: HttpRequest) -> HttpResponse:
    name = params.text(request.POST, "name", max_chars=200)
    if name is None:
        raise BadParameter("name is empty: give the queue a name.", name="name")
    source = params.text(request.POST, "source", max_chars=SOURCE_MAX_CHARS)
    if source is None:
        raise BadParameter("source is empty: paste the URL of a list of sessions.", name="source")
    found = sessions_of_source(source, request.get_host())
    queue = queues.make_queue(
        name, source, found.ids, capped=found.capped, user=request.user, skipped=found.skipped
    )
    return HttpResponseSeeOther(reverse("review", args=[queue.pk]))


@require_safe
@staff_view()
def review_page(request: HttpRequest, queue_id: int) -> HttpResponse:
    queue = _queue(queue_id)
    after = params.whole(request.GET, "after", what="a position")
    items = (
        queue.items.select_related("reviewer", "claimed_by")
        .prefetch_related("earlier_verdicts")
        .order_by("position")
    )
    if after is not None:
        items = items.filter(position__gt=after)
    shown = list(items[: ITEMS_PAGE + 1])
    more = len(shown) > ITEMS_PAGE
    shown = shown[:ITEMS_PAGE]
    # Each item's title, target and profile, so a reviewer can tell them apart: one
    # primary-key read of the store for the page's sessions (those still there).
    rows = queries.rows_matching([item.session_id for item in shown], queries.SessionFilter())
    context = {
        "queue": queue,
        "progress": queues.progress_of([queue])[queue.pk],
        "items": [
            (
                item,
                session_url(item.session_id, review=queue.pk),
                queries.SessionRow.from_db(rows[item.session_id])
                if item.session_id in rows
                else None,
            )
            for item in shown
        ],
        "more_url": "?" + urlencode({"after": shown[-1].position}) if more else "",
        "done": request.GET.get("done") == "1",
        "busy": request.GET.get("busy") == "1",
        "can_annotate": request.user.has_perm(ANNOTATE),
        "claim_minutes": int(queues.CLAIM_FOR.total_seconds() // 60),
    }
    return render(request, "sessions_admin/review.html", context)


#: Claimed sessions found deleted (by the runtime, before sync_index saw it) that
#: "next" marks and passes over before it says to press again.
GONE_SKIPS = 20


def _next(request: HttpRequest, queue: ReviewQueue) -> HttpResponse:
    for _ in range(GONE_SKIPS):
        try:
            item = queues.claim_next(queue, request.user)
        except queues.ClaimContended:
            break
        if item is None:
            return HttpResponseSeeOther(reverse("review", args=[queue.pk]) + "?done=1")
        if queries.existing_session_ids([item.session_id]):
            return HttpResponseSeeOther(session_url(item.session_id, review=queue.pk))
        # The runtime deleted it since the queue was made: what sync_index would do.
        forget_sessions([item.session_id])
    return HttpResponseSeeOther(reverse("review", args=[queue.pk]) + "?busy=1")


@require_POST
@staff_view(ANNOTATE)
def review_next(request: HttpRequest, queue_id: int) -> HttpResponse:
    """Claim the next session nobody has reviewed or is reviewing, and open it."""
    return _next(request, _queue(queue_id))


@require_POST
@staff_view(ANNOTATE)
def review_verdict(request: HttpRequest, queue_id: int) -> HttpResponse:
    """``session``, ``verdict`` (pass, fail, skip), optional ``text``; ``then=next`` goes on.

    Another reviewer's claim or verdict gets a 409 with a sentence, unless a queue
    manager asks (their verdict is recorded as a manager's).
    """
    queue = _queue(queue_id)
    session_id = request.POST.get("session", "")
    item = queues.item_of(queue, session_id) if session_id else None
    if item is None:
        raise BadParameter(
            f"session {params.quoted(session_id)} is not in this review queue.", name="session"
        )
    verdict = params.choice(request.POST, "verdict", queues.VERDICTS)
    if verdict is None:
        raise BadParameter("verdict is missing: pass, fail or skip.", name="verdict")
    text = params.text(request.POST, "text", max_chars=NOTE_MAX_CHARS) or ""
    if item.session_deleted:
        raise BadParameter("session: it was deleted; its verdict cannot change.", name="session")
    try:
        verdicts.give_verdict(
            item, verdict, text, request.user, manager=request.user.has_perm(MANAGE_REVIEW_QUEUES)
        )
    except verdicts.VerdictRefused as refused:
        return conflict(request, str(refused))
    if request.POST.get("then") == "next":
        return _next(request, queue)
    return HttpResponseSeeOther(session_url(session_id, review=queue.pk))


def review_bar_context(request: HttpRequest, session_id: str) -> dict[str, Any]:
    """The review bar of a session opened from a queue (``?review=<id>``), or nothing."""
    queue_id = params.whole(request.GET, "review", what="a review queue id")
    if queue_id is None:
        return {}
    queue = queues.queue_of_store(queue_id)
    if queue is None:
        raise BadParameter(f"review: there is no review queue {queue_id}.", name="review")
    item = queues.item_of(queue, session_id)
    manager = request.user.has_perm(MANAGE_REVIEW_QUEUES)
    return {
        "review": {
            "queue": queue,
            "item": item,
            # Another reviewer's claim or verdict: the bar says whose, not the buttons.
            "refusal": verdicts.refusal(item, request.user, manager=manager) if item else None,
            "progress": queues.progress_of([queue])[queue.pk],
            "queue_url": reverse("review", args=[queue.pk]),
            "verdict_url": reverse("review_verdict", args=[queue.pk]),
            "next_url": reverse("review_next", args=[queue.pk]),
            "verdicts": queues.VERDICTS,
        },
        "can_annotate": request.user.has_perm(ANNOTATE),
    }
