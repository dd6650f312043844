"""What reviewers wrote shows where it matters: the session exports (JSON, JSONL,
Markdown) carry notes, labels and verdicts; search marks and filters by label;
the overview lists open queues with their progress."""

from __future__ import annotations

import json
import re

import pytest

from sessions_admin.models import Label, Note, ReviewItem, ReviewQueue, SessionLabel
from sessions_admin.ourdata import sync
from tests.conftest import STORE_DB

SID = "sess_demo"


@pytest.fixture
def reviewed(conversation):
    """The conversation fixture's session with a label, a note on a message and a verdict."""
    label = Label.objects.create(name="regression")
    SessionLabel.objects.create(session_id=SID, label=label)
    Note.objects.create(
        session_id=SID, message_id=2, text="# not a heading\n```\nfenced", author_name="ann"
    )
    queue = ReviewQueue.objects.create(name="incident", source="/sessions/", total=2)
    ReviewItem.objects.create(
        queue=queue, session_id=SID, position=0, verdict="fail", text="rolled back too late"
    )
    ReviewItem.objects.create(queue=queue, session_id="sess_other", position=1)
    return queue


def body(response) -> str:
    return b"".join(response.streaming_content).decode()


@STORE_DB
def test_the_json_export_carries_labels_notes_and_verdicts(reviewed, viewer_client):
    data = json.loads(body(viewer_client.get(f"/sessions/{SID}/export/?format=json")))
    review = data["review"]
    assert review["labels"] == ["regression"]
    assert review["notes"][0]["message_id"] == 2 and review["notes"][0]["author"] == "ann"
    assert review["verdicts"][0]["verdict"] == "fail"
    assert review["verdicts"][0]["queue"] == "incident"


@STORE_DB
def test_the_jsonl_export_ends_with_a_review_line(reviewed, viewer_client):
    lines = body(viewer_client.get(f"/sessions/{SID}/export/?format=jsonl")).splitlines()
    assert json.loads(lines[-1])["review"]["labels"] == ["regression"]
    assert all("review" not in json.loads(line) for line in lines[:-1])


@STORE_DB
def test_the_markdown_export_has_a_review_section_that_escapes_the_notes(reviewed, viewer_client):
    text = body(viewer_client.get(f"/sessions/{SID}/export/?format=md"))
    section = text.split("## Review\n", 1)[1]
    assert "verdict **fail**" in section and "`regression`" in section
    assert "\n````\n# not a heading\n```\nfenced\n````\n" in section  # fenced, never markup


@STORE_DB
def test_an_unreviewed_sessions_exports_say_so_plainly(conversation, viewer_client):
    data = json.loads(body(viewer_client.get(f"/sessions/{SID}/export/?format=json")))
    assert data["review"] == {"labels": [], "notes": [], "verdicts": []}
    assert "## Review" not in body(viewer_client.get(f"/sessions/{SID}/export/?format=md"))


@STORE_DB
def test_search_marks_sessions_and_filters_by_label(reviewed, store, var_dir, viewer_client):
    other = store.add_session("sess_plain")
    store.add_message(other, "user", "Roll back the billing please")
    sync.sync_once()
    page = viewer_client.get("/search/?q=billing").content.decode()
    assert "sess_plain" in page and ">regression<" in page and "verdict-fail" in page
    filtered = viewer_client.get("/search/?q=billing&label=regression").content.decode()
    assert SID in filtered and "sess_plain" not in filtered
    assert viewer_client.get("/search/?q=billing&label=nope").status_code == 400


@STORE_DB
def test_the_overview_lists_open_queues_with_their_progress(reviewed, viewer_client):
    page = viewer_client.get("/").content.decode()
    assert "Open review queues" in page and "1 of 2 reviewed" in page
    ReviewItem.objects.filter(session_id="sess_other").update(verdict="pass")
    assert "Open review queues" not in viewer_client.get("/").content.decode()


def searched(client, url: str) -> list[list[str]]:
    """Each page's session ids, following the next-page link to the end."""
    pages = []
    while url:
        body = client.get(url).content.decode()
        pages.append(list(dict.fromkeys(re.findall(r'href="/sessions/(sess_[a-z0-9_]+)/"', body))))
        more = re.search(r'href="(\?[^"]*before=\d+[^"]*)"', body)
        url = "/search/" + more.group(1).replace("&amp;", "&") if more else ""
    return pages


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "scan"])
@STORE_DB
def test_search_by_label_reads_on_until_its_page_is_full(store, var_dir, viewer_client, indexed):
    label = Label.objects.create(name="regression")
    labelled = []
    for number in range(25):  # older hits, labelled
        sid = store.add_session(f"sess_old{number:02d}")
        store.add_message(sid, "user", "the billing run failed")
        SessionLabel.objects.create(session_id=sid, label=label)
        labelled.append(sid)
    for number in range(30):  # newer hits, more than a page, unlabelled
        store.add_message(store.add_session(f"sess_new{number:02d}"), "user", "billing again")
    if indexed:
        sync.sync_once()
    pages = searched(viewer_client, "/search/?q=billing&label=regression")
    assert [len(page) for page in pages] == [20, 5]
    assert [sid for page in pages for sid in page] == labelled[::-1]  # newest hit first
