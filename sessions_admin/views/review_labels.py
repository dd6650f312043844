"""Labels on the session page and the list: ``POST /sessions/<id>/labels/``, the
``?label=`` parameter, and the marks each list row shows (labels, notes, verdicts).

Labels are defined in the admin; staff with "Can annotate" put them on
sessions and take them off, everyone else sees them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_POST

from sessions_admin import params
from sessions_admin.access import ANNOTATE, staff_view
from sessions_admin.ids import session_url
from sessions_admin.ourdata.review import labels, marks
from sessions_admin.ourdata.review.models import Label
from sessions_admin.params import BadParameter
from sessions_admin.store.queries import SessionRow
from sessions_admin.views.responses import HttpResponseSeeOther

LABELS_TEMPLATE = "sessions_admin/_review_head.html#labels"


def label_param(query: Mapping[str, Any], name: str = "label") -> Label | None:
    """The label a parameter names, None when absent; a 400 naming it when unknown."""
    raw = params.text(query, name, max_chars=64)
    if raw is None:
        return None
    label = labels.label_named(raw)
    if label is None:
        raise BadParameter(
            f"{name}: there is no label named {params.quoted(raw)} (labels are defined "
            "in the admin).",
            name=name,
        )
    return label


@dataclass(frozen=True)
class LabelChoice:
    label: Label
    colour: str


def label_choices(every: Sequence[Label] | None = None) -> list[LabelChoice]:
    """Every label (``every``, when the caller has read them) with a colour safe for the
    page's style sheet."""
    every = labels.all_labels() if every is None else every
    return [LabelChoice(label, labels.safe_colour(label.color)) for label in every]


@dataclass
class RowMarks:
    """What a list row shows of our review records."""

    labels: list[Label] = field(default_factory=list)
    noted: bool = False
    verdict: str = ""


def row_marks(rows: Sequence[SessionRow]) -> dict[str, RowMarks]:
    """Labels, notes and the latest verdict of a page of sessions (three reads)."""
    return marks_of([row.id for row in rows])


def marks_of(session_ids: Sequence[Any]) -> dict[str, RowMarks]:
    """:func:`row_marks` by session id (search groups)."""
    ids = [sid for sid in session_ids if isinstance(sid, str)]
    if not ids:
        return {}
    found = marks.marks_of(ids)
    # The labels are few: read once, and only for a page that shows one.
    named = {label.pk: label for label in labels.all_labels()} if found.label_ids else {}
    shown = {sid: RowMarks() for sid in ids}
    for sid, label_ids in found.label_ids.items():
        on = [named[pk] for pk in label_ids if pk in named]  # not one deleted since
        shown[sid].labels = sorted(on, key=lambda label: label.name)
    for sid in found.noted:
        shown[sid].noted = True
    for sid, verdict in found.verdicts.items():
        shown[sid].verdict = verdict
    return shown


def _new_label(request: HttpRequest) -> Label:
    name = params.text(request.POST, "name", max_chars=64)
    if name is None:
        raise BadParameter("name: give the new label a name (one word).", name="name")
    colours = dict(labels.PALETTE)
    colour = params.choice(request.POST, "colour", colours, "slate") or "slate"
    try:
        return labels.make_label(name, colours[colour])
    except ValidationError as exc:
        raise BadParameter(f"name: {' '.join(exc.messages)}", name="name") from None


def labels_context(request: HttpRequest, session_id: str) -> dict[str, Any]:
    every = labels.all_labels()  # one read for the three lists below
    on = labels.labels_of_session(session_id, every)
    return {
        "session_labels": on,
        "label_choices": label_choices(every),
        "addable_labels": [label for label in every if label not in on],
        "labels_url": session_url(session_id, "labels"),
        "can_annotate": request.user.has_perm(ANNOTATE),
        "palette": [(index, name) for index, (name, _) in enumerate(labels.PALETTE)],
    }


@require_POST
@staff_view(ANNOTATE)
def session_labels(request: HttpRequest, session_id: str) -> HttpResponse:
    """Put a label on the session (``action=add``), take it off (``action=remove``), or
    make a new one from a name and a palette colour and put it on (``action=create``)."""
    action = params.choice(request.POST, "action", ("add", "remove", "create"), "add")
    label = _new_label(request) if action == "create" else label_param(request.POST)
    if label is None:
        raise BadParameter("label is missing: name the label to add or remove.", name="label")
    if action in ("add", "create"):
        labels.add_label(session_id, label, request.user)
    else:
        labels.remove_label(session_id, label)
    if request.htmx:
        context = {**labels_context(request, session_id), "session_id": session_id}
        return render(request, LABELS_TEMPLATE, context)
    return HttpResponseSeeOther(session_url(session_id) + "#labels")
