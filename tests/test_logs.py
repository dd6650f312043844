"""Logs: a line per request, time-limit stops with view and filter, deletions with audit id."""

from __future__ import annotations

import json
import logging

from django.test import RequestFactory

from sessions_admin.ids import session_url
from sessions_admin.logs import JsonFormatter, RequestIdFilter, TextFormatter
from sessions_admin.models import DeletionAudit
from sessions_admin.store import queries
from sessions_admin.store.connection import StoreTimeout
from tests.conftest import STORE_DB, point_store_at


def record(message: str = "hello %s", *args, **extra) -> logging.LogRecord:
    entry = logging.LogRecord(
        "sessions_admin.test", logging.WARNING, __file__, 1, message, args, None
    )
    entry.__dict__.update(extra)
    return entry


def test_the_json_formatter_writes_one_object_per_line_with_the_extras():
    line = JsonFormatter().format(record("hello %s", "world", view="sessions", filter={"q": "x"}))
    assert "\n" not in line
    entry = json.loads(line)
    assert entry["message"] == "hello world"
    assert entry["level"] == "WARNING"
    assert entry["logger"] == "sessions_admin.test"
    assert entry["view"] == "sessions" and entry["filter"] == {"q": "x"}
    assert entry["time"].endswith("+00:00")


def test_the_json_formatter_keeps_a_traceback_on_the_same_line():
    try:
        raise ValueError("boom\nsecond line")
    except ValueError:
        import sys

        entry = record()
        entry.exc_info = sys.exc_info()
    line = JsonFormatter().format(entry)
    assert "\n" not in line
    assert "ValueError: boom" in json.loads(line)["exception"]


def test_the_text_formatter_reads_as_a_sentence_with_its_fields():
    line = TextFormatter().format(record("hello %s", "world", status=200))
    assert "WARNING sessions_admin.test: hello world  status=200" in line


def test_records_outside_a_request_get_no_request_id():
    entry = record()
    assert RequestIdFilter().filter(entry) and not hasattr(entry, "request_id")


def request_lines(caplog) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "sessions_admin.request"]


@STORE_DB
def test_each_request_writes_one_line_with_method_path_status_duration_user_and_id(
    store, staff_client, caplog
):
    caplog.set_level(logging.INFO, logger="sessions_admin.request")
    response = staff_client.get("/sessions/?target=ops.pager")
    (line,) = request_lines(caplog)
    assert (line.method, line.path, line.status, line.user) == (
        "GET",
        "/sessions/?target=ops.pager",
        200,
        "staff",
    )
    assert line.duration_ms >= 0
    assert line.request_id == response["X-Request-ID"]
    assert len(line.request_id) == 32


@STORE_DB
def test_a_proxy_request_id_is_kept_and_a_strange_one_replaced(store, client, caplog):
    caplog.set_level(logging.INFO, logger="sessions_admin.request")
    assert client.get("/healthz", HTTP_X_REQUEST_ID="lb-1234").headers["X-Request-ID"] == "lb-1234"
    strange = client.get("/healthz", HTTP_X_REQUEST_ID="<script>" + "x" * 100)
    assert strange.headers["X-Request-ID"].isalnum()
    assert [line.user for line in request_lines(caplog)] == [None, None]


@STORE_DB
def test_every_line_a_request_writes_carries_its_request_id(
    store, staff_client, caplog, monkeypatch
):
    caplog.set_level(logging.INFO)

    def stopped(*args, **kwargs):
        raise StoreTimeout(3000)

    monkeypatch.setattr(queries, "list_sessions", stopped)
    response = staff_client.get("/sessions/", HTTP_X_REQUEST_ID="req-42")
    assert response.status_code == 422
    mine = [r for r in caplog.records if getattr(r, "request_id", None) == "req-42"]
    assert {r.name for r in mine} >= {"sessions_admin.store", "sessions_admin.request"}


@STORE_DB
def test_a_query_stopped_by_the_time_limit_is_a_warning_with_the_view_and_filter(
    store, staff_client, caplog, monkeypatch
):
    def stopped(*args, **kwargs):
        raise StoreTimeout(3000)

    monkeypatch.setattr(queries, "list_sessions", stopped)
    response = staff_client.get("/sessions/?principal=user:alice&q=deploy")
    assert response.status_code == 422
    (warning,) = [r for r in caplog.records if r.name == "sessions_admin.store"]
    assert warning.levelno == logging.WARNING
    assert warning.getMessage() == "store query stopped by the time limit"
    assert warning.view == "sessions"
    assert warning.filter == {"principal": "user:alice", "q": "deploy"}
    assert warning.limit_ms == 3000


@STORE_DB
def test_a_count_the_time_limit_stopped_is_logged_though_the_page_carries_on(
    store, staff_client, caplog, monkeypatch
):
    def stopped(*args, **kwargs):
        raise StoreTimeout(3000)

    monkeypatch.setattr(queries, "count_sessions_limited", stopped)
    response = staff_client.get("/sessions/?q=deploy&count=1", HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    (warning,) = [r for r in caplog.records if r.name == "sessions_admin.store"]
    assert warning.view == "sessions" and warning.filter == {"q": "deploy", "count": "1"}


@STORE_DB
def test_a_delete_is_logged_when_it_starts_and_ends_with_its_audit_id(store, staff_client, caplog):
    caplog.set_level(logging.INFO, logger="sessions_admin.deletion")
    sid = store.add_session("sess_gone")
    store.add_message(sid)
    staff_client.post(session_url(sid, "delete"))
    audit = DeletionAudit.objects.get()
    started, ended = [r for r in caplog.records if r.name == "sessions_admin.deletion"]
    assert started.audit_id == ended.audit_id == audit.pk
    assert started.target == audit.target
    assert (ended.outcome, ended.sessions_deleted, ended.messages_deleted) == ("ok", 1, 1)
    assert ended.actor == "staff"
    assert f"(audit {audit.pk})" in ended.getMessage()


@STORE_DB
def test_a_refused_delete_is_a_warning_with_its_audit_id(store, staff_client, caplog):
    sid = store.add_session("sess_kept")
    point_store_at(store.path, read_only=True)
    staff_client.post(session_url(sid, "delete"))
    audit = DeletionAudit.objects.get()
    (ended,) = [
        r
        for r in caplog.records
        if r.name == "sessions_admin.deletion" and r.levelno > logging.INFO
    ]
    assert (ended.audit_id, ended.outcome) == (audit.pk, "refused")
    assert "read-only" in ended.detail


LINE_SEPARATORS = "\x85\u2028\u2029\n\r\x0b\x0c\x1c\x1d\x1e"


def test_no_line_separator_reaches_a_json_line_raw():
    text = f"a{LINE_SEPARATORS}b"
    line = JsonFormatter().format(record("path %s", text, path=text))
    assert line.splitlines() == [line]  # Python's splitter knows every separator
    assert not set(LINE_SEPARATORS) & set(line)
    entry = json.loads(line)
    assert entry["message"] == f"path {text}" and entry["path"] == text  # nothing lost


def test_the_text_formatters_fields_hold_no_raw_line_separator_either():
    line = TextFormatter().format(record("a request", path=f"a{LINE_SEPARATORS}b"))
    assert line.splitlines() == [line]
    assert line.endswith('path="a\\u0085\\u2028\\u2029\\n\\r\\u000b\\f\\u001c\\u001d\\u001eb"')


SECRETS = {
    "password": "hunter2",
    "api_token": "tok-123",
    "csrfmiddlewaretoken": "csrf-456",
    "key": "k-789",
    "Client_Secret": "s-000",
}


@STORE_DB
def test_secret_like_query_parameters_are_redacted_in_the_request_line(store, staff_client, caplog):
    caplog.set_level(logging.INFO, logger="sessions_admin.request")
    query = "&".join(f"{name}={value}" for name, value in SECRETS.items())
    staff_client.get(f"/sessions/?target=ops.pager&{query}&q=deploy")
    (line,) = request_lines(caplog)
    assert line.path == (
        "/sessions/?target=ops.pager&password=[redacted]&api_token=[redacted]"
        "&csrfmiddlewaretoken=[redacted]&key=[redacted]&Client_Secret=[redacted]&q=deploy"
    )


@STORE_DB
def test_secret_like_parameters_are_redacted_in_time_limit_warnings_and_django_lines(
    store, staff_client, caplog, monkeypatch
):
    def stopped(*args, **kwargs):
        raise StoreTimeout(3000)

    monkeypatch.setattr(queries, "list_sessions", stopped)
    staff_client.get("/sessions/?q=deploy&token=tok-123")
    (warning,) = [r for r in caplog.records if r.name == "sessions_admin.store"]
    assert warning.filter == {"q": "deploy", "token": "[redacted]"}
    django_line = record("Bad Request", request=RequestFactory().get("/x/?a=1&password=hunter2"))
    entry = json.loads(JsonFormatter().format(django_line))
    assert entry["request"] == "<WSGIRequest: GET '/x/?a=1&password=[redacted]'>"


@STORE_DB
def test_a_request_path_holding_line_separators_stays_one_text_line(store, staff_client, caplog):
    caplog.set_level(logging.INFO, logger="sessions_admin.request")
    forged = "12:00:00.000 INFO    sessions_admin.request: GET /forged 200"
    for separator in ("\u2028", "\r", "\n", "\x85", "\x1b"):
        caplog.clear()
        staff_client.get(f"/sessions/x{separator}{forged}")
        (entry,) = request_lines(caplog)
        line = TextFormatter().format(entry)
        assert line.splitlines() == [line]
        assert separator not in line


def test_the_text_formatters_message_escapes_controls_as_json_does():
    line = TextFormatter().format(record("GET %s 404", "/a\u2028b\rc\nd\te\x1bf\\g"))
    assert line.endswith("GET /a\\u2028b\\rc\\nd\\te\\u001bf\\\\g 404")


def test_a_text_traceback_indents_every_line_after_the_first_so_none_reads_as_a_record():
    try:
        raise ValueError("boom\n12:00:00.000 INFO    forged: line\u2028again")
    except ValueError:
        import sys

        entry = record()
        entry.exc_info = sys.exc_info()
    first, *rest = TextFormatter().format(entry).splitlines()
    assert "WARNING sessions_admin.test" in first
    assert rest and all(line.startswith("    ") for line in rest)
    assert any("ValueError: boom" in line for line in rest)
