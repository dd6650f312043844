"""The deletion audit: one row per delete the dashboard runs, in Django's own database.

Ours, never in the runtime's store. :mod:`sessions_admin.deletion` writes these
rows (through :func:`~sessions_admin.deletion.audit.audited`); the admin shows
them read-only. The model belongs to the ``sessions_admin`` app (it is re-exported by
:mod:`sessions_admin.models`, so migrations and ``app_label`` are unchanged). Each row
is saved when the run starts ("running") and again when it ends: a ``post_save``
receiver sees every finished delete with its ``pk`` as the audit id.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models

from sessions_admin.ourdata.storename import STORE_NAME_CHARS, current_store


class DeletionAudit(models.Model):
    class Operation(models.TextChoices):
        DELETE_SESSION = "delete_session", "Delete one session"
        WIPE_SESSION = "wipe_session", "Delete one session and its frames"
        DELETE_FILTERED = "delete_filtered", "Delete a filtered set"
        CLEAR_ALL = "clear_all", "Clear all sessions"
        RETENTION = "retention", "Retention"
        ORPHAN_CHILDREN = "orphan_children", "Remove orphaned messages and state"
        ORPHAN_FRAMES = "orphan_frames", "Remove orphaned frame directories"

    class Outcome(models.TextChoices):
        RUNNING = "running", "Running"
        OK = "ok", "Done"
        PARTIAL = "partial", "Partly done"
        REFUSED = "refused", "Refused"
        FAILED = "failed", "Failed"

    store_name = models.CharField(
        max_length=STORE_NAME_CHARS,
        default=current_store,
        db_index=True,
        help_text="the store this delete ran on (SESSIONS_ADMIN_STORE_NAME)",
    )
    started_at = models.DateTimeField(auto_now_add=True, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor = models.CharField(max_length=200, help_text="username, or the command that ran")
    operation = models.CharField(max_length=32, choices=Operation.choices)
    target = models.JSONField(default=dict, help_text="session ids or the filter")
    sessions_deleted = models.PositiveBigIntegerField(default=0)
    # What our own records lost with those sessions (see ourdata.review.forget).
    notes_deleted = models.PositiveBigIntegerField(default=0)
    labels_removed = models.PositiveBigIntegerField(default=0)
    review_items_marked = models.PositiveBigIntegerField(default=0)
    messages_deleted = models.PositiveBigIntegerField(default=0)
    state_deleted = models.PositiveBigIntegerField(default=0)
    frame_dirs_removed = models.PositiveIntegerField(default=0)
    frame_bytes_removed = models.PositiveBigIntegerField(default=0)
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.RUNNING)
    detail = models.TextField(blank=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return f"{self.get_operation_display()} by {self.actor} ({self.get_outcome_display()})"
