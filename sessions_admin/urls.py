"""Every screen of the dashboard, in one place.

Each view function carries its own guard (``@staff_view()``, and
``@staff_view(DELETE_SESSIONS)`` on what deletes); the session dispatcher
checks staff as well but is never the only check. ``tests/test_routes.py``
walks this whole map (and the admin's) as anonymous, non-staff, staff and
staff with the delete permission, so a route added here without a guard fails.

Session ids in URLs (:mod:`sessions_admin.ids`):

=================================  ==============================================
``/sessions/<id>/<subpage>``       the id percent-encoded, ``/`` → ``%2F`` and
                                   every other reserved character included
``/sessions/~/<subpage>?id=<id>``  the empty id and ids made only of dots, which
                                   a browser would collapse as path segments
raw path (``RAW_URI``)             behind gunicorn the undecoded first segment is
                                   the id, exactly
decoded path only                  (dev server, test client) the readings of the
                                   path are tried against the store, the whole
                                   path as an id first
=================================  ==============================================
"""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from sessions_admin.converters import ANY_PATH, ID64
from sessions_admin.views import (
    compare,
    deletes,
    export,
    failures,
    fleet,
    health,
    login,
    notes,
    overview,
    principals,
    reveal,
    review_export,
    review_labels,
    reviews,
    search,
    sessions,
    tools,
    transcript,
)
from sessions_admin.views.frames import orphans, request_frames, session_requests
from sessions_admin.views.routing import SessionPage, SessionPages, session_dispatch

#: The pages under ``/sessions/<id>/``: what follows ``<id>/`` (a regex, no
#: trailing slash), the view, and whether an id without a session row is served.
SESSION_PAGES = SessionPages(
    SessionPage("", "", transcript.session_page),
    # In this order the readings of an ambiguous decoded path are tried.
    SessionPage(
        "frames", r"frames", session_requests.session_requests_page, allows_missing_session=True
    ),
    SessionPage(
        "frames_request",
        r"frames/(?P<request_id>[^/]+)",
        request_frames.request_frames_page,
        allows_missing_session=True,
    ),
    SessionPage("delete", r"delete", deletes.delete_session),
    SessionPage("export", r"export", export.export),
    SessionPage("stats", r"stats", transcript.stats_page),
    SessionPage("state", r"state", transcript.state_page),
    SessionPage(
        "message_value",
        # ASCII digits only (\d takes "²"), at most 19: a rowid is 64-bit.
        r"messages/(?P<message_id>-?[0-9]{1,19})/(?P<field>content|tool_args|tool_result)",
        transcript.message_value,
    ),
    SessionPage("state_value", r"state/(?P<key>[^/]+)/value", transcript.state_value),
    # Review (issue 20): notes, each a POST.
    SessionPage("notes", r"notes", notes.add_note),
    SessionPage("note_edit", r"notes/(?P<note_id>[0-9]{1,19})/edit", notes.edit_note),
    SessionPage("note_delete", r"notes/(?P<note_id>[0-9]{1,19})/delete", notes.delete_note),
    SessionPage("labels", r"labels", review_labels.session_labels),
    # Hidden values shown in full for a reason, audited (a POST).
    SessionPage("reveal", r"reveal", reveal.reveal_message),
)

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("healthz", health.healthz, name="healthz"),  # the one page without a login
    path("login/", login.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("sessions/", sessions.session_list, name="sessions"),
    path("targets/", sessions.targets, name="targets"),
    path("search/", search.search, name="search"),
    path("compare/", compare.compare, name="compare"),
    path("failures/", failures.failure_list, name="failures"),
    path("tools/", tools.tool_list, name="tools"),
    path(f"tools/<{ANY_PATH}:name>/", tools.tool_detail, name="tool"),
    path("frames/orphans/", orphans.orphans_page, name="frames_orphans"),
    # Review queues (issue 20).
    path("reviews/", reviews.review_list, name="reviews"),
    path("reviews/<int:queue_id>/", reviews.review_page, name="review"),
    path("reviews/<int:queue_id>/next/", reviews.review_next, name="review_next"),
    path("reviews/<int:queue_id>/verdict/", reviews.review_verdict, name="review_verdict"),
    path("reviews/<int:queue_id>/export/", review_export.review_export, name="review_export"),
    path("fleet/", fleet.fleet_hosts, name="fleet"),
    path("fleet/sessions/", fleet.fleet_sessions, name="fleet_sessions"),
    path(f"fleet/principals/<{ANY_PATH}:rest>/", fleet.fleet_principal, name="fleet_principal"),
    path(f"fleet/erasures/<{ID64}:pk>/", fleet.fleet_erasure, name="fleet_erasure"),
    path("principals/", principals.principal_list, name="principals"),
    path(f"principals/erasures/<{ID64}:pk>/", principals.erasure_receipt, name="erasure"),
    # The id percent-encoded (or ~/?id=); "<id>/erase/" is the POST that erases.
    path(f"principals/<{ANY_PATH}:rest>/", principals.principal_dispatch, name="principal"),
    # Any character, newlines included: a session id may hold one.
    path(
        f"sessions/<{ANY_PATH}:rest>/", session_dispatch, {"pages": SESSION_PAGES}, name="session"
    ),
    path("admin/", admin.site.urls),
]

handler400 = "sessions_admin.views.errors.bad_request"
handler403 = "sessions_admin.views.errors.permission_denied"
handler404 = "sessions_admin.views.errors.page_not_found"
handler500 = "sessions_admin.views.errors.server_error"
