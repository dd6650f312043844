"""Every parameter of every route holding any string answers 200 or a clear 4xx.

Routes come from ``urls.py`` (:mod:`tests.hostile.routes`), so new screens are
fuzzed once merged; the query parameters each route reads are the ones found
in the links and GET forms of a short crawl of a hostile store, plus the list
below. Each value goes into each path parameter and each query parameter, and
every 400 must name the parameter it refused.
"""

from __future__ import annotations

from collections import defaultdict
from urllib.parse import parse_qsl, quote, urlencode, urlsplit

import pytest

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB
from tests.hostile.crawler import crawl
from tests.hostile.routes import route_key, routes

pytestmark = pytest.mark.slow

HOSTILE_VALUES = (
    "²",  # "²".isdigit() is true, int("²") fails
    "1" * 30,
    "-1",
    "NaN",
    "1e308",
    "a\x00b",
    "x" * 5000,
    "",
)
#: Parameters read without a link that carries them (permalinks, the id form),
#: and the admin changelist's own (search, page, order, error, popup).
EXTRA_PARAMS = (
    *("at", "after", "before", "end", "tab", "format", "raw", "key", "id", "next"),
    *("review", "note", "edit", "label"),  # the review regions of the session page
)
ADMIN_LIST_PARAMS = ("q", "p", "o", "e", "_to_field", "_popup")
SAMPLES = {
    "session_id": "hostile-frames",
    "request_id": "odd",
    "message_id": "1",
    "field": "content",
    "key": "json-deep-array",
    "audit_id": "1",
    "id": "1",
    "note_id": "1",
    "queue_id": "1",
}


def _keys(url: str) -> set[str]:
    return {key for key, _ in parse_qsl(urlsplit(url).query, keep_blank_values=True)}


def _params_by_route(client) -> dict[str, set[str]]:
    found: dict[str, set[str]] = defaultdict(set)
    seen = crawl(
        client,
        per_shape=1,
        limit=400,
        shape_of=lambda url: route_key(url) + "?" + ",".join(sorted(_keys(url))),
    )
    for visit, _status in seen.visited:
        found[route_key(visit.url)].update(_keys(visit.url))
    return found


def _check(client, url: str, failures: list, *, param: str | None, htmx: bool) -> None:
    headers = {"HX-Request": "true"} if htmx else {}
    response = client.get(url, headers=headers)
    if response.status_code >= 500:
        failures.append((response.status_code, url[:200]))
    elif response.status_code == 400 and param and not htmx:
        body = response.content.decode("utf-8", "replace")
        if param not in body:
            failures.append(("400 without naming", param, url[:200]))


@STORE_DB
def test_no_value_in_any_parameter_of_any_route_gives_a_5xx(hostile_store, hostile_admin):
    client = hostile_admin
    by_route = _params_by_route(client)
    failures: list = []
    requests = 0
    counts = {}
    for route in routes(SAMPLES):
        base = route.template.format(**route.samples)
        extra = set(EXTRA_PARAMS) if route.key.startswith("session:") else set()
        if route.key.startswith("admin/") and route.key.count("/") == 3:  # a changelist
            extra = set(ADMIN_LIST_PARAMS)
        names = sorted(by_route.get(route.key, set()) | extra)
        counts[route.key] = len(names)
        for index, value in enumerate(HOSTILE_VALUES):
            htmx = index % 2 == 1
            for hole in route.samples:
                url = route.template.format(**{**route.samples, hole: quote(value, safe="")})
                _check(client, url, failures, param=None, htmx=htmx)
                requests += 1
            for name in names:
                _check(
                    client, f"{base}?{urlencode({name: value})}", failures, param=name, htmx=htmx
                )
                requests += 1
        for name in names:  # the same name twice: the last one counts
            repeated = urlencode([(name, "1"), (name, "²")])
            _check(client, f"{base}?{repeated}", failures, param=name, htmx=False)
            requests += 1
    print(f"{requests} fuzzed requests")
    assert requests > 1000
    assert failures == []


@STORE_DB
def test_a_number_too_big_for_sqlite_in_a_route_never_reaches_the_store(
    hostile_store, hostile_admin
):
    session = session_url("hostile-messages")
    for url in (
        f"{session}messages/{'9' * 19}/content/",
        f"{session}messages/-{'9' * 19}/content/",
    ):
        assert hostile_admin.get(url).status_code == 404
    # <id64:…> does not match 30 digits: the admin's catch-all takes the URL and
    # answers "no such object" (a redirect to the index), never an overflow.
    response = hostile_admin.get(
        f"/admin/sessions_admin/session/clear-all/{'9' * 30}/", follow=True
    )
    assert response.status_code == 200
    assert response.redirect_chain


@STORE_DB
def test_a_unicode_digit_cursor_names_the_parameter(hostile_store, hostile_admin):
    response = hostile_admin.get(session_url("hostile-messages", after="²"))
    assert response.status_code == 400
    assert "after must be a message id" in response.content.decode()
    banner = hostile_admin.get(
        session_url("hostile-messages", after="²"), headers={"HX-Request": "true"}
    )
    assert banner.status_code == 400 and banner["HX-Retarget"] == "#flash"


@STORE_DB
def test_the_admin_refuses_a_year_no_date_has(hostile_store, hostile_admin):
    response = hostile_admin.get("/admin/sessions_admin/deletionaudit/?started_at__year=99999")
    assert response.status_code == 400
    assert "started_at__year must be a whole number from 1 to 9,999" in response.content.decode()
    feb = "/admin/sessions_admin/deletionaudit/?started_at__year=2026&started_at__month=2"
    assert hostile_admin.get(feb + "&started_at__day=30").status_code == 400


@STORE_DB
def test_the_admin_message_search_takes_a_unicode_digit_as_a_session_id(
    hostile_store, hostile_admin
):
    response = hostile_admin.get("/admin/sessions_admin/message/?q=²")
    assert response.status_code == 200
