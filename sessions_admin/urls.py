from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path

from sessions_admin.views import (  # noqa: F401
    deletes,
    export,
    frames,
    health,
    overview,
    routing,
    sessions,
    tools,
    transcript,
)

urlpatterns = [
    path("", overview.overview, name="overview"),
    path("healthz", health.healthz, name="healthz"),
    path(
        "login/",
        auth_views.LoginView.as_view(
            template_name="registration/login.html", redirect_authenticated_user=True
        ),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("sessions/", sessions.session_list, name="sessions"),
    path("targets/", sessions.targets, name="targets"),
    path("tools/", tools.tool_list, name="tools"),
    path("tools/<path:name>/", tools.tool_detail, name="tool"),
    path("frames/orphans/", frames.orphans_page, name="frames_orphans"),
    path("sessions/<path:rest>/", routing.session_dispatch, name="session"),
    path("admin/", admin.site.urls),
]

handler400 = "sessions_admin.views.errors.bad_request"
handler403 = "sessions_admin.views.errors.permission_denied"
handler404 = "sessions_admin.views.errors.page_not_found"
handler500 = "sessions_admin.views.errors.server_error"
