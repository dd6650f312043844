"""What a page of listed sessions carries of our review records: labels, notes, verdicts.

Three SQL statements of our own, one per table, each one index range per page
(``store_name, session_id``): a list page asks for its 50 rows' marks every
time, and through the ORM (three querysets compiled per page) they were a
quarter of the list's time (bench_list, bench_search's list rows, 2026-12-01).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from django.db import models

from sessions_admin.ourdata.review.bulk import sql_names
from sessions_admin.ourdata.review.models import Note, ReviewItem, SessionLabel
from sessions_admin.ourdata.storename import current_store
from sessions_admin.sqlhelpers import chunks


@dataclass
class Marks:
    """Per session id: its label ids, whether it has a note, its newest verdict."""

    label_ids: dict[str, list[int]] = field(default_factory=dict)
    noted: set[str] = field(default_factory=set)
    verdicts: dict[str, str] = field(default_factory=dict)


def marks_of(session_ids: Sequence[str]) -> Marks:
    marks = Marks()
    store = current_store()
    for chunk in chunks(list(dict.fromkeys(session_ids)), 500):
        for sid, label_id in _rows(SessionLabel, ("session_id", "label"), store, chunk):
            marks.label_ids.setdefault(sid, []).append(label_id)
        marks.noted.update(sid for (sid,) in _rows(Note, ("session_id",), store, chunk))
        # Oldest first: the newest verdict of a session is the last one written.
        verdicts = _rows(
            ReviewItem,
            ("session_id", "verdict"),
            store,
            chunk,
            tail="AND {verdict} <> '' ORDER BY {reviewed_at}, {id}",
        )
        marks.verdicts.update(verdicts)
    return marks


def _rows(
    model: type[models.Model],
    select: tuple[str, ...],
    store: str,
    ids: list[str],
    *,
    tail: str = "",
) -> list[tuple]:
    """``select``'s columns of this store's rows of ``model`` for these session ids;
    ``tail`` goes after the condition, its ``{field}`` names replaced by columns."""
    named = ("store_name", "session_id", *select, *re.findall(r"\{(\w+)\}", tail))
    connection, table, names = sql_names(model, named, write=False)
    column = dict(zip(named, names, strict=True))
    sql = (
        f"SELECT {', '.join(column[name] for name in select)} FROM {table} "
        f"WHERE {column['store_name']} = %s AND {column['session_id']} IN "
        f"({', '.join(['%s'] * len(ids))}) {tail.format(**column)}"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [store, *ids])
        return cursor.fetchall()
