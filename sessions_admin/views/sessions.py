"""The session list (the front door) and the targets overview."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import params
from sessions_admin.access import DELETE_SESSIONS, staff_view
from sessions_admin.ids import looks_like_session_id, session_url
from sessions_admin.lists.labelled import labelled_page
from sessions_admin.lists.sessions import (
    counted_sessions,
    failed_calls,
    failed_session_count,
    frames_session_ids,
    index_page,
    page_among,
    with_frames,
)
from sessions_admin.logs import log_time_limit_stop
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.store import queries
from sessions_admin.store.connection import is_read_only
from sessions_admin.store.queries import ACTIVE_PRESETS, SORT_LABELS, Cursor
from sessions_admin.store.spec import PROFILES
from sessions_admin.views import listparams, review_labels
from sessions_admin.views.progress import build_sentence
from sessions_admin.views.sessionrows_html import render_session_rows

#: Query parameters that make up a shareable list view (cursor excluded).
LIST_PARAMS = (
    "target",
    "profile",
    "principal",
    "q",
    "active",
    "active_after",
    "active_before",
    "sort",
    "label",
    "failed",
    "frames",
    "refresh",
)


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def session_list(request: HttpRequest) -> HttpResponse:
    session_filter = listparams.parse_filter(request.GET)
    sort = listparams.parse_sort(request.GET.get("sort"))
    token = request.GET.get("cursor", "")
    cursor = Cursor.from_token(token, sort) if token else None

    if session_filter.q and cursor is None and queries.get_session(session_filter.q):
        # An exact id pasted into the search box goes straight to the session.
        return HttpResponseRedirect(session_url(session_filter.q))

    wants_count = request.GET.get("count") == "1"
    label = review_labels.label_param(request.GET)
    if wants_count and request.htmx:
        failed = listparams.failed_filter(request.GET, label)
        if params.flag(request.GET, "frames"):
            return _count(request, session_filter, label, failed, _framed_ids(label, failed))
        return _count(request, session_filter, label, failed)
    targets = queries.distinct_targets()  # for the merge and for the target menu
    failed = listparams.failed_filter(request.GET, label)
    framed = params.flag(request.GET, "frames")
    page = _page_of(session_filter, sort, cursor, label, failed, framed) or queries.list_sessions(
        session_filter,
        sort,
        cursor,
        with_count=cursor is None,
        force_count=wants_count,
        targets=targets,
    )
    label_choices = review_labels.label_choices()
    kept = {name: request.GET[name] for name in LIST_PARAMS if request.GET.get(name)}
    # A filter the index would serve, scanned instead: say why when a build is the reason.
    scanned = (session_filter.principal or session_filter.q) and page.strategy != "index"
    count_url = "?" + urlencode({**kept, "count": "1"})
    next_url = None
    if page.next_cursor:
        next_url = "?" + urlencode({**kept, "cursor": page.next_cursor.token()})
    context = {
        "page": page,
        "rows_html": render_session_rows(
            page.rows,
            can_delete=request.user.has_perm(DELETE_SESSIONS) and not is_read_only(),
            marks=review_labels.row_marks(page.rows),
            failed=failed_calls([row.id for row in page.rows if row.linkable]),
            frames=with_frames([row.id for row in page.rows if row.linkable]),
        ),
        "labels": label_choices,
        "label_names": [choice.label.name for choice in label_choices],
        "label": label,
        "filter": session_filter,
        "params": kept,
        "sort": sort,
        "sort_choices": list(SORT_LABELS.items()),
        "when": listparams.time_control(
            request.GET, "Last active", start="active_after", end="active_before", preset="active"
        ),
        "profiles": PROFILES,
        "targets": listparams.menu_targets(targets),
        "next_url": next_url,
        "failed": failed,
        "framed": framed,
        "refresh": params.flag(request.GET, "refresh"),
        "count_url": count_url,
        "first_page": cursor is None,
        "build": build_sentence() if scanned and cursor is None else None,
        "active_filters": active_filters(kept),
        "missing_id": session_filter.q
        if session_filter.q and looks_like_session_id(session_filter.q)
        else "",
    }
    template = "sessions_admin/session_list.html"
    if request.htmx and cursor is not None:
        template += "#rows"
    elif request.htmx and request.htmx.target == "results":
        template += "#results"
    return render(request, template, context)


def _page_of(
    session_filter: queries.SessionFilter,
    sort: str,
    cursor: Cursor | None,
    label: Label | None,
    failed: listparams.FailedFilter | None,
    framed: bool = False,
) -> queries.SessionPage | None:
    """The page from our data when it can say (None: the store is scanned)."""
    if framed:
        return page_among(
            _framed_ids(label, failed), session_filter, sort, cursor, strategy="frames"
        )
    if failed is not None:
        # The side index walks the failed sessions in the list's order; with a label,
        # or when the index cannot serve now, every failed session is read (exact).
        page = index_page(session_filter, sort, cursor, failed=True) if label is None else None
        return page or page_among(failed.ids(), session_filter, sort, cursor, strategy="failed")
    if label is not None:
        return labelled_page(label, session_filter, sort, cursor)
    # Principal and title filters come from the side index after a recent pass
    # (with the sessions of newer messages read from the store: index.sessions).
    return index_page(session_filter, sort, cursor)


def _framed_ids(label: Label | None, failed: listparams.FailedFilter | None) -> list[str]:
    """The sessions with a frames directory, a label's and failed ones among them."""
    ids = frames_session_ids()
    for keep in (
        failed.ids() if failed is not None else None,
        labels.session_ids_with(label) if label is not None else None,
    ):
        if keep is not None:
            kept = set(keep)
            ids = [sid for sid in ids if sid in kept]
    return ids


#: Parameters that clear together: the preset and the custom range are one filter.
_TIME_PARAMS = ("active", "active_after", "active_before")


def active_filters(kept: dict[str, str]) -> list[dict[str, str]]:
    """Each applied filter in words, with the list's URL without it (for the empty state)."""
    shown: list[dict[str, str]] = []

    def without(*names: str) -> str:
        rest = {k: v for k, v in kept.items() if k not in names}
        return "?" + urlencode(rest) if rest else ""

    for name, words in (
        ("target", "target {}"),
        ("profile", "profile {}"),
        ("principal", "principal {}"),
        ("q", "title or id contains “{}”"),
        ("label", "label {}"),
        ("failed", "with failed tool calls"),
        ("frames", "with activity frames on disk"),
    ):
        if kept.get(name):
            shown.append({"label": words.format(kept[name]), "clear_url": without(name)})
    if any(kept.get(name) for name in _TIME_PARAMS):
        preset = ACTIVE_PRESETS.get(kept.get("active", ""))
        label = f"last active: {preset[0]}" if preset else "last active in a custom range"
        shown.append({"label": label, "clear_url": without(*_TIME_PARAMS)})
    return shown


def _count(
    request: HttpRequest,
    session_filter: queries.SessionFilter,
    label: Label | None,
    failed: listparams.FailedFilter | None = None,
    among: list[str] | None = None,
) -> HttpResponse:
    """The capped count of a filter no index serves, fetched after the page."""
    try:
        if among is not None:
            count, capped = queries.count_among(among, session_filter)
        elif failed is not None and label is None and session_filter.is_empty():
            count, capped = failed_session_count(), False
        elif failed is not None:
            count, capped = queries.count_among(failed.ids(), session_filter)
        elif label is not None:
            count, capped = queries.count_among(labels.session_ids_with(label), session_filter)
        else:
            count, capped = queries.count_sessions_limited(session_filter)
    except queries.StoreTimeout as exc:
        log_time_limit_stop(request, exc)
        count, capped = None, False
    return render(
        request,
        "sessions_admin/session_list.html#count",
        {
            "count": count,
            "capped": capped,
            "filter": session_filter,
            "count_url": request.get_full_path(),
        },
    )


@require_safe
@staff_view()
def targets(request: HttpRequest) -> HttpResponse:
    """Targets and profiles with their sessions and last activity. The counts come
    from the rollups after a recent pass, and the page says as of when (9 ms for
    the page on the bench store where counting in the store took 35 ms, at a load
    of 10); the last activity, and a pair the rollups do not know, from the store."""
    counted = counted_sessions()
    overview = queries.targets_overview(counted[0] if counted else None)
    as_of = counted[1] if any(p.counted_before for t in overview for p in t.profiles) else None
    return render(
        request,
        "sessions_admin/targets.html",
        {"targets": overview, "counted_at": as_of},
    )
