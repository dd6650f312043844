"""Who may see what: staff only, and each action behind its own permission.

Anonymous users are sent to the login page (htmx requests get an
``HX-Redirect`` so the whole page goes there, not a login form inside a
table); signed-in users who are not staff, or lack the permission, get 403.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect

from sessions_admin.ourdata.storename import identity_problem
from sessions_admin.store.connection import StoreError, store_status

VIEW_SESSIONS = "sessions_admin.view_session"
DELETE_SESSIONS = "sessions_admin.delete_session"
CLEAR_ALL_SESSIONS = "sessions_admin.clear_all_sessions"
#: Notes, labels and verdicts (ourdata.review); staff without it read them only.
ANNOTATE = "sessions_admin.annotate"
#: Delete (not edit) another reviewer's note.
DELETE_ANY_NOTE = "sessions_admin.delete_any_note"
#: Make review queues.
MANAGE_REVIEW_QUEUES = "sessions_admin.manage_review_queues"
ERASE_PRINCIPAL = "sessions_admin.erase_principal"

View = Callable[..., HttpResponse]


def staff_view(
    permission: str | None = VIEW_SESSIONS, *, needs_store: bool = True
) -> Callable[[View], View]:
    """Require a signed-in staff user with ``permission``; then a healthy store.

    The store check is cached for a few seconds (see ``store.health``) and
    turns a missing, foreign or locked store into a friendly page instead of
    an SQL error deep inside the view.
    """

    def decorator(view: View) -> View:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            user = request.user
            if not user.is_authenticated:
                if getattr(request, "htmx", False):
                    login = resolve_url(settings.LOGIN_URL)
                    # Back to the page the browser shows (not the fragment asked for),
                    # encoded: a path holding "&", "#" or "%2F" must come back as it was.
                    back = request.htmx.current_url_abs_path or request.path
                    query = urlencode({REDIRECT_FIELD_NAME: back})
                    return HttpResponseClientRedirect(f"{login}?{query}")
                return redirect_to_login(request.get_full_path())
            if not user.is_staff or not user.is_active:
                raise PermissionDenied("Staff only.")
            if permission and not user.has_perm(permission):
                raise PermissionDenied(f"You need the permission {permission!r}.")
            if needs_store:
                status = store_status()
                if not status.ok:
                    raise StoreError(status.headline, hint="; ".join(status.errors[1:]))
                if problem := identity_problem():
                    raise StoreError(problem)
            return view(request, *args, **kwargs)

        # Read by tests/test_routes.py, which proves every routed view has a guard
        # (the method decorators above it copy this along with the name).
        wrapped.staff_only = True  # type: ignore[attr-defined]
        wrapped.staff_permission = permission  # type: ignore[attr-defined]
        return wrapped

    return decorator
