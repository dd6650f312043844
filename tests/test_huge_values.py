"""Huge values never balloon a page: short columns are clipped in SQLite, long ones previewed."""

from django.urls import reverse

from sessions_admin.ids import session_url
from tests.conftest import STORE_DB

MB = 1_000_000
PAGE_LIMIT = 250_000  # bytes: generous for our markup, tiny next to the values


@STORE_DB
def test_megabytes_in_any_column_leave_every_page_small(store, admin_client):
    session_id = store.add_session(
        "s1", title="T" * 5 * MB, principal="P" * 3 * MB, target="t" * MB, profile="p" * MB
    )
    message_id = store.add_message(
        session_id,
        "tool",
        "c" * 4 * MB,
        tool_name="n" * MB,
        tool_call_id="i" * MB,
        tool_target="g" * MB,
        tool_op="o" * MB,
        tool_args="a" * 2 * MB,
        tool_result='{"x": "' + "b" * 2 * MB + '"}',
        trace_id="r" * MB,
        span_id="s" * MB,
        model_id="m" * MB,
    )
    store.add_message(session_id, "x" * MB, "odd role")
    store.add_state(session_id, "k" * MB, "v" * 3 * MB)
    urls = [
        "/sessions/",
        "/targets/",
        session_url(session_id),
        session_url(session_id, tab="state"),
        session_url(session_id, "stats"),
        session_url(session_id, "delete"),
        reverse("admin:sessions_admin_session_changelist"),
        reverse("admin:sessions_admin_session_change", args=[session_id]),
        reverse("admin:sessions_admin_message_changelist"),
        reverse("admin:sessions_admin_message_change", args=[message_id]),
    ]
    for url in urls:
        response = admin_client.get(url)
        assert response.status_code == 200, url
        assert len(response.content) < PAGE_LIMIT, (url, len(response.content))


@STORE_DB
def test_a_clipped_title_ends_with_an_ellipsis_and_the_id_is_never_clipped(store, staff_client):
    long_id = "sess_" + "z" * 3000
    store.add_session(long_id, title="T" * 5000)
    response = staff_client.get("/sessions/")
    row = response.context["page"].rows[0]
    assert row.id == long_id
    assert row.title == "T" * 1000 + "…"
    assert staff_client.get(session_url(long_id)).status_code == 200
