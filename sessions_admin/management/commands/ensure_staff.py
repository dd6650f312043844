"""Make sure a local staff account exists; print how to log in.

A new account gets a random password, shown once and kept in
``var/admin-password`` (mode 600) for the local user; nothing is baked in.
An existing account is left alone.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create a local superuser with a random password if none exists, and say how to log in."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--username", default="admin")

    def handle(self, *args, username: str, **options) -> None:
        users = get_user_model()
        password_file = Path(settings.VAR_DIR) / "admin-password"
        user = users.objects.filter(username=username).first()
        if user is None:
            password = secrets.token_urlsafe(12)
            users.objects.create_superuser(username=username, email="", password=password)
            password_file.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            password_file.touch(mode=0o600)
            password_file.chmod(0o600)  # a file left from an older run, too
            password_file.write_text(password + "\n")
            self.stdout.write(
                self.style.SUCCESS(
                    f"Created staff account {username!r} with password {password!r} "
                    f"(also saved in {password_file})."
                )
            )
            return
        hint = (
            f"its password is in {password_file}"
            if password_file.exists()
            else f"reset its password with `manage.py changepassword {username}`"
        )
        self.stdout.write(f"Log in as {username!r}: {hint}.")
