"""Review queues through their pages: made from a source URL, walked with next and
verdicts, progress, the review bar, the export; bad input is a 400 naming the field."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

from sessions_admin.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from sessions_admin.views import review_sources
from tests.conftest import STORE_DB
from tests.storebuilder import BASE_MS


@pytest.fixture
def sessions(store):
    ids = []
    for number in range(8):
        ids.append(
            store.add_session(
                f"sess_{number}",
                target=("ops.pager", "infra.deployer")[number % 2],
                principal="user:alice" if number < 3 else "user:bob",
                last_active=BASE_MS + number * 60_000,
            )
        )
    return ids


def make(client, source: str, name: str = "morning") -> ReviewQueue:
    response = client.post("/reviews/", {"name": name, "source": source})
    assert response.status_code == 303, response.content[:300]
    queue = ReviewQueue.objects.get(name=name)
    assert response["Location"] == f"/reviews/{queue.pk}/"
    return queue


def order(queue: ReviewQueue) -> list[str]:
    return list(queue.items.order_by("position").values_list("session_id", flat=True))


@STORE_DB
def test_a_queue_holds_the_sessions_its_source_lists_in_its_order(sessions, annotator_client):
    queue = make(annotator_client, "/sessions/?target=ops.pager")
    assert order(queue) == ["sess_6", "sess_4", "sess_2", "sess_0"]  # newest first, as listed
    page = annotator_client.get(f"/reviews/{queue.pk}/").content.decode()
    assert "0 of 4 reviewed" in page and 'href="/sessions/?target=ops.pager"' in page
    assert "morning" in annotator_client.get("/reviews/").content.decode()


@STORE_DB
def test_a_queues_items_show_each_sessions_title_and_target(store, annotator_client):
    store.add_session("sess_a", title="Refund <b>INV-1</b>", target="billing.ledger")
    store.add_session("sess_b", title=b"\xff\xfe", target="ops.pager")  # a BLOB title
    store.add_session("sess_c", title=None)
    queue = make(annotator_client, "/sessions/")
    store.execute("DELETE FROM sessions WHERE id = 'sess_c'")  # gone before a sync
    page = annotator_client.get(f"/reviews/{queue.pk}/").content.decode()
    assert "“Refund &lt;b&gt;INV-1&lt;/b&gt;”" in page and "billing.ledger · default" in page
    assert "binary value, 2 bytes" in page and "ops.pager · default" in page
    assert "(not in the store now)" in page


@STORE_DB
def test_sources_with_a_label_a_principal_or_a_full_url(sessions, annotator_client):
    label = Label.objects.create(name="regression")
    for sid in ("sess_1", "sess_5"):
        SessionLabel.objects.create(session_id=sid, label=label)
    assert order(make(annotator_client, "/sessions/?label=regression", "a")) == [
        "sess_5",
        "sess_1",
    ]
    assert order(make(annotator_client, "/principals/user%3Aalice/", "b")) == [
        "sess_2",
        "sess_1",
        "sess_0",
    ]
    assert len(order(make(annotator_client, "http://testserver/sessions/?sort=", "c"))) == 8


@STORE_DB
def test_a_source_longer_than_the_cap_is_cut_saying_so(sessions, annotator_client, monkeypatch):
    monkeypatch.setattr(review_sources, "QUEUE_MAX_ITEMS", 5)
    queue = make(annotator_client, "/sessions/")
    assert queue.capped and queue.total == 5 and len(order(queue)) == 5
    page = annotator_client.get(f"/reviews/{queue.pk}/").content.decode()
    assert "listed more than 5 sessions" in page


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"name": "", "source": "/sessions/"}, "name"),
        ({"name": "q", "source": ""}, "source"),
        ({"name": "q", "source": "/frames/orphans/"}, "source"),
        ({"name": "q", "source": "https://elsewhere.example/sessions/"}, "source"),
        ({"name": "q", "source": "javascript:alert(1)"}, "source"),
        ({"name": "q", "source": "/sessions/?label=nope"}, "label"),
        ({"name": "q", "source": "/sessions/?active=forever"}, "active"),
    ],
)
@STORE_DB
def test_a_bad_queue_is_a_400_naming_the_field(sessions, annotator_client, data, field):
    response = annotator_client.post("/reviews/", data)
    assert response.status_code == 400
    assert re.search(rf"\b{field}\b", response.content.decode())
    assert not ReviewQueue.objects.exists()


@STORE_DB
def test_next_and_verdicts_walk_the_queue_to_its_end(sessions, annotator_client):
    queue = make(annotator_client, "/sessions/?principal=user:alice")
    response = annotator_client.post(f"/reviews/{queue.pk}/next/")
    assert response["Location"] == f"/sessions/sess_2/?review={queue.pk}"
    bar = annotator_client.get(response["Location"]).content.decode()
    assert 'id="review-bar"' in bar and "0 of 3 reviewed" in bar
    assert 'name="verdict" value="fail"' in bar
    seen = ["sess_2"]
    for verdict in ("pass", "fail"):
        response = annotator_client.post(
            f"/reviews/{queue.pk}/verdict/",
            {"session": seen[-1], "verdict": verdict, "text": "why", "then": "next"},
        )
        seen.append(re.match(r"/sessions/([^/]+)/", response["Location"]).group(1))
    response = annotator_client.post(
        f"/reviews/{queue.pk}/verdict/", {"session": seen[-1], "verdict": "skip", "then": "next"}
    )
    assert response["Location"] == f"/reviews/{queue.pk}/?done=1"
    assert seen == ["sess_2", "sess_1", "sess_0"]
    page = annotator_client.get(response["Location"]).content.decode()
    assert "3 of 3 reviewed" in page and "This queue is done" in page
    assert "pass 1" in page and "fail 1" in page and "skip 1" in page
    item = ReviewItem.objects.get(queue=queue, session_id="sess_2")
    assert (item.verdict, item.text, item.reviewer.username) == ("pass", "why", "annotator")


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"session": "sess_7", "verdict": "pass"}, "session"),
        ({"session": "", "verdict": "pass"}, "session"),
        ({"session": "sess_0", "verdict": "maybe"}, "verdict"),
        ({"session": "sess_0"}, "verdict"),
        ({"session": "sess_0", "verdict": "pass", "text": "x" * 10_001}, "text"),
    ],
)
@STORE_DB
def test_a_bad_verdict_is_a_400_naming_the_field(sessions, annotator_client, data, field):
    queue = make(annotator_client, "/sessions/?principal=user:alice")
    response = annotator_client.post(f"/reviews/{queue.pk}/verdict/", data)
    assert response.status_code == 400 and re.search(rf"\b{field}\b", response.content.decode())
    assert not ReviewItem.objects.exclude(verdict="").exists()


@STORE_DB
def test_the_session_page_refuses_an_unknown_queue_and_hides_another_stores(
    sessions, annotator_client
):
    assert annotator_client.get("/sessions/sess_0/?review=999").status_code == 400
    other = ReviewQueue.objects.create(name="far", source="/sessions/", store_name="other-host")
    assert annotator_client.get(f"/reviews/{other.pk}/").status_code == 404
    assert annotator_client.post(f"/reviews/{other.pk}/next/").status_code == 404
    assert "far" not in annotator_client.get("/reviews/").content.decode()
    assert annotator_client.get("/reviews/99999999999999999999999/").status_code == 404


@STORE_DB
def test_the_export_has_each_item_with_verdict_notes_and_labels(sessions, annotator_client):
    queue = make(annotator_client, "/sessions/?principal=user:alice")
    annotator_client.post(f"/reviews/{queue.pk}/next/")
    annotator_client.post(
        f"/reviews/{queue.pk}/verdict/",
        {"session": "sess_2", "verdict": "fail", "text": "=HYPERLINK(1)"},
    )
    Note.objects.create(session_id="sess_2", message_id=4, text="line\nbreak", author_name="a")
    SessionLabel.objects.create(session_id="sess_2", label=Label.objects.create(name="bad"))
    response = annotator_client.get(f"/reviews/{queue.pk}/export/?format=csv")
    rows = list(csv.DictReader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert [row["session_id"] for row in rows] == ["sess_2", "sess_1", "sess_0"]
    first = rows[0]
    assert (first["verdict"], first["reviewer"], first["verdict_text"]) == (
        "fail",
        "annotator",
        "'=HYPERLINK(1)",
    )
    assert first["labels"] == "bad" and first["position"] == "1"
    assert [row["position"] for row in rows] == ["1", "2", "3"]
    assert first["notes"].startswith("a, ") and first["notes"].endswith(
        " on message 4: line\nbreak"
    )
    assert (first["title"], first["target"], first["principal"]) == (
        "a session",
        "ops.pager",
        "user:alice",
    )
    assert first["link"] == "http://testserver/sessions/sess_2/"
    assert first["session_deleted"] == first["by_manager"] == "false"
    response = annotator_client.get(f"/reviews/{queue.pk}/export/?format=jsonl")
    lines = [json.loads(line) for line in b"".join(response.streaming_content).splitlines()]
    assert lines[0]["notes"][0]["message_id"] == 4 and lines[1]["verdict"] == ""
    assert lines[0]["position"] == 1 and lines[0]["labels"] == ["bad"]
    bad = annotator_client.get(f"/reviews/{queue.pk}/export/?format=xml")
    assert bad.status_code == 400 and "format" in bad.content.decode()


@STORE_DB
def test_tool_and_search_sources_list_the_sessions_of_their_rows(synced, annotator_client):
    tool, session_id = synced.execute(
        "SELECT tool_name, session_id FROM session_messages WHERE tool_name IS NOT NULL "
        "AND role = 'assistant' ORDER BY id LIMIT 1"
    )[0]
    queue = make(annotator_client, f"/tools/{tool}/", "tool")
    with_calls = {
        row[0]
        for row in synced.execute(
            "SELECT DISTINCT session_id FROM session_messages WHERE tool_name = ?", (tool,)
        )
    }
    assert session_id in order(queue) and set(order(queue)) <= with_calls
    word = synced.execute("SELECT content FROM session_messages WHERE role = 'user' LIMIT 1")[0][0]
    queue = make(annotator_client, f"/search/?q={word.split()[0]}", "search")
    assert order(queue) and len(order(queue)) == len(set(order(queue)))
    label = Label.objects.create(name="picked")
    SessionLabel.objects.create(session_id=order(queue)[-1], label=label)
    labelled = make(annotator_client, f"/search/?q={word.split()[0]}&label=picked", "labelled")
    assert order(labelled) == order(queue)[-1:]


@STORE_DB
def test_next_passes_over_a_session_the_runtime_deleted_marking_it(
    sessions, store, annotator_client
):
    queue = make(annotator_client, "/sessions/?principal=user:alice")
    store.execute("DELETE FROM sessions WHERE id = ?", ("sess_2",))  # the runtime's delete
    response = annotator_client.post(f"/reviews/{queue.pk}/next/")
    assert response["Location"] == f"/sessions/sess_1/?review={queue.pk}"
    assert ReviewItem.objects.get(queue=queue, session_id="sess_2").session_deleted


@STORE_DB
def test_the_list_offers_a_queue_of_what_it_shows(sessions, annotator_client, viewer_client):
    page = annotator_client.get("/sessions/?target=ops.pager").content.decode()
    assert 'href="/reviews/?source=/sessions/%3Ftarget%3Dops.pager"' in page
    form = annotator_client.get("/reviews/?source=/sessions/%3Ftarget%3Dops.pager").content
    assert b'value="/sessions/?target=ops.pager"' in form
    assert b"Review these" not in viewer_client.get("/sessions/").content
