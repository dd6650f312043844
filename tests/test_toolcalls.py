"""One definition of a failed call: the red card, the rollups and the spec agree."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sessions_admin.store.jsontext import parse_json_text
from sessions_admin.store.toolcalls import call_key, is_tool_call, reports_error, reports_error_sql
from tests.conftest import STORE_DB

scalars = (
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
flags = st.sampled_from([None, True, False, 0, 1, 0.0, -0.0, "", "x", [], [0], {}, {"a": 1}, 1e300])


@st.composite
def results(draw) -> dict:
    """An object that may carry ok / success / error, among other keys."""
    body = draw(st.dictionaries(st.text(max_size=5), values, max_size=3))
    for key in ("ok", "success", "error"):
        if draw(st.booleans()):
            body[key] = draw(flags | values)
    return body


def spec(value: object) -> bool:
    """The README's sentence, for JSON both readers parse alike."""
    if not isinstance(value, dict):
        return False
    if value.get("ok") is False or value.get("success") is False:
        return True
    return "error" in value and value["error"] not in (None, False, 0, "", {}, [])


@settings(max_examples=150, deadline=None)
@given(results() | values)
def test_the_rule_says_what_the_readme_says_for_plain_json(value):
    text = json.dumps(value)
    if any(isinstance(v, float) and math.isinf(v) for v in _leaves(value)):
        return  # json.dumps writes Infinity, which is not JSON
    assert reports_error(text) is spec(value)


def _leaves(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _leaves(v)
    elif isinstance(value, list):
        for v in value:
            yield from _leaves(v)
    else:
        yield value


texts = (
    results().map(json.dumps)
    | st.text(max_size=30)
    | st.tuples(results(), results()).map(
        lambda p: json.dumps(p[0])[:-1] + ", " + json.dumps(p[1])[1:]
    )
    | st.sampled_from(
        [
            '{"ok": false, "x": NaN}',
            '{"ok": false}\x00',
            '{"ok":false,"ok":true}',
            '{"error": "\\ud800"}',
        ]
    )
)


@STORE_DB
@settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=texts)
def test_python_and_the_stores_sql_apply_the_same_rule(store, text):
    """Duplicate keys, NaN, NUL bytes: where Python's json and SQLite differ, one rule wins."""
    (flag,) = store.execute(f"SELECT {reports_error_sql('?1')}", (text,))[0]
    assert reports_error(text) is bool(flag)
    parsed = parse_json_text(text)
    assert parsed.reports_error is reports_error(text)


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ('{"ok": false, "x": NaN}', False),  # NaN is not JSON to SQLite, so not a failure
        ('{"ok": true, "ok": false}', False),  # SQLite reads the first of two keys
        ('{"error": {"code": 1}}', True),
        (None, False),
    ],
)
def test_json_the_two_readers_disagree_on_has_one_answer(text, error):
    assert reports_error(text) is error


@STORE_DB
@pytest.mark.parametrize("size", [100, 70_000])
def test_the_red_card_and_the_rollups_agree_on_small_and_truncated_results(
    store, staff_client, size, settings, tmp_path
):
    from sessions_admin.ourdata import sidedb, sync

    settings.VAR_DIR = tmp_path / "var"
    sid = store.add_session()
    text = '{"ok": true, "ok": false, "pad": "' + "x" * size + '"}'
    mid = store.add_message(sid, "tool", "", tool_name="t", tool_result=text)
    sync.sync_once()
    side = sidedb.connect(create=False)
    (failed,) = side.execute("SELECT failed FROM rollup_call WHERE link_id = ?", (mid,)).fetchone()
    side.close()
    html = staff_client.get(f"/sessions/{sid}/").content.decode()
    assert failed == 0 and "tool-error" not in html


def test_a_call_is_a_message_with_a_tool_name():
    assert is_tool_call("fs.read") and not is_tool_call("") and not is_tool_call(None)
    assert call_key(5, "call_1") == call_key(9, "call_1") != call_key(5, None)
    assert call_key(5, "") == call_key(5, None) == "m:5"
