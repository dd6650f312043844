"""Store models read the runtime's rows and never write them back."""

import pytest

from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.models import Message, Session, SessionState, StoreIsReadOnly
from tests.conftest import STORE_DB


@STORE_DB
def test_the_models_read_every_column_of_the_three_tables(store):
    sid = store.add_session("s1", principal=None, title=None, turn_count=None)
    store.add_message(
        sid,
        "tool",
        "done",
        tool_name="fs.read",
        tool_args={"path": "/x"},
        tool_result="{broken",
        tool_duration_ms=12,
        trace_id="t" * 32,
    )
    store.add_state(sid, "snapshot", "{not json")
    session = Session.objects.get(pk="s1")
    assert session.title is None and session.turn_count is None
    assert session.created.tzinfo is not None
    message = Message.objects.get(session_id="s1")
    assert message.args.value == {"path": "/x"}
    assert message.result.valid is False and message.result.raw == "{broken"
    state = SessionState.objects.get(session_id="s1", key="snapshot")
    assert state.parsed.valid is False


@STORE_DB
def test_saving_or_deleting_a_store_model_raises(store):
    store.add_session("s1")
    session = Session.objects.get(pk="s1")
    session.title = "changed"
    with pytest.raises(StoreIsReadOnly):
        session.save()
    with pytest.raises(StoreIsReadOnly):
        session.delete()
    with pytest.raises(StoreIsReadOnly):
        Session.objects.filter(pk="s1").update(title="changed")
    with pytest.raises(StoreIsReadOnly):
        Session.objects.filter(pk="s1").delete()
    with pytest.raises(StoreIsReadOnly):
        Session.objects.create(id="new", target_key="t", created_at=1, last_active=1)
    assert store.execute("SELECT title FROM sessions") == [("a session",)]


@pytest.mark.parametrize(
    "text, valid",
    [
        ('{"ok": true}', True),
        ("[1, 2]", True),
        ('"just a string"', True),
        ("{oops", False),
        ("", False),
        ("NaN-ish", False),
        ("[" * 100_000, False),
    ],
)
def test_json_text_parses_or_falls_back_to_the_raw_text(text, valid):
    parsed = parse_json_text(text)
    assert parsed.valid is valid
    assert parsed.raw == text
    assert parsed.pretty() if valid else parsed.pretty() == text


@pytest.mark.parametrize(
    "text, flagged",
    [
        ('{"ok": false}', True),
        ('{"error": "boom"}', True),
        ('{"ok": true, "error": null}', False),
        ('{"rows": 3}', False),
        ("[1]", False),
        ("{broken", False),
    ],
)
def test_a_result_that_reports_an_error_is_flagged(text, flagged):
    assert parse_json_text(text).reports_error is flagged
