"""``/reviews/<id>/export/?format=csv|jsonl``: each item of a queue with its position
(from 1, as the page numbers them), session id, title, target, principal and link,
verdict, reviewer, times, verdict text, the verdicts it replaced, and the session's
notes and labels.

Streamed a chunk of items at a time (a queue holds up to 10,000), each chunk's
sessions, notes and labels read in one query each. JSON Lines keeps notes,
labels and earlier verdicts as lists; the CSV is flat for a spreadsheet: notes
one per line in their cell, labels comma-separated, ``true``/``false``, and a
cell a spreadsheet would run as a formula (``=``, ``+``, ``-``, ``@`` first)
gets a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterator
from typing import Any

from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from sessions_admin import params
from sessions_admin.access import staff_view
from sessions_admin.ids import session_url
from sessions_admin.masking import masker
from sessions_admin.ourdata.review import labels, notes
from sessions_admin.ourdata.review.models import ReviewItem, ReviewQueue
from sessions_admin.ourdata.review.queues import queue_of_store
from sessions_admin.ourdata.review.verdicts import earlier_record
from sessions_admin.store.queries import SessionFilter, SessionRow, rows_matching

EXPORT_CHUNK = 500
COLUMNS = (
    "position",
    "session_id",
    "title",
    "target",
    "principal",
    "link",
    "verdict",
    "reviewer",
    "reviewed_at",
    "claimed_by",
    "claimed_at",
    "verdict_text",
    "session_deleted",
    "notes",
    "labels",
    "by_manager",
    "earlier_verdicts",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _time(value: Any) -> str | None:
    return value.isoformat() if value is not None else None


def item_records(
    queue: ReviewQueue, link: Callable[[str], str] = session_url
) -> Iterator[dict[str, Any]]:
    """Every item of the queue as a record, by position, with its session's row (empty
    once deleted), notes and labels; ``link`` makes a session's URL."""
    after = -1
    while True:
        chunk = list(
            ReviewItem.objects.filter(queue=queue, position__gt=after)
            .select_related("reviewer", "claimed_by")
            .prefetch_related("earlier_verdicts")
            .order_by("position")[:EXPORT_CHUNK]
        )
        if not chunk:
            return
        ids = [item.session_id for item in chunk]
        noted = notes.notes_of_sessions(ids)
        labelled = labels.labels_of_sessions(ids)
        rows = {
            row.id: row
            for row in map(SessionRow.from_db, rows_matching(ids, SessionFilter()).values())
        }
        for item in chunk:
            row = rows.get(item.session_id)
            yield _masked(
                {
                    "position": item.position + 1,
                    "session_id": item.session_id,
                    "title": row.title if row else None,
                    "target": row.target_key if row else None,
                    "principal": row.principal_id if row else None,
                    "link": link(item.session_id),
                    "verdict": item.verdict,
                    "reviewer": item.reviewer.get_username() if item.reviewer else None,
                    "reviewed_at": _time(item.reviewed_at),
                    "claimed_by": item.claimed_by.get_username() if item.claimed_by else None,
                    "claimed_at": _time(item.claimed_at),
                    "verdict_text": item.text,
                    "session_deleted": item.session_deleted,
                    "notes": [
                        {
                            "author": note.author_name,
                            "at": _time(note.created_at),
                            "message_id": note.message_id,
                            "text": note.text,
                        }
                        for note in noted.get(item.session_id, [])
                    ],
                    "labels": [label.name for label in labelled.get(item.session_id, [])],
                    "by_manager": item.by_manager,
                    "earlier_verdicts": [earlier_record(e) for e in item.earlier_verdicts.all()],
                }
            )
        after = chunk[-1].position


def _note_line(note: dict[str, Any]) -> str:
    where = f" on message {note['message_id']}" if note["message_id"] is not None else ""
    return f"{note['author']}, {note['at']}{where}: {note['text']}"


def _earlier_line(earlier: dict[str, Any]) -> str:
    return ", ".join(f"{key} {value}" for key, value in earlier.items() if value not in (None, ""))


def _masked(record: dict[str, Any]) -> dict[str, Any]:
    """A record with what the pages mask masked: the title and what reviewers wrote."""
    if (active := masker()) is None:
        return record
    record["title"] = active.text(record["title"])
    record["verdict_text"] = active.text(record["verdict_text"])
    for note in record["notes"]:
        note["text"] = active.text(note["text"])
    for earlier in record["earlier_verdicts"]:
        if isinstance(earlier, dict) and isinstance(earlier.get("text"), str):
            earlier["text"] = active.text(earlier["text"])
    return record


#: How the CSV writes a list column: one cell of text.
_FLAT = {
    "notes": lambda notes: "\n".join(_note_line(n) for n in notes),
    "labels": ", ".join,
    "earlier_verdicts": lambda found: "\n".join(_earlier_line(e) for e in found),
}


def _cell(name: str, value: Any) -> str:
    if name in _FLAT:
        value = _FLAT[name](value)
    if isinstance(value, bool):
        return "true" if value else "false"
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def as_csv(records: Iterator[dict[str, Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for record in records:
        writer.writerow([_cell(name, record[name]) for name in COLUMNS])
        yield buffer.getvalue()
        buffer.seek(0)
        buffer.truncate()
    yield buffer.getvalue()


def as_jsonl(records: Iterator[dict[str, Any]]) -> Iterator[str]:
    for record in records:
        yield json.dumps(record, ensure_ascii=False) + "\n"


@require_safe
@staff_view()
def review_export(request: HttpRequest, queue_id: int) -> StreamingHttpResponse:
    fmt = params.choice(request.GET, "format", ("csv", "jsonl"), "csv")
    queue = queue_of_store(queue_id)
    if queue is None:
        raise Http404(f"No review queue {queue_id} for this store.")
    records = item_records(queue, lambda sid: request.build_absolute_uri(session_url(sid)))
    lines = as_csv(records) if fmt == "csv" else as_jsonl(records)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(
        True, f"review-queue-{queue.pk}.{fmt}"
    )
    response["Cache-Control"] = "no-store"
    return response
