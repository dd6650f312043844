"""Logs: one line per request, store time-limit stops and deletions, as JSON or text.

``DJANGO_LOG_FORMAT`` picks the formatter: ``json`` (the default, one object
per line for a log shipper) or ``text`` (readable lines for local work). A
request id ties every line a request writes together: it comes from the
proxy's ``X-Request-ID`` when that looks like an id, is made up otherwise,
and is sent back in the response's ``X-Request-ID``.

This module is loaded by ``LOGGING`` (and by gunicorn's master through
``gunicorn.conf.py``) before Django's apps are ready: it imports no model.
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import time
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, unquote_plus

if TYPE_CHECKING:
    from django.http import HttpRequest, HttpResponse

request_logger = logging.getLogger("sessions_admin.request")
store_logger = logging.getLogger("sessions_admin.store")
deletion_logger = logging.getLogger("sessions_admin.deletion")

_current_request_id: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "request_id", default=None
)
# What a proxy may hand us as the request id; anything else is replaced.
_REQUEST_ID = re.compile(r"[A-Za-z0-9._:-]{1,64}")
# The attributes every LogRecord has: whatever else a record carries came from ``extra``.
_RECORD_FIELDS = frozenset(vars(logging.makeLogRecord({}))) | {"message", "asctime"}
#: Longest value we copy from a request into a log line (paths, filter values).
MAX_LOGGED_CHARS = 500


#: Query parameters whose values never reach a log line (matched anywhere in the
#: name, any case: ``password``, ``api_token``, ``csrfmiddlewaretoken``, ``key``…).
SECRET_PARAM = re.compile(r"pass|pwd|token|secret|key|csrf|auth|session|sig|credential", re.I)
REDACTED = "[redacted]"
# JSON escapes the C0 controls, but not these three: Python's splitlines() and
# JavaScript's line terminators (U+2028/9) would cut a line where they stand.
_LINE_SEPARATORS = str.maketrans({"\x85": "\\u0085", "\u2028": "\\u2028", "\u2029": "\\u2029"})
# The text format spells what JSON escapes the same way, and the C1 controls
# and DEL a terminal would act on: a request path cannot start a forged line.
_TEXT_ESCAPES = str.maketrans(
    {
        **{chr(c): f"\\u{c:04x}" for c in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029]},
        **{"\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"},
    }
)
# Continuation lines of a text traceback: indented, so column 0 is always a record.
_TRACEBACK_INDENT = "    "


def _clip(text: str) -> str:
    return text if len(text) <= MAX_LOGGED_CHARS else text[:MAX_LOGGED_CHARS] + "…"


def one_line_json(value: Any) -> str:
    """``value`` as JSON that no line splitter can cut (no raw line separator)."""
    return json.dumps(value, default=str, ensure_ascii=False).translate(_LINE_SEPARATORS)


def one_line_text(text: str) -> str:
    """``text`` with line separators, controls and backslashes escaped as JSON spells them."""
    return text.translate(_TEXT_ESCAPES)


def redacted_query(query: str) -> str:
    """A raw query string with the values of secret-like parameters replaced, and
    what the pages would mask (an address searched for) masked."""
    from sessions_admin.masking import masker  # loaded with the settings: not before them

    try:
        active = masker()
    except Exception:  # noqa: BLE001 - settings not configured yet: nothing to mask with
        active = None
    parts = []
    for part in query.split("&"):
        name, sep, value = part.partition("=")
        if sep and SECRET_PARAM.search(unquote_plus(name)):
            part = f"{name}={REDACTED}"
        elif sep and active is not None and value:
            said = unquote_plus(value)
            if (shown := active.text(said)) != said:
                part = f"{name}={quote_plus(shown)}"
        parts.append(part)
    return "&".join(parts)


def loggable_path(request: HttpRequest) -> str:
    """The request's path and query for a log line: secrets redacted, clipped."""
    path, sep, query = request.get_full_path().partition("?")
    return _clip(path + sep + redacted_query(query))


def _loggable(value: Any) -> Any:
    # Django's own request lines (django.request) carry the request object,
    # whose repr holds the full query string.
    if hasattr(value, "get_full_path") and hasattr(value, "method"):
        return f"<{type(value).__name__}: {value.method} {loggable_path(value)!r}>"
    return value


def _extra_fields(record: logging.LogRecord) -> dict[str, Any]:
    return {
        key: _loggable(value)
        for key, value in vars(record).items()
        if key not in _RECORD_FIELDS and not key.startswith("_")
    }


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the record's extras."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            **_extra_fields(record),
        }
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return one_line_json(entry)


class TextFormatter(logging.Formatter):
    """``time level logger message key=value …`` for a person reading a terminal."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = datetime.fromtimestamp(record.created, UTC).strftime("%H:%M:%S.%f")[:-3]
        extras = " ".join(
            f"{key}={one_line_json(value)}" for key, value in _extra_fields(record).items()
        )
        message = one_line_text(record.getMessage())
        line = f"{stamp} {record.levelname:<7} {record.name}: {message}"
        line = f"{line}  {extras}" if extras else line
        if record.exc_info:
            # A traceback keeps its own lines, each escaped and indented.
            lines = self.formatException(record.exc_info).split("\n")
            line += "".join(f"\n{_TRACEBACK_INDENT}{one_line_text(part)}" for part in lines)
        return line


class RequestIdFilter(logging.Filter):
    """Stamp each record written while a request runs with that request's id."""

    def filter(self, record: logging.LogRecord) -> bool:
        request_id = _current_request_id.get()
        if request_id is not None and not hasattr(record, "request_id"):
            record.request_id = request_id
        return True


def _user_name(request: HttpRequest) -> str | None:
    # Static files are answered before the session is read: no user, no query.
    user = getattr(request, "user", None)
    if user is None:
        return None
    try:
        return user.get_username() if user.is_authenticated else None
    except Exception:  # the log line must never fail the request it describes
        return None


class RequestLogMiddleware:
    """One log line per request: method, path, status, duration, user, request id.

    First in ``MIDDLEWARE`` so the duration covers the whole stack. For a
    streamed response (exports) it is the time to the first byte.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get("X-Request-ID", "")
        request_id = incoming if _REQUEST_ID.fullmatch(incoming) else uuid.uuid4().hex
        request.request_id = request_id
        token = _current_request_id.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response["X-Request-ID"] = request_id
            request_logger.info(
                "%s %s %s",
                request.method,
                _clip(request.path),
                response.status_code,
                extra={
                    "method": request.method,
                    "path": loggable_path(request),
                    "status": response.status_code,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    "user": _user_name(request),
                },
            )
            return response
        finally:
            _current_request_id.reset(token)


def request_filter(request: HttpRequest) -> dict[str, str]:
    """The query parameters a store query was filtered by, clipped for a log line
    (secret-like ones redacted)."""
    return {
        _clip(key): REDACTED if SECRET_PARAM.search(key) else _clip(value)
        for key, value in request.GET.items()
    }


def log_time_limit_stop(request: HttpRequest, error: Exception) -> None:
    """A store query the time limit stopped: a warning naming the view and its filter."""
    match = getattr(request, "resolver_match", None)
    store_logger.warning(
        "store query stopped by the time limit",
        extra={
            "view": match.view_name if match else None,
            "path": _clip(request.path),
            "filter": request_filter(request),
            "limit_ms": getattr(error, "limit_ms", None),
        },
    )


def _target_summary(target: Any) -> Any:
    """An audit's target with long id lists cut to their first few and a count."""
    if not isinstance(target, dict):
        return target
    summary: dict[str, Any] = {}
    for key, value in target.items():
        if isinstance(value, list) and len(value) > 5:
            summary[key] = [*value[:5], f"… {len(value)} in all"]
        else:
            summary[key] = value
    return summary


def log_deletion(sender: type, instance: Any, created: bool, **kwargs: Any) -> None:
    """``post_save`` on DeletionAudit: a line when a delete starts and when it ends."""
    fields = {
        "audit_id": instance.pk,
        "operation": instance.operation,
        "actor": instance.actor,
        "outcome": instance.outcome,
    }
    if created:
        deletion_logger.info(
            "deletion %s started (audit %s)",
            instance.operation,
            instance.pk,
            extra={**fields, "target": _target_summary(instance.target)},
        )
        return
    if instance.finished_at is None:
        return  # a progress save of a bulk delete that is still running
    level = logging.INFO if instance.outcome == "ok" else logging.WARNING
    deletion_logger.log(
        level,
        "deletion %s %s (audit %s)",
        instance.operation,
        instance.outcome,
        instance.pk,
        extra={
            **fields,
            "sessions_deleted": instance.sessions_deleted,
            "messages_deleted": instance.messages_deleted,
            "state_deleted": instance.state_deleted,
            "frame_dirs_removed": instance.frame_dirs_removed,
            "frame_bytes_removed": instance.frame_bytes_removed,
            "detail": _clip(instance.detail),
        },
    )
