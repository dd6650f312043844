"""``/sessions/<id>/delete/``: confirm, then delete one session through the cascade.

GET shows what will go (messages, state rows, and the frames directory's size
for "also remove activity frames"): for htmx a ``<dialog data-open-modal>``
that app.js opens with Cancel focused, otherwise a plain page. POST deletes
through :mod:`sessions_admin.deletion` (which writes the audit row):

* htmx from the list (``from=list``): an empty body plus the flash message out
  of band; the form's ``hx-target="closest tr"`` + ``hx-swap="delete"`` drops the row;
* htmx from the session page: ``HX-Redirect`` to the list, the message queued;
* without JavaScript: a 303 to the list, the message queued.
"""

from __future__ import annotations

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods
from django.views.decorators.vary import vary_on_headers
from django_htmx.http import HttpResponseClientRedirect, trigger_client_event

from sessions_admin import deletion
from sessions_admin.access import DELETE_SESSIONS, staff_view
from sessions_admin.store import queries
from sessions_admin.store.connection import is_read_only
from sessions_admin.templatetags.sessions_admin import short_id
from sessions_admin.views.responses import HttpResponseSeeOther

TEMPLATE = "sessions_admin/delete.html"


@require_http_methods(["GET", "HEAD", "POST"])
@vary_on_headers("HX-Request")
@staff_view(DELETE_SESSIONS)
def delete_session(request: HttpRequest, session_id: str) -> HttpResponse:
    origin = "list" if request.GET.get("from", request.POST.get("from")) == "list" else "page"
    if request.method == "POST":
        return _delete(request, session_id, origin)
    session = queries.get_session(session_id)
    context = {
        "session": session,
        "preview": deletion.preview_session(session_id),
        "origin": origin,
        "read_only": is_read_only(),
    }
    template = TEMPLATE + "#dialog" if request.htmx else TEMPLATE
    return render(request, template, context)


def _delete(request: HttpRequest, session_id: str, origin: str) -> HttpResponse:
    wipe = request.POST.get("wipe_frames") == "1"
    result = deletion.delete_session(
        session_id, actor=deletion.Actor.of(request.user), wipe_frames=wipe
    )
    text = f"Deleted session {short_id(session_id)}: {result.describe()}"
    level = messages.WARNING if result.frames and result.frames.refused else messages.SUCCESS
    if request.htmx and origin == "list":
        response = render(
            request,
            TEMPLATE + "#deleted",
            {"message": text, "level": "warning" if level == messages.WARNING else "success"},
        )
        # The list's count listens for this and counts again.
        return trigger_client_event(response, "sessions-changed")
    messages.add_message(request, level, text)
    if request.htmx:
        return HttpResponseClientRedirect(reverse("sessions"))
    return HttpResponseSeeOther(reverse("sessions"))
