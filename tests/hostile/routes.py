"""Every URL the dashboard routes, read from ``urls.py`` (admin and session subpages
included), each with sample values for its path parameters.

New screens are covered once their patterns are merged: nothing here lists views.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote, urlsplit

from django.apps import apps
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.exceptions import Resolver404

from sessions_admin.ids import split_session_path
from sessions_admin.views.routing import SessionPages

#: Routes left alone: leaving would end the test user's login, and the stock
#: ``auth`` admin reads nothing of the store (its forms are Django's own).
SKIPPED_NAMES = {"logout"}
SKIPPED_PREFIXES = ("admin/auth/", "admin/r/")
_GROUP = re.compile(r"\(\?P<(\w+)>[^)]*\)|<(?:(\w+):)?(\w+)>")


@dataclass(frozen=True)
class Route:
    key: str  # a name for the route: its pattern, or "session:<subpage>"
    template: str  # with {name} holes for the path parameters
    samples: dict[str, str]  # a value for each hole that leads to a real object


def _walk(patterns: list, prefix: str = "") -> Iterator[tuple[str, URLPattern]]:
    for pattern in patterns:
        if isinstance(pattern, URLResolver):
            yield from _walk(pattern.url_patterns, prefix + str(pattern.pattern))
        elif isinstance(pattern, URLPattern):
            yield prefix + str(pattern.pattern), pattern


def _template(route: str) -> tuple[str, list[str]]:
    """``admin/x/<path:object_id>/`` → ``/admin/x/{object_id}/`` and its hole names."""
    names: list[str] = []

    def hole(match: re.Match) -> str:
        name = match.group(1) or match.group(3)
        names.append(name)
        return "{" + name + "}"

    text = _GROUP.sub(hole, route).replace("^", "").replace("$", "")
    if any(c in text for c in "()[]*+?\\"):
        return "", []  # a catch-all regex: nothing to fill in
    return "/" + text, names


def _admin_samples(route: str, defaults: dict[str, str]) -> dict[str, str]:
    for model in apps.get_models():
        meta = model._meta
        if route.startswith(f"admin/{meta.app_label}/{meta.model_name}/"):
            first = model._default_manager.order_by("pk").first()
            if first is not None:
                return {**defaults, "object_id": quote(str(first.pk), safe="")}
    return defaults


def routes(samples: dict[str, str]) -> list[Route]:
    """Every route, a table of session pages (``SessionPages``) expanded into its pages."""
    found: list[Route] = []
    for route, pattern in _walk(get_resolver().url_patterns):
        if pattern.name in SKIPPED_NAMES or route.startswith(SKIPPED_PREFIXES):
            continue
        template, holes = _template(route)
        if not template:
            continue
        pages = pattern.default_args.get("pages")
        if isinstance(pages, SessionPages):
            found.extend(_session_routes(pages, samples))
            continue
        values = _admin_samples(route, samples) if route.startswith("admin/") else samples
        found.append(Route(route, template, {hole: values.get(hole, "1") for hole in holes}))
    return found


def _session_routes(pages: SessionPages, samples: dict[str, str]) -> list[Route]:
    found = []
    for page in pages:
        template, holes = _template(page.pattern)
        template = "/sessions/{session_id}" + (template + "/" if page.pattern else "/")
        values = {"session_id": samples["session_id"], **{h: samples[h] for h in holes}}
        found.append(Route(f"session:{page.name}", template, values))
    return found


def route_key(url: str) -> str:
    """Which route a URL takes (the session page's name for ``/sessions/…``)."""
    path = urlsplit(url).path
    try:
        match = resolve(path)
    except Resolver404:
        return "unrouted"
    pages = match.kwargs.get("pages")
    if isinstance(pages, SessionPages):
        readings = split_session_path(match.kwargs["rest"].rstrip("/"), None, pages.subpages)
        return f"session:{readings[-1].page}"
    return match.route
