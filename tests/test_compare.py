"""``/compare/``: two sessions turn by turn, tool calls paired by name and order, what
differs and what failed marked; any pair of stored sessions, odd ones included."""

from __future__ import annotations

import re

from hypothesis import HealthCheck, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from sessions_admin.store.transcript.compare import compare_sessions, pair_turn, turns_of
from tests import strategies
from tests.conftest import STORE_DB


def build(store, sid, messages):
    store.add_session(sid)
    for n, (role, tool, args, result) in enumerate(messages):
        extra = {"tool_name": tool, "tool_call_id": f"{sid}-{n}"} if tool else {}
        if args is not None:
            extra["tool_args"] = args
        if result is not None:
            extra["tool_result"] = result
        store.add_message(sid, role, f"{role} says {n}" if not tool else "", **extra)


A = [
    ("user", None, None, None),
    ("assistant", "search", '{"q": "x"}', '{"ok": true}'),
    ("assistant", "fetch", '{"url": "a"}', '{"ok": true}'),
    ("user", None, None, None),
    ("assistant", "fetch", '{"url": "b"}', '{"ok": true}'),
]
B = [
    ("user", None, None, None),
    ("assistant", "fetch", '{"url": "a"}', '{"error": "timeout"}'),
    ("assistant", "search", '{"q": "y"}', '{"ok": true}'),
    ("user", None, None, None),
    ("assistant", "fetch", '{"url": "b"}', '{"ok": true}'),
    ("assistant", "write", '{"p": 1}', '{"ok": true}'),
]


@STORE_DB
def test_turns_align_and_calls_pair_by_tool_and_order(store):
    build(store, "A", A)
    build(store, "B", B)
    found = compare_sessions("A", "B")
    assert [t.number for t in found.turns] == [1, 2]
    first = found.turns[0].pairs
    tools = [(p.a and p.a.tool_name, p.b and p.b.tool_name) for p in first]
    # The user's messages pair; search with search and fetch with fetch, whatever order.
    assert (None, None) in tools and ("search", "search") in tools and ("fetch", "fetch") in tools
    search = next(p for p in first if p.a and p.a.tool_name == "search")
    fetch = next(p for p in first if p.a and p.a.tool_name == "fetch")
    assert search.differs == {"args"} and fetch.differs == {"result"}
    assert fetch.b_failed and not fetch.a_failed
    second = found.turns[1].pairs
    assert [(p.a is None, p.b is None) for p in second][-1] == (True, False)  # B's extra write
    assert found.turns[1].differs and found.a_after is None and found.b_after is None


def test_a_turn_starts_at_each_users_message():
    class M:
        def __init__(self, role):
            self.role, self.tool_name = role, None

    turns = turns_of([M("system"), M("user"), M("assistant"), M("user"), M("user")])
    assert [[m.role for m in t] for t in turns] == [
        ["system"],
        ["user", "assistant"],
        ["user"],
        ["user"],
    ]


@STORE_DB
def test_the_page_shows_both_sides_and_marks_differences(store, staff_client):
    build(store, "A", A)
    build(store, "B", B)
    page = staff_client.get("/compare/?a=A&b=B").content.decode()
    assert page.count('class="turn') >= 2 and "✗&nbsp;failed" in page
    assert re.search(r'compare-value differs">\{&quot;q&quot;: &quot;[xy]&quot;\}', page)
    assert "?a=B&amp;b=A" in page  # swap sides
    asking = staff_client.get("/compare/?a=A").content.decode()
    assert 'name="b" value="" required' in asking and "autofocus" in asking
    assert staff_client.get("/compare/?a=A&b=nope").status_code == 404
    assert staff_client.get("/compare/?a=A&b=B&a_after=x").status_code == 400
    assert staff_client.get("/compare/?a=A%00&b=B").status_code == 400
    assert staff_client.get("/compare/?a=A&b=B&a_after=999999").status_code == 400


@STORE_DB
@hsettings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    a_rows=st.lists(strategies.message_rows("odd-a"), max_size=6),
    b_rows=st.lists(strategies.message_rows("odd-b"), max_size=6),
)
def test_any_stored_values_compare_without_an_error(store, staff_client, a_rows, b_rows):
    """Every column of every message any storage class, undecodable text included."""
    store.clear()
    store.add_session("odd-a")
    store.add_session("odd-b")
    with store.connect() as conn:
        for row in a_rows + b_rows:
            columns = ", ".join(row)
            conn.execute(
                f"INSERT INTO session_messages ({columns}) VALUES ({', '.join('?' for _ in row)})",
                list(row.values()),
            )
    response = staff_client.get("/compare/?a=odd-a&b=odd-b")
    assert response.status_code == 200
    assert response.content.count(b'class="compare-cell') >= len(a_rows) + len(b_rows) > 0 or (
        not a_rows and not b_rows
    )


def test_unpaired_messages_keep_their_place():
    class M:
        def __init__(self, role, tool=None):
            self.role, self.tool_name = role, tool
            self.content = self.tool_args = self.tool_result = None
            self.result_error = None

    a = [M("user"), M("assistant", "x"), M("assistant", "y")]
    b = [M("user"), M("assistant", "z"), M("assistant", "y")]
    pairs = pair_turn(a, b)
    shape = [(p.a.tool_name if p.a else "-", p.b.tool_name if p.b else "-") for p in pairs]
    assert shape == [(None, None), ("x", "-"), ("-", "z"), ("y", "y")]
