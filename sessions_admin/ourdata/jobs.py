"""Long work as a job: recorded before it acts, carried out by a worker, resumed after a crash.

A :class:`Job` (an erasure, a clear-all) is written by the request that asks
for it and carried out by ``manage.py run_jobs`` beside the server. The
worker holds a *lease* on the row it runs, renewed with every step it
records; a worker that dies (``kill -9``, a power cut) stops renewing it, and
the next worker takes the job over from what its row says. The sessions a job
deletes are its :class:`JobSession` rows, written before the first delete, in
order: ``cursor`` is how far the deletes went, ``inflight`` the batch begun
but not yet recorded, so a run that died mid-batch is counted exactly.

Session ids are kept as :func:`~sessions_admin.ourdata.storeids.encode_id` text,
which holds any value the store's ``id`` column can in a column PostgreSQL and
SQLite both take.
"""

from __future__ import annotations

import os
import socket
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.storeids import decode_id
from sessions_admin.ourdata.storename import STORE_NAME_CHARS, OfThisStore, current_store

#: How long a worker's claim on a job lasts unless renewed (each recorded step renews it).
LEASE = timedelta(seconds=30)


def worker_name() -> str:
    """``host:pid``: which process holds a lease, and whether it is still alive."""
    return f"{socket.gethostname()[:60]}:{os.getpid()}"


def worker_is_dead(worker: str) -> bool:
    """True when ``worker`` names a process of this host that no longer runs."""
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname()[:60] or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class JobQuerySet(OfThisStore):
    def unfinished(self) -> JobQuerySet:
        return self.exclude(phase=Job.Phase.DONE)


class Job(models.Model):
    class Kind(models.TextChoices):
        ERASE_PRINCIPAL = "erase_principal", "Erase a principal's data"
        CLEAR_ALL = "clear_all", "Clear all sessions"

    class Phase(models.TextChoices):
        QUEUED = "queued", "Queued"
        LISTING = "listing", "Listing the sessions"
        DELETING = "deleting", "Deleting sessions"
        FRAMES = "frames", "Removing frame directories"
        FINISHING = "finishing", "Forgetting and verifying"
        #: The receipt is final; the search index purges what the erasure tombstoned.
        COMPACTING = "compacting", "Compacting the search index"
        DONE = "done", "Done"

    store_name = models.CharField(max_length=STORE_NAME_CHARS, default=current_store)
    kind = models.CharField(max_length=32, choices=Kind.choices)
    phase = models.CharField(max_length=16, choices=Phase.choices, default=Phase.QUEUED)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor = models.CharField(max_length=200)
    audit = models.OneToOneField(
        DeletionAudit, null=True, blank=True, on_delete=models.SET_NULL, related_name="job"
    )
    #: The principal erased, as :func:`encode_id` text ("" for a clear-all).
    principal_key = models.TextField(blank=True)
    wipe_frames = models.BooleanField(default=False)
    #: Sessions the store held when staff confirmed (the typed phrase's count).
    expected = models.PositiveBigIntegerField(default=0)
    #: Sessions listed so far, and how many listings ran (an erasure lists twice).
    listed = models.PositiveBigIntegerField(default=0)
    passes = models.PositiveSmallIntegerField(default=0)
    #: The last ``JobSession.seq`` whose batch is deleted and recorded; and its frames.
    cursor = models.BigIntegerField(default=0)
    frames_cursor = models.BigIntegerField(default=0)
    #: A batch begun and not yet recorded: its seq range and what it counted just before.
    inflight = models.JSONField(null=True, blank=True)
    sessions = models.PositiveBigIntegerField(default=0)
    messages = models.PositiveBigIntegerField(default=0)
    state_rows = models.PositiveBigIntegerField(default=0)
    frame_dirs = models.PositiveBigIntegerField(default=0)
    frame_bytes = models.PositiveBigIntegerField(default=0)
    #: Symlinks or files unlinked where a session's frame directory would be.
    frame_entries = models.JSONField(default=list, blank=True)
    #: Frame paths that could not be removed: (encoded id, why), for the receipt.
    frames_refused = models.JSONField(default=list, blank=True)
    runs = models.PositiveIntegerField(default=0)
    worker = models.CharField(max_length=80, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)
    #: Why the last run stopped, when it stopped on an error (the next run tries again).
    detail = models.TextField(blank=True)

    objects = JobQuerySet.as_manager()

    class Meta:
        ordering = ["id"]
        default_permissions = ("view",)
        indexes = [models.Index(fields=["store_name", "phase"], name="job_store_phase")]
        constraints = [
            models.CheckConstraint(
                condition=Q(kind__in=["erase_principal", "clear_all"]), name="job_kind_known"
            ),
            models.CheckConstraint(
                condition=Q(
                    phase__in=[
                        "queued",
                        "listing",
                        "deleting",
                        "frames",
                        "finishing",
                        "compacting",
                        "done",
                    ]
                ),
                name="job_phase_known",
            ),
            models.CheckConstraint(
                condition=Q(phase__in=["compacting", "done"]) | Q(finished_at__isnull=True),
                name="job_finished_only_when_final",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk} ({self.get_phase_display()})"

    @property
    def principal(self) -> object:
        return decode_id(self.principal_key) if self.principal_key else None

    @property
    def done(self) -> bool:
        return self.phase == self.Phase.DONE

    @property
    def final(self) -> bool:
        """Its record is final (the receipt written): only housekeeping may be left."""
        return self.phase in (self.Phase.COMPACTING, self.Phase.DONE)

    @property
    def total(self) -> int:
        """Sessions to delete: those listed, or the confirmed count before the list."""
        return max(self.listed, self.expected, self.sessions)

    def seconds_left(self, now=None) -> float | None:
        """At the rate of the deletes so far; None before there is a rate."""
        if self.phase != self.Phase.DELETING or not self.sessions or self.started_at is None:
            return None
        elapsed = ((now or timezone.now()) - self.started_at).total_seconds()
        if elapsed <= 0:
            return None
        return max(0.0, (self.total - self.sessions) * elapsed / self.sessions)

    def stalled(self, now=None) -> bool:
        """Claimed once, and its worker stopped renewing the lease (the next one goes on)."""
        now = now or timezone.now()
        return not self.done and self.lease_until is not None and self.lease_until < now


class JobSession(models.Model):
    """One session a job will delete (or, ``carried``, an earlier erasure's leftover)."""

    job = models.ForeignKey(Job, on_delete=models.CASCADE, related_name="targets")
    seq = models.BigIntegerField()
    session_key = models.TextField()
    #: Listed from an earlier erasure's receipt to finish its frames; not counted again.
    carried = models.BooleanField(default=False)

    class Meta:
        ordering = ["job", "seq"]
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(fields=["job", "seq"], name="jobsession_job_seq"),
        ]
        indexes = [models.Index(fields=["session_key"], name="jobsession_session")]

    def __str__(self) -> str:
        return f"#{self.seq} of job {self.job_id}"

    @property
    def session_id(self) -> object:
        return decode_id(self.session_key)
