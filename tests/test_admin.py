"""The Django admin over the store: read-only, cheap on big stores, deletes via the cascade."""

from __future__ import annotations

import re

from django.db import connections
from django.test.utils import CaptureQueriesContext

from sessions_admin import deletion
from sessions_admin.models import DeletionAudit
from tests.conftest import STORE_DB, point_store_at
from tests.jobrunner import run_pending_jobs

CHANGELIST = "/admin/sessions_admin/session/"
CLEAR_ALL = "/admin/sessions_admin/session/clear-all/"
HX = {"HTTP_HX_REQUEST": "true"}


def some_sessions(store, n: int = 3, target: str = "system.registry") -> list[str]:
    ids = []
    for i in range(n):
        sid = store.add_session(f"{target[:3]}_{i:03d}", target=target)
        store.add_message(sid)
        store.add_message(sid, "assistant", "hi")
        store.add_state(sid, "repl_state", {"i": i})
        ids.append(sid)
    return ids


@STORE_DB
def test_the_session_changelist_never_counts_or_groups_the_whole_table(store, admin_client):
    some_sessions(store)
    some_sessions(store, target="ops.pager")
    with CaptureQueriesContext(connections["agents"]) as captured:
        response = admin_client.get(CHANGELIST)
    assert response.status_code == 200
    html = response.content.decode()
    assert "sys_000" in html and "ops_002" in html
    for query in captured.captured_queries:
        sql = query["sql"].upper()
        assert "DISTINCT" not in sql and "GROUP BY" not in sql
        if "COUNT(" in sql:
            assert "LIMIT" in sql, sql
    assert "delete_selected" not in html and "delete_with_cascade" in html


@STORE_DB
def test_the_changelist_filters_by_target_and_searches_by_id_prefix(store, admin_client):
    some_sessions(store)
    some_sessions(store, target="ops.pager")
    filtered = admin_client.get(CHANGELIST, {"target": "ops.pager"}).content.decode()
    assert "ops_000" in filtered and "sys_000" not in filtered
    assert "ops.pager" in filtered and "system.registry" in filtered  # both filter choices
    found = admin_client.get(CHANGELIST, {"q": "sys_00"}).content.decode()
    assert "sys_001" in found and "ops_001" not in found
    exact = admin_client.get(CHANGELIST, {"q": "ops_001"}).content.decode()
    assert "ops_001" in exact and "ops_000" not in exact


@STORE_DB
def test_the_session_page_shows_its_state_and_message_count_read_only(store, admin_client):
    store.add_session("s1")
    store.add_message("s1")
    store.add_state("s1", "snapshot", {"tree": "<b>not markup</b>"})
    response = admin_client.get("/admin/sessions_admin/session/s1/change/")
    html = response.content.decode()
    assert response.status_code == 200
    assert "snapshot" in html and "&lt;b&gt;not markup&lt;/b&gt;" in html
    assert 'name="_save"' not in html
    assert admin_client.get("/admin/sessions_admin/session/add/").status_code == 403
    assert (
        admin_client.post("/admin/sessions_admin/session/s1/change/", {"title": "x"}).status_code
        == 403
    )


@STORE_DB
def test_the_admin_delete_page_deletes_through_the_cascade_and_audits(store, admin_client):
    some_sessions(store, 2)
    url = "/admin/sessions_admin/session/sys_000/delete/"
    assert admin_client.get(url).status_code == 200
    response = admin_client.post(url, {"post": "yes"}, follow=True)
    assert response.status_code == 200
    assert "Deleted session sys_000: 2 messages, 1 state row" in response.content.decode()
    assert store.count("sessions") == 1 and store.count("session_messages") == 2
    audit = DeletionAudit.objects.get()
    assert audit.actor == "root" and audit.operation == "delete_session"


@STORE_DB
def test_the_delete_action_confirms_with_counts_then_uses_the_cascade(store, admin_client):
    ids = some_sessions(store, 3)
    data = {"action": "delete_with_cascade", "_selected_action": ids[:2]}
    confirm = admin_client.post(CHANGELIST, data)
    html = confirm.content.decode()
    assert confirm.status_code == 200 and "<strong>4</strong> messages" in html
    assert store.count("sessions") == 3
    done = admin_client.post(CHANGELIST, {**data, "confirmed": "yes"}, follow=True)
    assert "Deleted 2 sessions, 4 messages, 2 state rows." in done.content.decode()
    assert store.count("sessions") == 1
    audit = DeletionAudit.objects.get()
    assert audit.target["session_ids"] == ids[:2] and audit.sessions_deleted == 2


@STORE_DB
def test_the_stock_delete_selected_is_gone(store, admin_client):
    ids = some_sessions(store, 1)
    admin_client.post(CHANGELIST, {"action": "delete_selected", "_selected_action": ids})
    assert store.count("sessions") == 1


@STORE_DB
def test_staff_without_the_delete_permission_cannot_delete_in_the_admin(store, viewer_client):
    some_sessions(store, 1)
    html = viewer_client.get(CHANGELIST).content.decode()
    assert "delete_with_cascade" not in html
    url = "/admin/sessions_admin/session/sys_000/delete/"
    assert viewer_client.post(url, {"post": "yes"}).status_code == 403
    assert store.count("sessions") == 1


@STORE_DB
def test_read_only_mode_hides_and_refuses_admin_deletes(store, admin_client):
    some_sessions(store, 1)
    point_store_at(store.path, read_only=True)
    assert (
        admin_client.post(
            "/admin/sessions_admin/session/sys_000/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    page = admin_client.get(CLEAR_ALL).content.decode()
    assert "read-only mode" in page
    response = admin_client.post(CLEAR_ALL, {"expected": "1", "phrase": "delete 1 session"})
    assert response.status_code == 400 and store.count("sessions") == 1
    assert DeletionAudit.objects.get().outcome == "refused"


@STORE_DB
def test_clear_all_needs_its_own_permission(store, staff_client):
    some_sessions(store, 1)
    assert staff_client.get(CLEAR_ALL).status_code == 403
    assert (
        staff_client.post(CLEAR_ALL, {"expected": "1", "phrase": "delete 1 session"}).status_code
        == 403
    )
    assert store.count("sessions") == 1


@STORE_DB
def test_clear_all_shows_exact_counts_and_refuses_a_wrong_phrase(store, admin_client):
    some_sessions(store, 3)
    page = admin_client.get(CLEAR_ALL).content.decode()
    assert "<strong>3</strong> sessions" in page and "<strong>6</strong> messages" in page
    assert "delete 3 sessions" in page
    wrong = admin_client.post(CLEAR_ALL, {"expected": "3", "phrase": "delete 3 session"})
    assert wrong.status_code == 400 and "does not match" in wrong.content.decode()
    assert store.count("sessions") == 3 and not DeletionAudit.objects.exists()


@STORE_DB
def test_clear_all_is_a_job_whose_page_follows_it_and_links_the_audit(
    store, admin_client, monkeypatch
):
    monkeypatch.setattr(deletion.bulk, "MAX_BATCH_SESSIONS", 30)
    monkeypatch.setattr(deletion.bulk, "MIN_PAUSE_MS", 0)
    ids = [store.add_session(f"s{n:04d}") for n in range(120)]
    for sid in ids[:10]:
        store.add_message(sid)
    before = store.schema_objects(), store.execute("SELECT * FROM memory_records")
    start = admin_client.post(CLEAR_ALL, {"expected": "120", "phrase": "delete 120 sessions"})
    assert start.status_code == 302
    step_url = start["Location"]
    page = admin_client.get(step_url).content.decode()
    assert "<progress" in page and 'hx-trigger="every 1s"' in page and "htmx" in page
    assert "Waiting for the worker" in page and store.count("sessions") == 120
    assert run_pending_jobs() == 1
    fragment = admin_client.get(step_url, **HX).content.decode()
    assert "<html" not in fragment and 'hx-trigger="every 1s"' not in fragment
    audit = DeletionAudit.objects.get()
    assert f"/admin/sessions_admin/deletionaudit/{audit.pk}/change/" in fragment
    assert audit.outcome == "ok" and audit.sessions_deleted == 120 and audit.messages_deleted == 10
    assert store.count("sessions") == 0
    assert (store.schema_objects(), store.execute("SELECT * FROM memory_records")) == before
    assert admin_client.post(step_url).status_code == 405


@STORE_DB
def test_the_audit_log_is_visible_and_read_only_in_the_admin(store, admin_client):
    store.add_session("a")
    result = deletion.delete_session("a", actor=deletion.Actor(name="cron"))
    listing = admin_client.get("/admin/sessions_admin/deletionaudit/").content.decode()
    assert "cron" in listing
    url = f"/admin/sessions_admin/deletionaudit/{result.audit_id}/change/"
    page = admin_client.get(url).content.decode()
    assert "cron" in page and 'name="_save"' not in page
    assert admin_client.post(url, {"actor": "someone else"}).status_code == 403
    assert (
        admin_client.post(
            f"/admin/sessions_admin/deletionaudit/{result.audit_id}/delete/", {"post": "yes"}
        ).status_code
        == 403
    )
    assert admin_client.get("/admin/sessions_admin/deletionaudit/add/").status_code == 403
    assert DeletionAudit.objects.get().actor == "cron"


@STORE_DB
def test_the_message_admin_is_read_only_and_searches_by_session(store, admin_client):
    some_sessions(store, 2)
    with CaptureQueriesContext(connections["agents"]) as captured:
        html = admin_client.get("/admin/sessions_admin/message/", {"q": "sys_001"}).content.decode()
    assert html.count("sys_001") >= 2 and "sys_000<" not in html
    assert not any(
        "COUNT(" in q["sql"].upper() and "LIMIT" not in q["sql"].upper()
        for q in captured.captured_queries
    )
    assert admin_client.get("/admin/sessions_admin/message/add/").status_code == 403


@STORE_DB
def test_the_admin_never_offers_facet_counts_over_the_whole_store(store, admin_client):
    store.add_session()
    response = admin_client.get("/admin/sessions_admin/session/?_facets=True")
    assert response.status_code == 200
    assert b"Show counts" not in response.content
    assert b"sessions-admin" in response.content


@STORE_DB
def test_the_message_admin_filters_on_every_known_role_system_included(store, admin_client):
    session = store.add_session()
    store.add_message(session, "system", "be brief")
    store.add_message(session, "user", "hello")
    html = admin_client.get("/admin/sessions_admin/message/").content.decode()
    for role in ("user", "assistant", "tool", "system"):
        assert f"?role={role}" in html
    filtered = admin_client.get("/admin/sessions_admin/message/", {"role": "system"})
    assert "be brief" in filtered.content.decode() and "hello" not in filtered.content.decode()


@STORE_DB
def test_the_admin_clear_all_page_uses_the_stock_breadcrumbs_and_no_runtime_internals(
    store, admin_client
):
    store.add_session("sess_clear")
    body = admin_client.get("/admin/sessions_admin/session/clear-all/").content.decode()
    assert '<ol class="breadcrumbs">' in body and "Agent sessions" in body
    assert "$sessionClearAll" not in body


def _sorted_columns(html: str) -> dict[str, str]:
    """Each header marked as sorted: its column's name, and ascending or descending."""
    return dict(re.findall(r'class="[^"]*column-(\w+) sorted (ascending|descending)"', html))


@STORE_DB
def test_the_changelist_headers_mark_the_order_the_rows_are_in(store, admin_client):
    ids = some_sessions(store, 3) + some_sessions(store, 3, target="ops.pager")
    html = admin_client.get(CHANGELIST).content.decode()
    assert _sorted_columns(html) == {"id": "ascending"}
    shown = [sid for sid in sorted(ids) if f">{sid}<" in html]
    assert sorted(shown, key=html.index) == sorted(ids)  # the rows are in id order
    by_target = admin_client.get(CHANGELIST, {"target": "ops.pager"}).content.decode()
    assert _sorted_columns(by_target) == {"last_active_shown": "descending"}
    # A header the reader clicked is marked as Django marks it.
    clicked = admin_client.get(CHANGELIST, {"o": "-1"}).content.decode()
    assert _sorted_columns(clicked) == {"id": "descending"}
    messages = admin_client.get("/admin/sessions_admin/message/").content.decode()
    assert _sorted_columns(messages) == {"id": "descending"}
