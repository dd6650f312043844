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
from django.db.models import Q, QuerySet
from django.http import HttpRequest, HttpResponse, QueryDict
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from sessions_admin.access import staff_view
from sessions_admin.ids import QUERY_FORM_MARKER, fleet_principal_url, principal_url, session_url
from sessions_admin.ourdata.fleet.models import FleetHost, FleetSession, exact_key
from sessions_admin.ourdata.fleet.publish import shown
from sessions_admin.params import BadParameter, quoted, text

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
    totals: dict[int, list[int]] = {}
    for host_id, messages, failed in FleetSession.objects.filter(
        principal_key=exact_key(principal)
    ).values_list("host_id", "messages", "failed_calls"):
        entry = totals.setdefault(host_id, [0, 0, 0])
        entry[0] += 1
        entry[1] += messages
        entry[2] += failed
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


@require_GET
@staff_view(needs_store=False)
def fleet_principal(request: HttpRequest, rest: str = "") -> HttpResponse:
    principal = exact(request.GET, "id") if rest == QUERY_FORM_MARKER else rest
    if principal is None:
        raise BadParameter("id: the principal to show is missing.", name="id")
    parts = principal_parts(principal)
    return render(
        request,
        "sessions_admin/fleet_principal.html",
        {
            "here": "fleet_principal",
            "principal": principal,
            "parts": parts,
            # Not "messages": the messages framework's variable in every template.
            "total_sessions": sum(p.sessions for p in parts),
            "total_messages": sum(p.messages for p in parts),
            "total_failed": sum(p.failed_calls for p in parts),
            "page_url": fleet_principal_url(principal),
            "list_url": "/fleet/sessions/?" + urlencode({"principal": principal}),
        },
    )
