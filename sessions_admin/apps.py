from django.apps import AppConfig


class SessionsAdminConfig(AppConfig):
    name = "sessions_admin"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from sessions_admin import checks  # noqa: F401  (registers the system checks)
