"""The session list (the front door) and the targets overview."""

from __future__ import annotations

from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_safe
from django.views.decorators.vary import vary_on_headers

from sessions_admin import clock
from sessions_admin.access import DELETE_SESSIONS, staff_view
from sessions_admin.ids import looks_like_session_id, session_url
from sessions_admin.logs import log_time_limit_stop
from sessions_admin.ourdata import sidedb
from sessions_admin.ourdata.index import sessions as index_sessions
from sessions_admin.ourdata.review import labels
from sessions_admin.ourdata.review.models import Label
from sessions_admin.ourdata.rollups import calls, figures
from sessions_admin.store import queries
from sessions_admin.store.cliptext import SHORT_TEXT_CHARS
from sessions_admin.store.connection import is_read_only
from sessions_admin.store.queries import ACTIVE_PRESETS, SORT_LABELS, Cursor
from sessions_admin.store.spec import PROFILES
from sessions_admin.views import review_labels
from sessions_admin.views.labelled import labelled_page
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
)


#: Reads of the side index for one page before the list scans the store instead.
INDEX_READS_PER_PAGE = 8


def index_page(
    session_filter: queries.SessionFilter,
    sort: str,
    cursor: Cursor | None,
    *,
    limit: int = queries.PAGE_SIZE,
) -> queries.SessionPage | None:
    """A list page whose ids the side index chose, read back from the store and
    checked again; ``None`` when the index cannot serve this filter now.

    A session the runtime deleted or changed since the last pass is skipped
    and the index read on, so "No sessions match" is said only where the
    index really ends. The next page starts after the last id the index gave
    (its position, not the store's newer values), so no row shows twice.
    After a few reads that keep meeting stale rows, the list scans instead.
    """
    rows: list = []
    position = cursor
    for _ in range(INDEX_READS_PER_PAGE):
        want = limit - len(rows)
        picked = index_sessions.page_ids(session_filter, sort, position, limit=want + 1)
        if picked is None:
            return None
        ids = [sid for sid, _ in picked[:want]]
        rows.extend(queries.page_of_ids(ids, session_filter, sort, limit=want).rows)
        if len(picked) <= want:
            return queries.SessionPage(rows=rows, next_cursor=None, strategy="index")
        last_id, last_value = picked[want - 1]
        position = Cursor(sort, 0 if last_value is None else last_value, last_id)
        if len(rows) == limit:
            return queries.SessionPage(rows=rows, next_cursor=position, strategy="index")
    return None


def failed_calls(session_ids: list[str]) -> dict[str, int]:
    """Failed tool calls per session from the rollups; none shown while they are not built
    (or the side database is damaged: the list itself comes from the store)."""
    try:
        with figures.reading() as side:
            return calls.failed_by_session(side, session_ids)
    except (figures.NotComputed, *sidedb.errors()):
        return {}


@require_safe
@vary_on_headers("HX-Request")
@staff_view()
def session_list(request: HttpRequest) -> HttpResponse:
    session_filter = queries.parse_filter(request.GET)
    sort = queries.parse_sort(request.GET.get("sort"))
    token = request.GET.get("cursor", "")
    cursor = Cursor.from_token(token, sort) if token else None

    if session_filter.q and cursor is None and queries.get_session(session_filter.q):
        # An exact id pasted into the search box goes straight to the session.
        return HttpResponseRedirect(session_url(session_filter.q))

    wants_count = request.GET.get("count") == "1"
    label = review_labels.label_param(request.GET)
    if wants_count and request.htmx:
        return _count(request, session_filter, label)
    targets = queries.distinct_targets()  # for the merge and for the target menu
    if label is not None:
        page = labelled_page(label, session_filter, sort, cursor)
    else:
        # Principal and title filters come from the side index after a recent pass
        # (with the sessions of newer messages read from the store: index.sessions).
        page = index_page(session_filter, sort, cursor)
    if page is None:
        page = queries.list_sessions(
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
        ),
        "labels": label_choices,
        "label_names": [choice.label.name for choice in label_choices],
        "label": label,
        "filter": session_filter,
        "params": kept,
        "sort": sort,
        "sort_choices": list(SORT_LABELS.items()),
        "preset_choices": [(key, preset[0]) for key, preset in ACTIVE_PRESETS.items()],
        "profiles": PROFILES,
        # A target longer than any real one stays filterable by URL, not listed;
        # a BLOB target is left out, as no menu value could name it.
        "targets": [t for t in targets if isinstance(t, str) and len(t) <= SHORT_TEXT_CHARS],
        "next_url": next_url,
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
    ):
        if kept.get(name):
            shown.append({"label": words.format(kept[name]), "clear_url": without(name)})
    if any(kept.get(name) for name in _TIME_PARAMS):
        preset = ACTIVE_PRESETS.get(kept.get("active", ""))
        label = f"last active: {preset[0]}" if preset else "last active in a custom range"
        shown.append({"label": label, "clear_url": without(*_TIME_PARAMS)})
    return shown


def _count(
    request: HttpRequest, session_filter: queries.SessionFilter, label: Label | None
) -> HttpResponse:
    """The capped count of a filter no index serves, fetched after the page."""
    try:
        if label is not None:
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


def counted_sessions() -> tuple[dict[tuple[str, str], int], int] | None:
    """Sessions per (target, profile) from the rollups as of their last pass, and when
    that pass ended; ``None`` while they cannot say (not built, damaged, or the
    pass older than the index's freshness window: the store then counts)."""
    try:
        with figures.reading() as side:
            synced = figures.last_sync(side).synced_at_ms
            now = clock.now_ms()
            if synced is None or now - synced > index_sessions.FRESH_FOR_S * 1000:
                return None
            rows = figures.by_target(side, figures.parse_window("all", now))
    except (figures.NotComputed, *sidedb.errors()):
        return None
    # A pair the rollups count no session in is counted in the store, not shown as 0.
    counts = {
        (t.target, profile): n for t in rows for profile, (n, _) in t.profiles.items() if n > 0
    }
    return counts, synced


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
