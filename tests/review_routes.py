"""The review routes' tables, shared by tests/test_routes.py (which checks they and its
own tables name every route) and tests/test_routes_review.py (which walks them)."""

from __future__ import annotations

from dataclasses import dataclass

SID = "sess_000001"


@dataclass(frozen=True)
class Post:
    url: str
    data: dict[str, str]
    #: The permission a staff member needs (its codename is in the 403's text).
    permission: str


#: Session subpages that only take a POST, by their name in urls.SESSION_PAGES.
SESSION_POSTS = {
    "notes": Post(f"/sessions/{SID}/notes/", {"text": "looks fine"}, "annotate"),
    "note_edit": Post(f"/sessions/{SID}/notes/1/edit/", {"text": "edited"}, "annotate"),
    "note_delete": Post(f"/sessions/{SID}/notes/1/delete/", {}, "delete_any_note"),
    "labels": Post(f"/sessions/{SID}/labels/", {"label": "regression"}, "annotate"),
}
#: Top-level review routes that only take a POST, by their name in urls.urlpatterns.
POSTS = {
    "review_next": Post("/reviews/1/next/", {}, "annotate"),
    "review_verdict": Post(
        "/reviews/1/verdict/", {"session": SID, "verdict": "pass", "then": "next"}, "annotate"
    ),
}
#: The same URL as a page (GET) and a form (POST): ``/reviews/`` makes a queue.
FORM_POSTS = {
    "reviews": Post("/reviews/", {"name": "q2", "source": "/sessions/"}, "manage_review_queues"),
}
#: Top-level review pages staff may read, by name.
PAGES = {
    "reviews": "/reviews/",
    "review": "/reviews/1/",
    "review_export": "/reviews/1/export/?format=csv",
}
