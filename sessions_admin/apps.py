from django.apps import AppConfig


class SessionsAdminConfig(AppConfig):
    name = "sessions_admin"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported in ready(): the check reaches the store layer, whose models need the
        # app registry loaded.
        from django.core import checks

        from sessions_admin.checks import check_store_schema

        checks.register(check_store_schema, "store")
