"""What reviewers wrote about one session, as plain data for its exports."""

from __future__ import annotations

from typing import Any

from sessions_admin.ourdata.review.labels import labels_of_session
from sessions_admin.ourdata.review.notes import notes_of_session
from sessions_admin.ourdata.review.verdicts import verdicts_of_session


def review_of_session(session_id: str) -> dict[str, Any]:
    """Labels (names), notes (author, times, message, text) and verdicts (queue, verdict,
    reviewer, time, text) of this store's records about the session."""
    return {
        "labels": [label.name for label in labels_of_session(session_id)],
        "notes": [
            {
                "author": note.author_name,
                "created_at": note.created_at.isoformat(),
                "edited_at": note.edited_at.isoformat() if note.edited_at else None,
                "message_id": note.message_id,
                "text": note.text,
            }
            for note in notes_of_session(session_id)
        ],
        "verdicts": verdicts_of_session(session_id),
    }


def has_review(review: dict[str, Any]) -> bool:
    return any(review.values())
