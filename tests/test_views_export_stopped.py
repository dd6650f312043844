"""An export that fails after its first bytes says so in the file, in every format."""

from __future__ import annotations

import json

import pytest

from sessions_admin.store import transcript
from tests.conftest import STORE_DB


@pytest.fixture
def failing_midway(store, monkeypatch):
    sid = store.add_session("sess_cut", title="cut")
    store.add_message(sid, "user", "first")
    store.add_message(sid, "user", "second")
    reading = transcript.iter_messages

    def one_then_fail(session_id, *args, **kwargs):
        yield next(iter(reading(session_id, *args, **kwargs)))
        raise OSError("disk I/O error")

    monkeypatch.setattr(transcript, "iter_messages", one_then_fail)
    return sid


def _body(client, fmt: str) -> str:
    response = client.get(f"/sessions/sess_cut/export/?format={fmt}")
    assert response.status_code == 200  # sent before the failure: the body must say it
    return b"".join(response.streaming_content).decode()


@STORE_DB
def test_a_json_export_that_stops_is_not_valid_json_and_says_why(failing_midway, viewer_client):
    body = _body(viewer_client, "json")
    assert '"content":"first"' in body
    assert "export stopped: OSError" in body and "incomplete" in body
    with pytest.raises(json.JSONDecodeError):
        json.loads(body)


@STORE_DB
def test_a_jsonl_export_that_stops_ends_with_an_error_line(failing_midway, viewer_client):
    lines = [json.loads(line) for line in _body(viewer_client, "jsonl").splitlines()]
    assert lines[0]["content"] == "first"
    assert lines[-1] == {"export_error": "OSError while reading the store", "complete": False}


@STORE_DB
def test_a_markdown_export_that_stops_ends_with_a_sentence(failing_midway, viewer_client):
    body = _body(viewer_client, "md")
    assert "first" in body
    assert body.rstrip().endswith("This file is incomplete.**")
