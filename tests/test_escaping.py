"""Nothing from the store ever runs in the browser: markup in every column, on every page."""

import json

import pytest
from django.urls import reverse

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB

PAYLOADS = ['<script>alert("s")</script>', '"><img src=x onerror=alert(1)>', "'><svg onload=x>"]
EVIL = " ".join(PAYLOADS)


def evil_store(store) -> tuple[str, int]:
    session_id = store.add_session(
        "sess_" + EVIL, target=EVIL, profile=EVIL, principal=EVIL, title=EVIL, turn_count=1
    )
    store.add_message(session_id, "user", EVIL, trace_id=EVIL, span_id=EVIL, model_id=EVIL)
    store.add_message(session_id, EVIL, EVIL)  # an unknown role
    message_id = store.add_message(
        session_id,
        "tool",
        EVIL,
        tool_name=EVIL,
        tool_call_id=EVIL,
        tool_target=EVIL,
        tool_op=EVIL,
        tool_args={EVIL: EVIL, "nested": [EVIL]},
        tool_result=EVIL,
        tool_duration_ms=5000,
        trace_id=EVIL,
        span_id=EVIL,
        model_id=EVIL,
    )
    store.add_state(session_id, "snapshot", {EVIL: [EVIL, {"k": EVIL}]})
    store.add_state(session_id, EVIL, EVIL)
    frames = store.frames_root / session_id.replace("/", "_")
    frames.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"ts": 1_764_000_000_000, "kind": EVIL, "traceId": EVIL, "name": EVIL}),
        EVIL,
    ]
    (frames / "activity-req1.jsonl").write_text("\n".join(lines) + "\n")
    orphan = store.frames_root / "orphan-dir"
    orphan.mkdir()
    (orphan / "activity-x.jsonl").write_text(json.dumps({"kind": EVIL}) + "\n")
    return session_id, message_id


def assert_escaped(response) -> None:
    assert response.status_code == 200, response.status_code
    body = response.content.decode()
    for payload in PAYLOADS:
        assert payload not in body


@STORE_DB
def test_markup_from_the_store_is_escaped_on_every_dashboard_page(store, admin_client):
    session_id, message_id = evil_store(store)
    frames_id = session_id.replace("/", "_")
    urls = [
        "/sessions/",
        "/sessions/?q=sess_",
        "/targets/",
        session_url(session_id),
        session_url(session_id, tab="state"),
        session_url(session_id, "stats"),
        session_url(session_id, f"messages/{message_id}/tool_args"),
        session_url(session_id, f"messages/{message_id}/content"),
        session_url(session_id, "delete"),
        reverse("frames_orphans"),
    ]
    if frames_id == session_id:
        urls += [session_url(session_id, "frames"), session_url(session_id, "frames/req1")]
    for url in urls:
        assert_escaped(admin_client.get(url))


@STORE_DB
def test_markup_from_the_store_is_escaped_in_the_admin(store, admin_client):
    session_id, _ = evil_store(store)
    changelist = admin_client.get(reverse("admin:sessions_admin_session_changelist"))
    assert_escaped(changelist)
    assert_escaped(admin_client.get(reverse("admin:sessions_admin_message_changelist")))
    change = reverse("admin:sessions_admin_session_change", args=[session_id])
    assert_escaped(admin_client.get(change))


@pytest.mark.parametrize(
    "fmt, content_type",
    [
        ("json", "application/json"),
        ("jsonl", "application/x-ndjson"),
        ("md", "text/markdown"),
    ],
)
@STORE_DB
def test_exports_are_downloads_never_html(store, admin_client, fmt, content_type):
    session_id, _ = evil_store(store)
    response = admin_client.get(session_url(session_id, "export", format=fmt))
    assert response.status_code == 200
    assert response["Content-Type"].startswith(content_type)
    assert response["Content-Disposition"].startswith("attachment")
    assert response["X-Content-Type-Options"] == "nosniff"


@STORE_DB
def test_markup_in_frame_files_and_in_a_session_id_is_escaped_on_the_frames_pages(
    store, admin_client
):
    session_id = store.add_session(PAYLOADS[1], title=EVIL)
    frames = store.frames_root / session_id
    frames.mkdir()
    lines = [
        json.dumps(
            {"ts": 1_764_000_000_000, "kind": EVIL, "traceId": EVIL, "name": EVIL, "durationMs": 5}
        ),
        EVIL,
        json.dumps([EVIL]),
    ]
    (frames / "activity-req1.jsonl").write_text("\n".join(lines) + "\n" + EVIL)
    for url in [
        session_url(session_id, "frames"),
        session_url(session_id, "frames/req1"),
        session_url(session_id, "frames/req1", kind=EVIL, q="x"),
        session_url(session_id, "frames", trace=EVIL),
    ]:
        assert_escaped(admin_client.get(url))
