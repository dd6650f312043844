"""The URL map under another path (tests/test_template_tags.py: a cached URL follows it)."""

from django.urls import include, path

urlpatterns = [path("moved/", include("sessions_admin.urls"))]
