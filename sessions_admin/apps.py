from django.apps import AppConfig


class SessionsAdminConfig(AppConfig):
    name = "sessions_admin"
    verbose_name = "Agent sessions"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Imported in ready(): the check reaches the store layer, whose models need the
        # app registry loaded.
        from django.core import checks
        from django.db.models.signals import post_save

        from sessions_admin.checks import check_store_schema
        from sessions_admin.logs import log_deletion
        from sessions_admin.ourdata import sync
        from sessions_admin.ourdata.fleet import FLEET_DIRTY
        from sessions_admin.ourdata.index import SEARCH_INDEX
        from sessions_admin.ourdata.rollups import ROLLUPS

        # The sync's consumers, in the order a pass feeds them.
        sync.register(SEARCH_INDEX)
        sync.register(ROLLUPS)
        sync.register(FLEET_DIRTY)  # notes nothing unless this host publishes to a fleet

        checks.register(check_store_schema, "store")
        # By label, not by class: the audit model's module may move, the log stays.
        post_save.connect(
            log_deletion, sender="sessions_admin.DeletionAudit", dispatch_uid="log_deletion"
        )
