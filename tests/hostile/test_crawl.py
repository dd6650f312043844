"""A staff user follows every link from ``/`` on a hostile store: no 5xx anywhere.

The store holds every planted case of :mod:`sessions_admin.demo.hostile`
(odd storage classes in every column, deep and huge JSON, odd frame files and
names). Links, ``hx-get`` fragments (as htmx, with their target) and GET forms
are followed (:mod:`tests.hostile.crawler`), so screens added later are crawled
as soon as something links to them.
"""

from __future__ import annotations

import pytest

from tests.conftest import STORE_DB
from tests.hostile.crawler import crawl
from tests.hostile.routes import route_key


@pytest.mark.slow
@STORE_DB
def test_no_page_a_staff_user_can_reach_answers_a_5xx(hostile_store, hostile_admin):
    result = crawl(hostile_admin)
    print(f"{len(result.visited)} pages crawled")
    assert result.failures() == []
    reached = {route_key(visit.url) for visit, _ in result.visited}
    # The crawl got everywhere the issue names, through links alone.
    for route in (
        "sessions/",
        "targets/",
        "frames/orphans/",
        "session:",
        "session:state",
        "session:stats",
        "session:export",
        "session:delete",
        "session:frames",
        "session:frames_request",
        "session:message_value",
        "session:state_value",
        "admin/sessions_admin/session/",
        "admin/sessions_admin/message/",
        "admin/sessions_admin/session/<path:object_id>/change/",
        "admin/sessions_admin/message/<path:object_id>/change/",
    ):
        assert route in reached, route
    assert any(visit.htmx_target for visit, _ in result.visited)
    assert len(result.visited) > 500


@STORE_DB
def test_odd_values_are_shown_as_what_they_are(hostile_store, hostile_admin):
    page = hostile_admin.get("/sessions/").content.decode()
    assert "not a number: &#x27;many&#x27;" in page
    assert "binary value, 12 bytes" in page
    assert "time out of range (99999999999999999)" in page
    session = hostile_admin.get("/sessions/hostile-messages/").content.decode()
    assert "binary value, 12 bytes" in session
    header = hostile_admin.get("/sessions/hostile-text-not-number/").content.decode()
    assert '<span class="odd">not a number: &#x27;many&#x27;</span> turn' in header
    orphans = hostile_admin.get("/frames/orphans/").content.decode()
    assert "orphan-\\xff\\xfe" in orphans and "not valid UTF-8" in orphans
