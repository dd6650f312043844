"""The login page, which on a machine set up by ``make run`` says where the local
account's password is kept (``ensure_staff`` wrote it there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import views as auth_views


class LoginView(auth_views.LoginView):
    template_name = "registration/login.html"
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context = super().get_context_data(**kwargs)
        password_file = Path(settings.VAR_DIR) / "admin-password"
        # Only the path, and only where ensure_staff made a local account.
        context["local_password_file"] = password_file if password_file.is_file() else None
        return context
