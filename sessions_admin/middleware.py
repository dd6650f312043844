"""Store problems become a page (or an htmx banner) that says what is wrong.

Never a traceback: a locked, missing, foreign or timed-out store raises
:class:`StoreError` (or a ``DatabaseError`` we translate), and this renders it
with the cause and what to do. A :class:`~sessions_admin.params.BadParameter`
a view lets through becomes the 400 page naming the parameter.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import DatabaseError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from sessions_admin.params import BadParameter
from sessions_admin.store.connection import (
    StoreError,
    describe_database_error,
    store_status,
)
from sessions_admin.views.errors import render_bad_parameter
from sessions_admin.views.responses import render_banner

logger = logging.getLogger(__name__)


class StoreErrorMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, BadParameter):
            return render_bad_parameter(request, str(exception))
        if isinstance(exception, StoreError):
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
