"""The deletion audit: one row per delete the dashboard runs, in Django's own database.

Ours, never in the runtime's store. :mod:`sessions_admin.deletion` writes these
rows (through :func:`~sessions_admin.deletion.audit.audited`); the admin shows
them read-only. The model belongs to the ``sessions_admin`` app (it is re-exported by
:mod:`sessions_admin.models`, so migrations and ``app_label`` are unchanged). Each row
is saved when the run starts ("running") and again when it ends: a ``post_save``
receiver sees every finished delete with its ``pk`` as the audit id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from django.conf import settings
from django.db import models

from sessions_admin.ourdata.storeids import ExactJSONField, StoreIdField, to_column
from sessions_admin.ourdata.storename import STORE_NAME_CHARS, OfThisStore, current_store
from sessions_admin.sqlhelpers import chunks


class DeletionAudit(models.Model):
    class Operation(models.TextChoices):
        DELETE_SESSION = "delete_session", "Delete one session"
        WIPE_SESSION = "wipe_session", "Delete one session and its frames"
        DELETE_FILTERED = "delete_filtered", "Delete a filtered set"
        CLEAR_ALL = "clear_all", "Clear all sessions"
        RETENTION = "retention", "Retention"
        ORPHAN_CHILDREN = "orphan_children", "Remove orphaned messages and state"
        ORPHAN_FRAMES = "orphan_frames", "Remove orphaned frame directories"
        ERASE_PRINCIPAL = "erase_principal", "Erase a principal's data"

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
    target = ExactJSONField(default=dict, help_text="session ids or the filter")
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

    objects = OfThisStore.as_manager()

    class Meta:
        ordering = ["-started_at", "-id"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return f"{self.get_operation_display()} by {self.actor} ({self.get_outcome_display()})"

    def save(self, *args, **kwargs) -> None:
        super().save(*args, **kwargs)
        fields = kwargs.get("update_fields")
        if fields is None or "target" in fields:
            self.name_sessions()

    def name_sessions(self) -> None:
        """Keep :class:`AuditSession` equal to the session ids the target lists."""
        listed = self.target.get("session_ids") if isinstance(self.target, dict) else None
        ids = list(dict.fromkeys(sid for sid in listed or [] if isinstance(sid, str)))
        AuditSession.objects.filter(audit=self).delete()
        AuditSession.objects.bulk_create(
            [AuditSession(audit=self, session_id=sid, key=id_key(sid)) for sid in ids],
            batch_size=500,
        )


def id_key(session_id: object) -> str:
    """SHA-256 of a session id as our columns keep it: an index entry of fixed size, where
    an id of any length (PostgreSQL's b-tree takes at most about 2.7 kB) would not fit."""
    return hashlib.sha256(str(to_column(session_id)).encode("utf-8", "surrogatepass")).hexdigest()


class AuditSession(models.Model):
    """One session id an audit row names: finding the audits about a session is an index
    seek here (on ``key``), where the target's JSON has no portable index."""

    audit = models.ForeignKey(DeletionAudit, on_delete=models.CASCADE, related_name="named")
    session_id = StoreIdField()
    key = models.CharField(max_length=64, db_index=True)

    class Meta:
        default_permissions = ()

    def __str__(self) -> str:
        return f"{self.session_id} in audit {self.audit_id}"


def _named(target: object, ids: set[str]) -> list[str]:
    listed = target.get("session_ids") if isinstance(target, dict) else None
    if not isinstance(listed, list):
        return []
    return [sid for sid in listed if isinstance(sid, str) and sid in ids]


def _audits_listing(session_ids: Iterable[str]) -> set[int]:
    """The audit rows that list any of these ids (index seeks on :class:`AuditSession`)."""
    found: set[int] = set()
    for chunk in chunks(list(dict.fromkeys(session_ids)), 500):
        found.update(
            AuditSession.objects.filter(key__in=[id_key(sid) for sid in chunk]).values_list(
                "audit_id", flat=True
            )
        )
    return found


def audits_naming(session_ids: Iterable[str]) -> int:
    """How many audit rows list any of these session ids in their target."""
    return len(_audits_listing(session_ids))


def forget_session_ids(session_ids: Iterable[str], reason: str) -> int:
    """Take these ids out of every audit row that lists them; returns the rows changed.

    The row stays (who deleted what, when, and the counts): only the ids go,
    replaced by how many were taken out and why (``reason``, e.g. "erasure 12").
    """
    ids = set(session_ids)
    changed = 0
    for row in DeletionAudit.objects.filter(pk__in=_audits_listing(ids)).only("id", "target"):
        named = set(_named(row.target, ids))
        if not named:
            continue
        target = dict(row.target)
        target["session_ids"] = [sid for sid in target["session_ids"] if sid not in named]
        target["ids_erased"] = int(target.get("ids_erased", 0)) + len(named)
        target["ids_erased_by"] = reason
        # An update, not save(): the audit's post_save logs a finished delete once.
        DeletionAudit.objects.filter(pk=row.pk).update(target=target)
        row.target = target
        row.name_sessions()
        changed += 1
    return changed
