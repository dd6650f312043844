from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from sessions_admin.views import (  # noqa: F401
    deletes,
    export,
    frames,
    health,
    routing,
    search,
    sessions,
    transcript,
)

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="sessions", permanent=False)),
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
    path("search/", search.search, name="search"),
    path("frames/orphans/", frames.orphans_page, name="frames_orphans"),
    path("sessions/<path:rest>/", routing.session_dispatch, name="session"),
    path("admin/", admin.site.urls),
]

handler400 = "sessions_admin.views.errors.bad_request"
handler403 = "sessions_admin.views.errors.permission_denied"
handler404 = "sessions_admin.views.errors.page_not_found"
handler500 = "sessions_admin.views.errors.server_error"
