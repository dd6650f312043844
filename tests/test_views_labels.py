"""Labels: put on and taken off a session, the list's ?label= filter (keyset pages;
the copies they are read from: test_views_labelled_copies), and each row's labels,
notes and verdict."""

from __future__ import annotations

import re

import pytest

from sessions_admin.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from sessions_admin.store import queries
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS

SID = "sess_0001"


def fill(store, count: int) -> None:
    """Sessions on two targets, with created and last-active times and turn counts that tie."""
    for number in range(count):
        created = BASE_MS + (number * 7 % 40) * 60_000
        store.add_session(
            f"sess_{number:04d}",
            target=("ops.pager", "infra.deployer")[number % 2],
            turn_count=(None, 0, 2)[number % 3],
            created_at=created,
            last_active=created + (number % 3) * 60_000,
        )


@pytest.fixture
def labelled(store):
    fill(store, count=160)  # 54 labelled: more than a page
    regression = Label.objects.create(name="regression", color="#b91c1c", description="broke")
    Label.objects.create(name="fine")
    for number in range(0, 160, 3):
        SessionLabel.objects.create(session_id=f"sess_{number:04d}", label=regression)
    return regression


def listed(body: str) -> list[str]:
    return re.findall(r'data-session-id="([^"]+)"', body)


@STORE_DB
def test_a_label_is_put_on_and_taken_off(labelled, annotator_client):
    url = f"/sessions/{SID}/labels/"
    response = annotator_client.post(url, {"label": "fine", "action": "add"})
    assert response.status_code == 303 and response["Location"].endswith("#labels")
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert re.search(r'class="label-chip label-\d+"[^>]*>fine<', page)
    annotator_client.post(url, {"label": "fine", "action": "add"})  # twice is once
    assert SessionLabel.objects.filter(session_id=SID, label__name="fine").count() == 1
    fragment = annotator_client.post(
        url, {"label": "fine", "action": "remove"}, headers={"HX-Request": "true"}
    )
    assert fragment.content.decode().lstrip().startswith('<div id="labels"')
    assert not SessionLabel.objects.filter(session_id=SID, label__name="fine").exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"label": "nope"}, "label"),
        ({}, "label"),
        ({"label": "fine", "action": "toggle"}, "action"),
    ],
)
@STORE_DB
def test_bad_label_input_is_a_400_naming_the_field(labelled, annotator_client, data, field):
    response = annotator_client.post(f"/sessions/{SID}/labels/", data)
    assert response.status_code == 400 and response.content.decode().count(f"{field}") >= 1
    assert f"{field} " in response.content.decode() or f"{field}:" in response.content.decode()


@STORE_DB
def test_the_list_filters_by_label_over_every_page(labelled, viewer_client):
    url, seen = "/sessions/?label=regression", []
    while url:
        body = viewer_client.get(url).content.decode()
        seen += listed(body)
        more = re.search(r'<a class="button" href="(\?[^"]+)"[^>]*>Load more', body)
        url = "/sessions/" + more.group(1).replace("&amp;", "&") if more else ""
    expected = {f"sess_{n:04d}" for n in range(0, 160, 3)}
    assert len(seen) > queries.PAGE_SIZE
    assert len(seen) == len(expected) and set(seen) == expected


@STORE_DB
def test_an_unknown_label_in_the_list_is_a_400_naming_it(labelled, viewer_client):
    response = viewer_client.get("/sessions/?label=nope")
    assert response.status_code == 400 and "label" in response.content.decode()


@STORE_DB
def test_a_label_with_no_sessions_says_nothing_matches(labelled, viewer_client):
    body = viewer_client.get("/sessions/?label=fine").content.decode()
    assert listed(body) == [] and "No sessions match these filters" in body


@STORE_DB
def test_each_row_shows_its_labels_notes_and_verdict(labelled, viewer_client):
    Note.objects.create(session_id="sess_0003", text="n", author_name="a")
    queue = ReviewQueue.objects.create(name="q", source="/sessions/")
    ReviewItem.objects.create(queue=queue, session_id="sess_0006", position=0, verdict="fail")
    SessionLabel.objects.create(
        session_id="sess_0009", label=labelled, store_name="other-host"
    )  # another store's label on a session id this store also has
    body = viewer_client.get("/sessions/?q=sess_000").content.decode()
    rows = {sid: row for sid, row in re.findall(r'data-session-id="([^"]+)"(.*?)</tr>', body)}
    assert ">regression<" in rows["sess_0000"] and ">regression<" not in rows["sess_0001"]
    assert "has notes" in rows["sess_0003"] and "has notes" not in rows["sess_0000"]
    assert "verdict-fail" in rows["sess_0006"]
    assert rows["sess_0009"].count(">regression<") == 1
    assert f".label-{labelled.pk}{{background:#b91c1c}}" in body


@STORE_DB
def test_a_row_shows_its_newest_verdict_beside_its_labels_and_notes(labelled, viewer_client):
    from datetime import UTC, datetime

    first = "sess_0000"

    older, newer = (ReviewQueue.objects.create(name=n, source="/sessions/") for n in "ab")
    # Written newest first: the order of writing must not decide, the review time does.
    for queue, verdict, day in ((newer, "pass", 2), (older, "fail", 1)):
        reviewed_at = datetime(2026, 11, day, tzinfo=UTC)
        ReviewItem.objects.create(
            queue=queue, session_id=first, position=0, verdict=verdict, reviewed_at=reviewed_at
        )
    ReviewItem.objects.create(queue=older, session_id="sess_0001", position=1)  # no verdict yet
    Note.objects.create(session_id="sess_0000", text="n", author_name="a")
    Note.objects.create(session_id="sess_0000", text="m", author_name="b")
    body = viewer_client.get("/sessions/?q=sess_000").content.decode()
    rows = {sid: row for sid, row in re.findall(r'data-session-id="([^"]+)"(.*?)</tr>', body)}
    assert ">regression<" in rows["sess_0000"] and rows["sess_0000"].count("has notes") == 1
    assert "verdict-pass" in rows["sess_0000"] and "verdict-fail" not in rows["sess_0000"]
    assert "verdict-" not in rows["sess_0001"] and "has notes" not in rows["sess_0001"]


@STORE_DB
def test_a_new_label_is_made_on_the_session_page_from_the_palette(labelled, annotator_client):
    url = f"/sessions/{SID}/labels/"
    page = annotator_client.get(f"/sessions/{SID}/").content.decode()
    assert "New label…" in page and 'name="colour" value="teal"' in page
    response = annotator_client.post(
        url, {"action": "create", "name": "needs-followup", "colour": "teal"}
    )
    assert response.status_code == 303
    made = Label.objects.get(name="needs-followup")
    assert made.color == "#0f766e"
    assert SessionLabel.objects.filter(session_id=SID, label=made).exists()
    again = annotator_client.post(url, {"action": "create", "name": "needs-followup"})
    assert again.status_code == 303 and Label.objects.filter(name="needs-followup").count() == 1
    for data, field in (
        ({"action": "create", "name": "two words"}, "name"),
        ({"action": "create"}, "name"),
        ({"action": "create", "name": "x", "colour": "#ff0000"}, "colour"),
    ):
        refused = annotator_client.post(url, data)
        assert refused.status_code == 400 and f"{field}" in refused.content.decode(), data
    assert not Label.objects.filter(name="two words").exists()


@STORE_DB
def test_making_a_label_needs_the_annotate_permission(labelled, viewer_client):
    response = viewer_client.post(
        f"/sessions/{SID}/labels/", {"action": "create", "name": "sneaky"}
    )
    assert response.status_code == 403 and not Label.objects.filter(name="sneaky").exists()
