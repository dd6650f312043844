"""Store problems become a page (or an htmx banner) that says what is wrong.

Never a traceback: a locked, missing, foreign or timed-out store raises
:class:`StoreError` (or a ``DatabaseError`` we translate), and this renders it
with the cause and what to do. A :class:`~sessions_admin.params.BadParameter`
a view lets through becomes the 400 page naming the parameter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import date
from typing import Any

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions_admin import params
from sessions_admin.logs import log_time_limit_stop
from sessions_admin.params import BadParameter
from sessions_admin.store.connection import (
    StoreError,
    StoreTimeout,
    describe_database_error,
    store_status,
)
from sessions_admin.views.errors import bad_request
from sessions_admin.views.responses import render_banner

logger = logging.getLogger(__name__)


class StoreErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, StoreTimeout):
            log_time_limit_stop(request, exception)
            error = exception
        elif isinstance(exception, StoreError):
            error = exception
        elif isinstance(exception, DatabaseError):
            logger.warning("database error on %s: %s", request.path, exception)
            status = store_status(fresh=True)
            if status.ok:
                error = describe_database_error(exception)
            else:
                error = StoreError(status.headline, hint="; ".join(status.errors[1:]))
        else:
            return None
        return render_store_error(request, error)


def render_store_error(request: HttpRequest, error: StoreError) -> HttpResponse:
    context = {"error": error}
    if getattr(request, "htmx", False):
        return render_banner(
            request, "sessions_admin/error.html#banner", context, status=error.status_code
        )
    return render(request, "sessions_admin/error.html", context, status=error.status_code)


class BadParameterMiddleware:
    """The one place a :class:`~sessions_admin.params.BadParameter` becomes the 400
    page (or the htmx banner) naming the parameter: views never catch it. So does
    an admin date drill-down no date can have, which the admin itself cannot survive."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(
        self, request: HttpRequest, view: Callable, args: Any, kwargs: Any
    ) -> HttpResponse | None:
        # The admin marks each of its views with the ModelAdmin that serves it.
        field = getattr(getattr(view, "model_admin", None), "date_hierarchy", None)
        if field:
            try:
                check_date_hierarchy(request, field)
            except BadParameter as exc:
                return bad_request(request, exc)
        return None

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, BadParameter):
            return bad_request(request, exception)
        return None


#: The date drill-down's parameters and the values a date can take.
_DATE_PARTS = (("year", 1, 9999), ("month", 1, 12), ("day", 1, 31))


def check_date_hierarchy(request: HttpRequest, field: str) -> None:
    """Refuse a date drill-down no date can have (``?started_at__year=99999``).

    The admin builds a ``datetime`` from these parameters; thirty digits of year
    overflow inside it (a 500), and February 30 fails there too. Here each is a
    :class:`BadParameter` that names the parameter.
    """
    parts: dict[str, int | None] = {}
    for part, low, high in _DATE_PARTS:
        parts[part] = params.whole(request.GET, f"{field}__{part}", minimum=low, maximum=high)
    year, month, day = parts["year"], parts["month"], parts["day"]
    if year and month and day:
        try:
            date(year, month, day)
        except ValueError:
            raise BadParameter(
                f"{field}__day: {year}-{month:02d} has no day {day}.", name=f"{field}__day"
            ) from None
