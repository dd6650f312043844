"""Error pages in the dashboard's own layout (no traceback ever reaches staff)."""

from __future__ import annotations

from django.contrib.admin.exceptions import DisallowedModelAdminToField
from django.contrib.admin.options import TO_FIELD_VAR
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template import TemplateDoesNotExist
from django.utils.cache import patch_vary_headers
from django_htmx.http import reselect

from sessions_admin.views.responses import render_banner


def _page(
    request: HttpRequest, status: int, title: str, message: str, links: list | None = None
) -> HttpResponse:
    try:
        return render(
            request,
            "sessions_admin/http_error.html",
            {"status": status, "title": title, "message": message, "links": links or []},
            status=status,
        )
    except TemplateDoesNotExist:  # pragma: no cover - only if templates are missing
        return HttpResponse(f"{status} {title}", status=status, content_type="text/plain")


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """The one 400: Django's ``handler400`` and every
    :class:`~sessions_admin.params.BadParameter` (through
    :class:`~sessions_admin.middleware.BadParameterMiddleware`), whose text names
    the parameter first. For htmx, a banner in the page's flash area, not a page
    in a table."""
    message = str(exception or "The request was malformed.")
    if isinstance(exception, DisallowedModelAdminToField):
        # The admin's own refusal does not say which parameter it read.
        message = f"{TO_FIELD_VAR}: {message}"
    if getattr(request, "htmx", False):
        # The banner names the field, so a filter form shows the refusal beside it (app.js).
        field = getattr(exception, "name", "") if request.method == "GET" else ""
        response = render_banner(
            request,
            "sessions_admin/error.html#banner",
            {"error": {"message": message, "field": field}},
            status=400,
        )
        reselect(response, ".banner")  # a form that selects part of its answer (hx-select)
    else:
        response = _page(request, 400, "Bad request", message, _ways_back(request, exception))
    # The view raised, so its own @vary_on_headers never saw this response.
    patch_vary_headers(response, ("HX-Request",))
    return response


def _ways_back(request: HttpRequest, exception: Exception | None) -> list[tuple[str, str]]:
    """Links from a refused GET back to the page it came from: without the parameter
    it refused (the others kept), and without any."""
    if request.method != "GET":
        return []
    links = []
    name = getattr(exception, "name", None)
    if isinstance(name, str) and name in request.GET:
        kept = request.GET.copy()
        kept.pop(name)
        query = kept.urlencode()
        links.append((f"This page without “{name}”", request.path + ("?" + query if query else "")))
    if request.GET:
        links.append(("This page without its filters", request.path))
    return links


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = str(exception) if exception and str(exception) else "You may not see this page."
    return _page(request, 403, "Not allowed", message)


def conflict(request: HttpRequest, message: str) -> HttpResponse:
    """A 409: the request was sound, but what it would change is not the asker's to
    change now (another reviewer's claim or verdict); the sentence says why."""
    if getattr(request, "htmx", False):
        return render_banner(
            request, "sessions_admin/error.html#banner", {"error": {"message": message}}, status=409
        )
    return _page(request, 409, "Not yours to change", message)


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    message = "There is nothing at this address."
    if exception and exception.args and isinstance(exception.args[0], str):
        message = exception.args[0]
    return _page(request, 404, "Not found", message)


def server_error(request: HttpRequest) -> HttpResponse:
    return render(
        request,
        "sessions_admin/http_error.html",
        {
            "status": 500,
            "title": "Something went wrong",
            "message": "The error was logged. Try again, or tell the dashboard's maintainers.",
        },
        status=500,
    )
