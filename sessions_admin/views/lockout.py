"""What django-axes shows a locked-out person, and which address it counts.

Not routed: ``AXES_LOCKOUT_CALLABLE`` and ``AXES_CLIENT_IP_CALLABLE`` point
here, and axes calls them from the two login pages (``/login/`` and
``/admin/login/``) it guards.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone


def locked_out(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """The lockout page: who is locked out, and from when logging in works again.

    Each try while locked out restarts the cool-off (django-axes'
    ``AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT``), so "now + cool-off"
    is exact for the try that got this page.
    """
    cool_off = settings.AXES_COOLOFF_TIME
    username = (credentials or {}).get("username") or request.POST.get("username", "")
    context = {
        "username": username[:150],
        "failure_limit": settings.AXES_FAILURE_LIMIT,
        "until": timezone.now() + cool_off,
        "minutes": round(cool_off.total_seconds() / 60),
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(round(cool_off.total_seconds()))
    return response


def client_address(request: HttpRequest) -> str | None:
    """The client's address: ``REMOTE_ADDR``, or behind proxies the one they saw.

    With ``DJANGO_PROXY_COUNT=N`` each of the N proxies appends the address it
    was reached from to ``X-Forwarded-For``, so the Nth entry from the right is
    the client as our outermost proxy saw it; entries further left are
    whatever the client sent and are not trusted. An entry that is not an IP
    address counts as none, like a missing one: then ``REMOTE_ADDR``. Only an IP
    address or None leaves here: axes stores it in a GenericIPAddressField, an
    ``inet`` on PostgreSQL, which refuses anything else with a 500.
    """
    count = settings.CLIENT_IP_PROXY_COUNT
    if count:
        hops = [hop.strip() for hop in request.headers.get("X-Forwarded-For", "").split(",")]
        hops = [hop for hop in hops if hop]
        if len(hops) >= count and (forwarded := ip_or_none(hops[-count])):
            return forwarded
    return ip_or_none(request.META.get("REMOTE_ADDR"))


def ip_or_none(text: object) -> str | None:
    """``text`` if it is an IPv4 or IPv6 address (no port, no brackets), else None."""
    try:
        return str(ipaddress.ip_address(text)) if isinstance(text, str) else None
    except ValueError:
        return None
