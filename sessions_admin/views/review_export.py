"""``/reviews/<id>/export/?format=csv|jsonl``: each item of a queue with its session id,
verdict, reviewer, times, verdict text, the verdicts it replaced, and the session's
notes and labels.

Streamed a chunk of items at a time (a queue holds up to 10,000), each chunk's
notes and labels read in one query each. A CSV cell a spreadsheet would run
as a formula (``=``, ``+``, ``-``, ``@`` first) gets a leading ``'``.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from typing import Any

from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.utils.http import content_disposition_header
from django.views.decorators.http import require_safe

from sessions_admin import params
from sessions_admin.access import staff_view
from sessions_admin.ourdata.review import labels, notes
from sessions_admin.ourdata.review.models import ReviewItem, ReviewQueue
from sessions_admin.ourdata.review.queues import queue_of_store
from sessions_admin.ourdata.review.verdicts import earlier_record

EXPORT_CHUNK = 500
COLUMNS = (
    "position",
    "session_id",
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


def item_records(queue: ReviewQueue) -> Iterator[dict[str, Any]]:
    """Every item of the queue as a record, by position, with its session's notes and labels."""
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
        for item in chunk:
            yield {
                "position": item.position,
                "session_id": item.session_id,
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
        after = chunk[-1].position


def _cell(value: Any) -> str:
    if isinstance(value, list):
        value = json.dumps(value, ensure_ascii=False)
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def as_csv(records: Iterator[dict[str, Any]]) -> Iterator[str]:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(COLUMNS)
    for record in records:
        writer.writerow([_cell(record[name]) for name in COLUMNS])
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
    records = item_records(queue)
    lines = as_csv(records) if fmt == "csv" else as_jsonl(records)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/x-ndjson"
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = content_disposition_header(
        True, f"review-queue-{queue.pk}.{fmt}"
    )
    response["Cache-Control"] = "no-store"
    return response
