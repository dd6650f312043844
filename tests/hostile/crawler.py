"""Follow every link a signed-in user can reach, htmx fragments included.

Links come from ``href``, ``hx-get`` (requested again as htmx, with its
``hx-target`` as the ``HX-Target`` header) and GET forms (submitted with their
fields' current values). Only our own paths are followed; ``/logout/`` and
static files are left alone. Each URL *shape* (path plus sorted query keys) is
visited a bounded number of times so the admin's sort and filter links (and the
list's cursors) do not multiply without end, and the whole crawl is capped.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from html import unescape
from html.parser import HTMLParser
from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit

from django.test import Client

SKIP_PREFIXES = ("/logout/", "/static/", "/login/")


@dataclass(frozen=True)
class Visit:
    url: str
    htmx_target: str | None = None  # None: a plain request


class LinkParser(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.visits: list[Visit] = []
        self._form: dict | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attr = {name: value or "" for name, value in attrs}
        if "href" in attr and tag in ("a", "link") and tag != "link":
            self.visits.append(Visit(attr["href"]))
        if "hx-get" in attr:
            target = attr.get("hx-target", "")
            self.visits.append(Visit(attr["hx-get"], target.lstrip("#") or "this"))
        if tag == "form" and attr.get("method", "get").lower() == "get":
            self._form = {"action": attr.get("action", ""), "fields": []}
        elif self._form is not None and tag in ("input", "select") and attr.get("name"):
            kind = attr.get("type", "text")
            if kind not in ("checkbox", "radio", "submit") or "checked" in attr:
                self._form["fields"].append((attr["name"], attr.get("value", "")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form" and self._form is not None:
            # As a browser without JS submits it: every field, empty ones too.
            fields = self._form["fields"]
            action = self._form["action"]
            self.visits.append(Visit(action + ("?" + urlencode(fields) if fields else "")))
            self._form = None


def shape(url: str) -> str:
    """The path with its query's keys: ``/sessions/x/?after`` for any ``after``."""
    parts = urlsplit(url)
    return parts.path + "?" + ",".join(sorted({k for k, _ in parse_qsl(parts.query)}))


@dataclass
class CrawlResult:
    visited: list[tuple[Visit, int]] = field(default_factory=list)

    def failures(self) -> list[tuple[Visit, int]]:
        return [(visit, status) for visit, status in self.visited if status >= 500]


def crawl(
    client: Client,
    start: str = "/",
    *,
    per_shape: int = 3,
    limit: int = 3000,
    shape_of: Callable[[str], str] = shape,
) -> CrawlResult:
    result = CrawlResult()
    queue: deque[tuple[Visit, str]] = deque([(Visit(start), start)])
    seen: set[Visit] = set()
    shapes: dict[str, int] = {}
    while queue and len(result.visited) < limit:
        visit, base = queue.popleft()
        url = urljoin(base, unescape(visit.url))
        parts = urlsplit(url)
        if parts.scheme not in ("", "http") or parts.netloc not in ("", "testserver"):
            continue
        url = parts.path + ("?" + parts.query if parts.query else "")
        visit = Visit(url, visit.htmx_target)
        if visit in seen or url.startswith(SKIP_PREFIXES) or not url.startswith("/"):
            continue
        seen.add(visit)
        key = shape_of(url) + ("#htmx" if visit.htmx_target else "")
        if shapes.get(key, 0) >= per_shape:
            continue
        shapes[key] = shapes.get(key, 0) + 1
        headers = {}
        if visit.htmx_target is not None:
            headers = {"HX-Request": "true", "HX-Target": visit.htmx_target}
        response = client.get(url, headers=headers, follow=False)
        result.visited.append((visit, response.status_code))
        if response.status_code in (301, 302) and visit.htmx_target is None:
            queue.append((Visit(response["Location"]), url))
            continue
        content_type = response.get("Content-Type", "")
        if response.status_code != 200 or "html" not in content_type:
            continue
        body = b"".join(response.streaming_content) if response.streaming else response.content
        parser = LinkParser()
        parser.feed(body.decode("utf-8", "replace"))
        queue.extend((found, url) for found in parser.visits)
    return result
