"""The session page: header, transcript, state."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from sessions_admin.store import queries
from sessions_admin.views.routing import register


@register("")
@require_safe
def session_page(request: HttpRequest, session_id: str) -> HttpResponse:
    session = queries.get_session(session_id)
    return render(request, "sessions_admin/session.html", {"session": session})
