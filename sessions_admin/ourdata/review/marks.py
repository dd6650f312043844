"""What a page of listed sessions carries of our review records: labels, notes, verdicts.

One SQL statement of our own over the three tables (``UNION ALL``), each part
one index range per page (``store_name, session_id``): a list page asks for
its 50 rows' marks every time, and through the ORM (three querysets compiled
per page) they were a quarter of the list's time; three statements of our own
still cost two round trips more.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from sessions_admin.ourdata.review.bulk import sql_names
from sessions_admin.ourdata.review.models import Note, ReviewItem, SessionLabel
from sessions_admin.ourdata.storeids import from_column, to_column
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
        for kind, sid, label_id, verdict in _rows(store, chunk):
            if kind == _LABEL:
                marks.label_ids.setdefault(sid, []).append(label_id)
            elif kind == _NOTE:
                marks.noted.add(sid)
            else:
                # Oldest first: the newest verdict of a session is the last one written.
                marks.verdicts[sid] = verdict
    return marks


_LABEL, _NOTE, _VERDICT = 0, 1, 2
#: Only the review items that carry a verdict.
_WITH_VERDICT = "AND {verdict} <> ''"


def _rows(store: str, ids: list[str]) -> list[tuple]:
    """(kind, session id, label id, verdict) of this store's labels, notes and verdicts
    of these sessions: one statement, verdicts oldest first."""
    parts: list[str] = []
    params: list = []
    for kind, model, select, tail in (
        # The typed columns first: PostgreSQL settles a union's column types pair by
        # pair, and two untyped NULLs would make a text column.
        (_VERDICT, ReviewItem, "{session_id}, NULL, {verdict}, {reviewed_at}, {id}", _WITH_VERDICT),
        (_LABEL, SessionLabel, "{session_id}, {label}, NULL, NULL, NULL", ""),
        (_NOTE, Note, "{session_id}, NULL, NULL, NULL, NULL", ""),
    ):
        named = ("store_name", *re.findall(r"\{(\w+)\}", select + tail))
        connection, table, names = sql_names(model, named, write=False)
        column = dict(zip(named, names, strict=True))
        parts.append(
            f"SELECT {kind}, {select.format(**column)} FROM {table} "
            f"WHERE {column['store_name']} = %s AND {column['session_id']} IN "
            f"({', '.join(['%s'] * len(ids))}) {tail.format(**column)}"
        )
        params.extend([store, *(to_column(sid) for sid in ids)])
    # Columns 5 and 6 order the verdicts (reviewed_at, id); the others have none.
    sql = " UNION ALL ".join(parts) + " ORDER BY 1, 5, 6"
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [
            (kind, from_column(sid), *rest)
            for kind, sid, *rest in (row[:4] for row in cursor.fetchall())
        ]
