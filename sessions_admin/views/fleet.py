"""``/fleet/``: every host of the fleet, its sessions, a principal across hosts.

Read from the directory the hosts publish into the shared database
(:mod:`sessions_admin.ourdata.fleet`), never from a store: each row links to the
page of the host that holds the session, at that host's public URL. The pages
need no healthy local store (``needs_store=False``): an instance may serve the
fleet while its own store is away.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from django.conf import settings
from django.db.models import Count, Q, QuerySet, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse, QueryDict
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from sessions_admin.access import ERASE_PRINCIPAL, staff_view
from sessions_admin.deletion.erasure import erasure_phrase, phrase_matches
from sessions_admin.deletion.fleet import erasure_json, request_fleet_erasure
from sessions_admin.ids import QUERY_FORM_MARKER, fleet_principal_url, principal_url, session_url
from sessions_admin.ourdata.erasures import REFERENCE_CHARS
from sessions_admin.ourdata.fleet.models import FleetErasure, FleetHost, FleetSession, exact_key
from sessions_admin.ourdata.fleet.publish import shown
from sessions_admin.params import BadParameter, choice, quoted, text
from sessions_admin.views.responses import HttpResponseSeeOther

PRINCIPAL_TEMPLATE = "sessions_admin/fleet_principal.html"
#: Sessions per page of ``/fleet/sessions/``.
PAGE_ROWS = 50
#: The longest target or principal a filter takes.
EXACT_CHARS = 10_000


@dataclass(frozen=True)
class HostRow:
    host: FleetHost
    #: Seconds since its last pass (None: never published).
    age_s: float | None
    stale: bool

    @property
    def failed(self) -> bool:
        return self.host.last_outcome == FleetHost.Outcome.FAILED


def _host_rows() -> list[HostRow]:
    now = timezone.now()
    rows = []
    for host in FleetHost.objects.all():
        age = None if host.last_pass_at is None else (now - host.last_pass_at).total_seconds()
        rows.append(HostRow(host, age, age is None or age > settings.FLEET_STALE_S))
    return rows


@require_GET
@staff_view(needs_store=False)
def fleet_hosts(request: HttpRequest) -> HttpResponse:
    rows = _host_rows()
    return render(
        request,
        "sessions_admin/fleet.html",
        {
            "here": "fleet",
            "rows": rows,
            "stale_after_s": settings.FLEET_STALE_S,
            "troubled": sum(1 for row in rows if row.stale or row.failed),
        },
    )


def _cursor(raw: str | None) -> tuple[int, int] | None:
    """``<newest>:<row id>``, as the previous page's "more" link wrote it."""
    if raw is None:
        return None
    newest, sep, pk = raw.partition(":")
    try:
        values = int(newest), int(pk)
    except ValueError:
        values = None
    if not sep or values is None or not all(-(2**63) <= v < 2**63 for v in values):
        raise BadParameter(f"cursor: {quoted(raw)} is not a position in this list.", name="cursor")
    return values


@dataclass(frozen=True)
class SessionFilters:
    host: str | None
    target: str | None
    principal: str | None
    q: str | None

    @classmethod
    def from_request(cls, request: HttpRequest) -> SessionFilters:
        # A target or principal is matched as given (an id may end in a space, or hold
        # NUL); a host's name and a title's words are free text.
        return cls(
            host=text(request.GET, "host"),
            target=exact(request.GET, "target"),
            principal=exact(request.GET, "principal"),
            q=text(request.GET, "q"),
        )

    def applied(self, rows: QuerySet[FleetSession]) -> QuerySet[FleetSession]:
        if self.host is not None:
            rows = rows.filter(host__store_name=self.host)
        if self.target is not None:
            rows = rows.filter(target=shown(self.target))
        if self.principal is not None:
            rows = rows.filter(principal_key=exact_key(self.principal))
        if self.q is not None:
            rows = rows.filter(title__icontains=self.q)
        return rows

    def query(self, **more: str) -> str:
        values = {k: v for k, v in vars(self).items() if v is not None}
        return urlencode({**values, **more})


def exact(params: QueryDict, name: str) -> str | None:
    """A parameter exactly as given (None when absent or empty), at most 10,000 characters."""
    raw = params.get(name, "")
    if len(raw) > EXACT_CHARS:
        raise BadParameter(f"{name} is too long (over {EXACT_CHARS:,} characters).", name=name)
    return raw or None


def host_session_url(row: FleetSession) -> str | None:
    """The session's page on the host that holds it (None: the host gave no URL)."""
    base = row.host.public_url
    return f"{base}{session_url(row.session_id)}" if base else None


def session_page(filters: SessionFilters, cursor: tuple[int, int] | None) -> list[FleetSession]:
    """One page of the directory, newest first (keyset on ``newest`` and the row id)."""
    rows = filters.applied(FleetSession.objects.select_related("host"))
    if cursor is not None:
        newest, pk = cursor
        rows = rows.filter(Q(newest__lt=newest) | Q(newest=newest, id__lt=pk))
    return list(rows.order_by("-newest", "-id")[: PAGE_ROWS + 1])


@require_GET
@staff_view(needs_store=False)
def fleet_sessions(request: HttpRequest) -> HttpResponse:
    filters = SessionFilters.from_request(request)
    found = session_page(filters, _cursor(request.GET.get("cursor")))
    rows, more = found[:PAGE_ROWS], len(found) > PAGE_ROWS
    next_url = None
    if more:
        last = rows[-1]
        next_url = "?" + filters.query(cursor=f"{last.newest}:{last.pk}")
    return render(
        request,
        "sessions_admin/fleet_sessions.html",
        {
            "here": "fleet_sessions",
            "filters": filters,
            "hosts": list(FleetHost.objects.values_list("store_name", flat=True)),
            "rows": [(row, host_session_url(row)) for row in rows],
            "next_url": next_url,
            "first_page": "cursor" not in request.GET,
        },
    )


@dataclass(frozen=True)
class PrincipalPart:
    """One host's share of a principal."""

    host: FleetHost
    sessions: int
    messages: int
    failed_calls: int
    #: The principal's page on that host (None: the host gave no URL).
    url: str | None


def principal_parts(principal: str) -> list[PrincipalPart]:
    """The principal's sessions, messages and failed calls per host, from the directory."""
    totals = {
        row["host_id"]: (row["sessions"], row["messages"], row["failed"])
        for row in FleetSession.objects.filter(principal_key=exact_key(principal))
        .values("host_id")
        .annotate(sessions=Count("id"), messages=Sum("messages"), failed=Sum("failed_calls"))
    }
    hosts = FleetHost.objects.in_bulk(list(totals))
    path = principal_url(principal)
    return [
        PrincipalPart(
            hosts[pk],
            *totals[pk],
            url=f"{hosts[pk].public_url}{path}" if hosts[pk].public_url else None,
        )
        for pk in sorted(totals, key=lambda pk: hosts[pk].store_name)
    ]


def fleet_phrase(principal: str, sessions: int, hosts: int) -> str:
    """``erase 48 sessions of user:alice on 3 hosts``: what staff type to confirm."""
    return f"{erasure_phrase(principal, sessions)} on {hosts} host{'s' if hosts != 1 else ''}"


def _principal_of(request: HttpRequest, rest: str) -> tuple[str, str]:
    """(principal, ``""`` for its page or ``"erase"``) from the path after the prefix:
    the erase action takes only POST, so a POST whose path ends in ``/erase`` is it."""
    if rest in (QUERY_FORM_MARKER, f"{QUERY_FORM_MARKER}/erase"):
        principal = exact(request.GET, "id")
        if principal is None:
            raise BadParameter("id: the principal to show is missing.", name="id")
        return principal, "erase" if rest.endswith("/erase") else ""
    if request.method == "POST" and rest.endswith("/erase"):
        return rest[: -len("/erase")], "erase"
    return rest, ""


@require_http_methods(["GET", "HEAD", "POST"])
@staff_view(needs_store=False)
def fleet_principal(request: HttpRequest, rest: str = "") -> HttpResponse:
    principal, action = _principal_of(request, rest)
    if action == "erase":
        return fleet_erase(request, principal)
    if request.method == "POST":
        raise BadParameter("Only the erase action takes a POST here.", name="action")
    return render(request, PRINCIPAL_TEMPLATE, _principal_context(request, principal))


def _principal_context(request: HttpRequest, principal: str) -> dict:
    parts = principal_parts(principal)
    sessions = sum(p.sessions for p in parts)
    return {
        "here": "fleet_principal",
        "principal": principal,
        "parts": parts,
        # Not "messages": the messages framework's variable in every template.
        "total_sessions": sessions,
        "total_messages": sum(p.messages for p in parts),
        "total_failed": sum(p.failed_calls for p in parts),
        "page_url": fleet_principal_url(principal),
        "list_url": "/fleet/sessions/?" + urlencode({"principal": principal}),
        "can_erase": request.user.has_perm(ERASE_PRINCIPAL) and principal != "" and sessions > 0,
        "phrase": fleet_phrase(principal, sessions, len(parts)),
        "erase_url": fleet_principal_url(principal, "erase"),
        "erasures": FleetErasure.objects.filter(
            principal_key=exact_key(principal)
        ).prefetch_related("parts")[:20],
    }


@require_POST
@staff_view(ERASE_PRINCIPAL, needs_store=False)
def fleet_erase(request: HttpRequest, principal: str) -> HttpResponse:
    """Record the erasure with a part per host; each host carries its part out in its
    next pass. The phrase is checked against the directory's count now."""
    if principal == "":
        raise BadParameter("id: the empty principal names no person to erase.", name="id")
    parts = principal_parts(principal)
    sessions = sum(p.sessions for p in parts)
    expected = fleet_phrase(principal, sessions, len(parts))
    if not phrase_matches(request.POST.get("confirm", ""), expected) or not sessions:
        context = _principal_context(request, principal)
        context["refusal"] = (
            f"The confirmation did not match: the directory now holds {sessions} session"
            f"{'s' if sessions != 1 else ''} of this principal on {len(parts)} host"
            f"{'s' if len(parts) != 1 else ''}. Nothing was recorded."
        )
        return render(request, PRINCIPAL_TEMPLATE, context, status=400)
    erasure = request_fleet_erasure(
        principal,
        user=request.user,
        reference=text(request.POST, "reference", max_chars=REFERENCE_CHARS) or "",
        sessions=sessions,
        hosts=len(parts),
    )
    return HttpResponseSeeOther(reverse("fleet_erasure", args=[erasure.pk]))


@require_GET
@staff_view(needs_store=False)
def fleet_erasure(request: HttpRequest, pk: int) -> HttpResponse:
    erasure = get_object_or_404(FleetErasure.objects.prefetch_related("parts__host"), pk=pk)
    if choice(request.GET, "format", ("html", "json"), default="html") == "json":
        response = JsonResponse(erasure_json(erasure), json_dumps_params={"indent": 2})
        response["Content-Disposition"] = f'inline; filename="fleet-erasure-{erasure.pk}.json"'
        return response
    return render(
        request,
        "sessions_admin/fleet_erasure.html",
        {
            "here": "fleet_erasure",
            "erasure": erasure,
            "parts": list(erasure.parts.all()),
            "principal_url": fleet_principal_url(erasure.principal),
            "json_url": f"{reverse('fleet_erasure', args=[erasure.pk])}?format=json",
        },
    )
