from django.apps import AppConfig


class SessionsAdminConfig(AppConfig):
    name = "sessions_admin"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.db.models.signals import post_save

        from sessions_admin import checks  # noqa: F401  (registers the system checks)
        from sessions_admin.logs import log_deletion

        # By label, not by class: the audit model's module may move, the log stays.
        post_save.connect(
            log_deletion, sender="sessions_admin.DeletionAudit", dispatch_uid="log_deletion"
        )
