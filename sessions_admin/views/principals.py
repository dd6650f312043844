"""``/principals/``: every principal; one principal's page; erasing it; the receipt.

* ``/principals/`` reads the side index's per-principal totals
  (:mod:`sessions_admin.ourdata.principals`): keyset pages, newest activity
  first, ``?q=`` a substring under the one case folding; only a name read with
  replacement characters is looked up in the store, to mark it when no TEXT
  holds it (a BLOB, TEXT that is not UTF-8) instead of linking to an empty page.
* ``/principals/<id>/`` (the id percent-encoded as session ids are, or
  ``/principals/~/?id=``): exact counts from the store, the tools used, the
  sessions elsewhere that mention the id, the erase form, earlier receipts.
* ``POST /principals/<id>/erase/`` with ``confirm`` = the phrase the page
  showed, checked against the count now (:mod:`sessions_admin.deletion.erasure`),
  recorded as a job for ``manage.py run_jobs``; 303 at once to the receipt.
* ``/principals/erasures/<n>/``: the receipt, following its job while it runs;
  then to print, ``?format=json`` to attach.

Which page a path means: behind gunicorn the raw path settles it (its first
segment is the id). Otherwise the method does: the erase action only takes
POST and the page only GET, so a POST whose decoded path ends in ``/erase``
is the action and a GET is the page of the whole path.
"""

from __future__ import annotations

import time
from dataclasses import replace
from datetime import UTC
from urllib.parse import urlencode

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.template.defaultfilters import filesizeformat
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRefresh

from sessions_admin.access import ERASE_PRINCIPAL, staff_view
from sessions_admin.deletion import Actor
from sessions_admin.deletion.erasure import StalePhrase, erasure_phrase, request_erasure
from sessions_admin.ids import PRINCIPALS_PREFIX, QUERY_FORM_MARKER, principal_url
from sessions_admin.ourdata.audit import audits_naming
from sessions_admin.ourdata.erasures import KINDS, REFERENCE_CHARS, Erasure
from sessions_admin.ourdata.index.search import SearchQuery, search
from sessions_admin.ourdata.principals import PrincipalTotals
from sessions_admin.ourdata.principals import principal_list as read_principals
from sessions_admin.params import BadParameter, choice, quoted, text
from sessions_admin.store.connection import is_read_only
from sessions_admin.store.principals import footprint, text_principal_exists, tools_of
from sessions_admin.store.values import OddValue
from sessions_admin.views.progress import job_sentence
from sessions_admin.views.responses import HttpResponseSeeOther
from sessions_admin.views.routing import raw_path_after

LIST_TEMPLATE = "sessions_admin/principals.html"
PAGE_TEMPLATE = "sessions_admin/principal.html"
RECEIPT_TEMPLATE = "sessions_admin/erasure.html"
#: How long the page looks for other sessions that mention the principal.
MENTIONS_BUDGET_S = 1.0
MENTIONS_PAGES = 10


# --- The list -----------------------------------------------------------------------


def _cursor(raw: str | None) -> tuple[int, str] | None:
    """``<last activity ms>:<principal>``, as the previous page's "more" link wrote it."""
    if raw is None:
        return None
    number, sep, principal = raw.partition(":")
    try:
        last = int(number)
    except ValueError:
        last = None
    if not sep or last is None or not -(2**63) <= last < 2**63:
        raise BadParameter(f"cursor: {quoted(raw)} is not a position in this list.", name="cursor")
    return last, principal


@require_GET
@vary_on_headers("HX-Request")
@staff_view()
def principal_list(request: HttpRequest) -> HttpResponse:
    q = text(request.GET, "q")
    cursor = _cursor(request.GET.get("cursor"))
    started = time.perf_counter()
    page = read_principals(q, cursor)
    next_url = None
    if page.next_cursor is not None:
        query = {"cursor": f"{page.next_cursor[0]}:{page.next_cursor[1]}"}
        if q:
            query["q"] = q
        next_url = f"{reverse('principals')}?{urlencode(query)}"
    context = {
        "q": q or "",
        "page": page,
        "rows": [_marked(row) for row in page.rows],
        "next_url": next_url,
        "first_page": cursor is None,
        "elapsed_ms": (time.perf_counter() - started) * 1000,
    }
    template = f"{LIST_TEMPLATE}#rows" if request.htmx and cursor is not None else LIST_TEMPLATE
    if request.htmx and cursor is None:
        template = f"{LIST_TEMPLATE}#results"
    return render(request, template, context)


def _marked(row: PrincipalTotals) -> PrincipalTotals:
    """A row whose name was read with replacement characters and names no TEXT in the
    store: marked, and not linked to a page that would find none of its sessions."""
    name = row.principal
    if "\ufffd" not in name or text_principal_exists(name):
        return row
    return replace(row, principal=OddValue(f"{name} (binary or not valid UTF-8)", name))


# --- One principal ------------------------------------------------------------------


def read_principal_path(request: HttpRequest, rest: str) -> tuple[str, str]:
    """(principal, ``""`` for its page or ``"erase"``) from the path after /principals/."""
    query_id = request.GET.get("id")
    if query_id is not None and rest in (QUERY_FORM_MARKER, f"{QUERY_FORM_MARKER}/erase"):
        return query_id, "erase" if rest.endswith("/erase") else ""
    raw = raw_path_after(request, PRINCIPALS_PREFIX)
    if raw is not None:
        principal, after = raw
        if after not in ("", "erase/"):
            raise Http404("No such page of a principal.")
        return principal, "erase" if after else ""
    if request.method == "POST" and rest.endswith("/erase"):
        return rest[: -len("/erase")], "erase"
    return rest, ""


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view()
def principal_dispatch(request: HttpRequest, rest: str) -> HttpResponse:
    principal, action = read_principal_path(request, rest)
    if action == "erase":
        return erase(request, principal)
    return principal_page(request, principal)


def _mentions(principal: str) -> tuple[int, bool]:
    """Other principals' sessions whose messages contain the id: (how many, more may exist)."""
    others: set[str] = set()
    before = None
    deadline = time.monotonic() + MENTIONS_BUDGET_S
    for _ in range(MENTIONS_PAGES):
        page = search(SearchQuery(q=principal, before_id=before))
        others.update(
            group.session_id
            for group in page.groups
            if group.session is None or group.session.principal_id != principal
        )
        if page.next_before_id is None:
            return len(others), False
        before = page.next_before_id
        if time.monotonic() > deadline:
            break
    return len(others), True


def _page_context(request: HttpRequest, principal: str) -> dict:
    found = footprint(principal)
    mentioned, more = _mentions(principal) if principal.strip() else (0, False)
    texts = [sid for sid in found.session_ids if isinstance(sid, str)]
    return {
        "principal": principal,
        "found": found,
        "records": audits_naming(texts),
        "tools": tools_of(found.session_ids),
        "sessions_url": f"{reverse('sessions')}?{urlencode({'principal': principal})}",
        "search_url": f"{reverse('search')}?{urlencode({'q': principal})}",
        "mentioned": mentioned,
        "mentioned_more": more,
        "phrase": erasure_phrase(principal, found.counts.sessions),
        "erase_url": principal_url(principal, "erase"),
        "can_erase": request.user.has_perm(ERASE_PRINCIPAL) and principal != "",
        "read_only": is_read_only(),
        "receipts": Erasure.of_principal(principal)[:20],
    }


@require_http_methods(["GET", "HEAD"])
@staff_view()
def principal_page(request: HttpRequest, principal: str) -> HttpResponse:
    return render(request, PAGE_TEMPLATE, _page_context(request, principal))


@require_POST
@staff_view(ERASE_PRINCIPAL)
def erase(request: HttpRequest, principal: str) -> HttpResponse:
    if principal == "":
        raise BadParameter("id: the empty principal names no person to erase.", name="id")
    confirm = request.POST.get("confirm", "")
    try:
        # Recorded, not run: the worker beside the server carries it out, and the
        # receipt page follows it.
        receipt = request_erasure(
            principal,
            actor=Actor.of(request.user),
            confirm=confirm,
            reference=text(request.POST, "reference", max_chars=REFERENCE_CHARS) or "",
        )
    except StalePhrase as refused:
        context = {**_page_context(request, principal), "refusal": refused.message}
        return render(request, PAGE_TEMPLATE, context, status=400)
    return HttpResponseSeeOther(reverse("erasure", args=[receipt.pk]))


# --- The receipt --------------------------------------------------------------------


@require_GET
@vary_on_headers("HX-Request")
@staff_view(needs_store=False)
def erasure_receipt(request: HttpRequest, pk: int) -> HttpResponse:
    """Kept when the data is gone: it reads only our own database, never the store.

    While its job runs the page follows it (htmx asks for the progress region every
    second, and reloads the page once the receipt is final)."""
    receipt = get_object_or_404(Erasure.objects.of_this_store().select_related("job"), pk=pk)
    job = receipt.job
    running = job is not None and not job.final
    if getattr(request, "htmx", False) and request.GET.get("region") == "progress":
        if not running:
            return HttpResponseClientRefresh()
        return render(request, f"{RECEIPT_TEMPLATE}#progress", _progress_context(receipt))
    if choice(request.GET, "format", ("html", "json"), default="html") == "json":
        response = JsonResponse(receipt.as_json(), json_dumps_params={"indent": 2})
        response["Content-Disposition"] = f'inline; filename="erasure-{receipt.pk}.json"'
        return response
    kinds = [
        (label, receipt.counts()[kind], int(receipt.verification.get(kind, 0)), KIND_MEANING[kind])
        for kind, label in KINDS
    ]
    context = {
        "receipt": receipt,
        "kinds": kinds,
        "sentence": plain_sentence(receipt) if not running else "",
        "verified": bool(receipt.verification),
        "principal_url": principal_url(receipt.principal),
        "json_url": f"{reverse('erasure', args=[receipt.pk])}?format=json",
        **_progress_context(receipt),
    }
    return render(request, RECEIPT_TEMPLATE, context)


#: What each kind of the receipt is, in words a compliance officer reads.
KIND_MEANING = {
    "sessions": "conversations in the runtime's store",
    "messages": "what was said and done in them, tool calls and their results included",
    "state_rows": "values the runtime kept for each conversation",
    "frame_dirs": "folders of per-request activity logs on disk",
    "index_entries": "the dashboard's search index: one per conversation and one per message",
    "rollup_rows": "the dashboard's figures: counts per tool, day and person",
    "our_records": (
        "rows of the dashboard's deletion log that named these conversations: "
        "the rows stay (they prove deletes), the conversation ids are taken out"
    ),
}


def _counted(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def plain_sentence(receipt: Erasure) -> str:
    """The receipt in one sentence: what was erased, when, and whether anything remains."""
    when = receipt.finished_at or receipt.started_at
    moment = when.astimezone(UTC).strftime("%-d %b %Y at %H:%M:%S UTC")
    what = ", ".join(
        [
            _counted(receipt.sessions, "conversation"),
            _counted(receipt.messages, "message"),
            _counted(receipt.state_rows, "state value"),
            _counted(receipt.frame_dirs, "activity-log folder")
            + f" ({filesizeformat(receipt.frame_bytes)})",
            f"their entries in the dashboard's search index and figures"
            f" ({receipt.index_entries + receipt.rollup_rows:,})",
            _counted(receipt.notes, "review note"),
            _counted(receipt.labels, "label"),
            _counted(receipt.reveals, "record of a revealed value", "records of revealed values"),
        ]
    )
    who = f"{receipt.principal} held by this dashboard for the store {receipt.store_name}"
    if receipt.status == Erasure.Status.REFUSED:
        return f"Nothing of {who} was erased ({moment}): {receipt.detail or 'refused'}."
    if receipt.status == Erasure.Status.OK:
        checked = "nothing of it was found when everything was read again afterwards"
        return f"All data of {who} was erased on {moment}: {what}; {checked}."
    return (
        f"Part of the data of {who} was erased by {moment}: {what}. Some remains: "
        f"{receipt.detail or 'see the verification below'}; erasing again finishes it."
    )


def _progress_context(receipt: Erasure) -> dict:
    job = receipt.job
    running = job is not None and not job.final
    return {
        "receipt": receipt,
        "running": running,
        "job": job,
        "progress": job_sentence(job) if running else "",
        "poll_url": f"{reverse('erasure', args=[receipt.pk])}?region=progress",
    }
