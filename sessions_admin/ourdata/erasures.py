"""The erasure receipt: proof that one principal's data was erased, kept when the data is gone.

Ours, in Django's own database (never the runtime's store), written by
:func:`sessions_admin.deletion.erasure.erase_principal` and shown read-only in
the admin beside the deletion audit. A receipt names the principal and counts
what went per kind, but never lists the erased session ids: it keeps their
SHA-256 (:func:`ids_digest`), so whoever holds the ids can check them against
it. The JSON form (:meth:`Erasure.as_json`) is described by
``docs/erasure-receipt.schema.json``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from django.db import models

from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.jobs import Job
from sessions_admin.ourdata.storeids import ExactJSONField, encode_id
from sessions_admin.ourdata.storename import STORE_NAME_CHARS, OfThisStore, current_store

#: The kinds a receipt counts and verifies, in the order pages show them.
#: The longest request reference a receipt keeps.
REFERENCE_CHARS = 200

KINDS = (
    ("sessions", "sessions"),
    ("messages", "messages"),
    ("state_rows", "state rows"),
    ("frame_dirs", "frame directories"),
    ("index_entries", "index entries"),
    ("rollup_rows", "rollup rows"),
    ("our_records", "our records"),
)


def id_text(session_id: str | bytes) -> str:
    """A session id as the digest reads it: text as is, a BLOB as ``x'<hex>'``."""
    if isinstance(session_id, bytes):
        return f"x'{session_id.hex()}'"
    return str(session_id)


def shown_principal(principal: object) -> str:
    """A principal as our text columns keep it for display: NUL written as U+2400."""
    return str(principal).replace("\x00", "\u2400")


def ids_digest(session_ids: Iterable[str | bytes]) -> str:
    """SHA-256 (hex) of the sorted ids (:func:`id_text`) joined by ``"\\n"``, UTF-8."""
    texts = sorted(id_text(sid) for sid in session_ids)
    data = "\n".join(texts).encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


class WithAudit(models.Manager):
    """Receipts with their audit row, which holds who, when and the counts."""

    def get_queryset(self) -> models.QuerySet:
        return super().get_queryset().select_related("audit")


class Erasure(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        OK = "ok", "Done"
        PARTIAL = "partial", "Partly done"
        REFUSED = "refused", "Refused"

    #: The store erased from (several hosts may share this database).
    store_name = models.CharField(max_length=STORE_NAME_CHARS, default=current_store)
    #: The principal as pages show it (NUL as U+2400, which PostgreSQL's text cannot hold).
    principal = models.TextField()
    #: The principal exactly (:func:`~sessions_admin.ourdata.jobs.encode_id`): what
    #: receipts are found by, so ids that read alike never share a receipt.
    principal_key = models.TextField(default="", db_index=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.RUNNING)
    #: Directories removed and entries unlinked (the audit counts directories alone).
    frame_dirs = models.PositiveBigIntegerField(default=0)
    index_entries = models.PositiveBigIntegerField(default=0)
    rollup_rows = models.PositiveBigIntegerField(default=0)
    our_records = models.PositiveBigIntegerField(default=0)
    #: What the verification found left, per kind of :data:`KINDS` (0: none left).
    verification = models.JSONField(default=dict)
    #: Sessions of the principal the store holds after the erasure (made meanwhile).
    appeared = models.PositiveIntegerField(default=0)
    ids_sha256 = models.CharField(max_length=64, blank=True)
    detail = models.TextField(blank=True)
    #: Ids whose frames directory could not be removed: the next run tries them again.
    pending_frames = ExactJSONField(default=list, blank=True)
    #: The erasure's deletion audit row: who, when, and the rows, bytes and review
    #: records it took are the audit's (the properties below), never copied here.
    audit = models.OneToOneField(DeletionAudit, on_delete=models.PROTECT, related_name="receipt")
    #: The job that carries the erasure out; its progress is the receipt's until it ends.
    job = models.OneToOneField(
        Job, null=True, blank=True, on_delete=models.SET_NULL, related_name="receipt"
    )
    #: The request this erasure answers (a ticket, a letter), as staff gave it; optional.
    reference = models.CharField(max_length=REFERENCE_CHARS, blank=True)
    #: Records of hidden values revealed in the erased sessions, deleted (their count kept).
    reveals = models.PositiveBigIntegerField(default=0)
    #: Another receipt this run found nothing new beyond ("nothing left to erase").
    see_receipt = models.PositiveBigIntegerField(null=True, blank=True)

    objects = WithAudit.from_queryset(OfThisStore)()

    class Meta:
        ordering = ["-id"]
        default_permissions = ("view",)
        permissions = [("erase_principal", "Can erase a principal's data")]

    def __str__(self) -> str:
        return f"Erasure of {self.principal!r} by {self.actor} ({self.get_status_display()})"

    # What the audit row holds, read through it (one row, joined by the manager).
    started_at = property(lambda self: self.audit.started_at)
    finished_at = property(lambda self: self.audit.finished_at)
    user = property(lambda self: self.audit.user)
    actor = property(lambda self: self.audit.actor)
    sessions = property(lambda self: self.audit.sessions_deleted)
    messages = property(lambda self: self.audit.messages_deleted)
    state_rows = property(lambda self: self.audit.state_deleted)
    frame_bytes = property(lambda self: self.audit.frame_bytes_removed)
    #: Review records about the erased sessions that went with them: notes deleted,
    #: labels taken off, queue items marked as deleted (their verdict text cleared).
    notes = property(lambda self: self.audit.notes_deleted)
    labels = property(lambda self: self.audit.labels_removed)
    review_items = property(lambda self: self.audit.review_items_marked)

    @classmethod
    def of_principal(cls, principal: object) -> models.QuerySet[Erasure]:
        """This store's receipts for exactly ``principal``."""
        return cls.objects.of_this_store().filter(principal_key=encode_id(principal))

    def counts(self) -> dict[str, int]:
        return {kind: getattr(self, kind) for kind, _ in KINDS}

    def as_json(self) -> dict[str, Any]:
        """The receipt to attach to a ticket (``docs/erasure-receipt.schema.json``)."""
        return {
            "receipt": self.pk,
            "principal": self.principal,
            "status": self.status,
            "by": self.actor,
            "started_at": _utc(self.started_at),
            "finished_at": _utc(self.finished_at),
            "erased": {**self.counts(), "frame_bytes": self.frame_bytes},
            "verification": {kind: int(self.verification.get(kind, 0)) for kind, _ in KINDS},
            "reference": self.reference,
            "review_records": {
                "notes": self.notes,
                "labels": self.labels,
                "queue_items_marked": self.review_items,
                "reveals": self.reveals,
            },
            "appeared_during_erasure": self.appeared,
            "session_ids_sha256": self.ids_sha256,
            "detail": self.detail,
            "see_receipt": self.see_receipt,
            **({"job": self._job_json()} if self.job_id else {}),
        }

    def _job_json(self) -> dict[str, Any]:
        job = self.job
        return {
            "phase": job.phase,
            "runs": job.runs,
            "sessions_done": job.sessions,
            "sessions_total": job.total,
        }


def _utc(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
