"""The fleet's directory: every host's sessions, published by each host into the shared database.

A store belongs to one host and only a process beside it may read it, so each
host's ``sync_index`` publishes its share (:mod:`.publish`): a :class:`FleetHost`
row saying who it is, where its dashboard answers and how its last pass went, and
a :class:`FleetSession` row per session of its store. Any instance reads the whole
fleet from these two tables; stores, side indexes and frames never leave their host.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models

from sessions_admin.ourdata.storeids import StoreIdField, encode_id
from sessions_admin.ourdata.storename import STORE_NAME_CHARS

#: How much of a title the directory keeps (the host's own pages show it whole).
TITLE_CHARS = 300
#: How much of a target, profile or principal the directory keeps for display.
NAME_CHARS = 300
#: ``FleetSession.newest`` of a session whose last activity is not a readable time.
NO_TIME = -(2**63)


def exact_key(value: object) -> str:
    """SHA-256 of a store value's exact encoding (:func:`encode_id`): a fixed-size key
    for an id or principal of any length, storage class or byte (NUL included)."""
    return hashlib.sha256(encode_id(value).encode("utf-8", "surrogatepass")).hexdigest()


class FleetHost(models.Model):
    """One host of the fleet: its store's name, its dashboard's address, its last pass."""

    class Outcome(models.TextChoices):
        OK = "ok", "ok"
        FAILED = "failed", "failed"

    store_name = models.CharField(max_length=STORE_NAME_CHARS, unique=True)
    #: When the host first published (a fleet erasure asked for before it gives it a part
    #: only once it publishes a session of that principal).
    added_at = models.DateTimeField(auto_now_add=True, null=True)
    #: Where this host's own dashboard answers (``SESSIONS_ADMIN_PUBLIC_URL``), no slash at
    #: the end; empty when the host did not say (its rows then link nowhere).
    public_url = models.CharField(max_length=500, blank=True)
    last_pass_at = models.DateTimeField(null=True, blank=True)
    last_outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.OK)
    last_error = models.TextField(blank=True)
    #: Messages the store held beyond the side index at the end of the last pass.
    behind_messages = models.BigIntegerField(default=0)
    #: Sessions whose directory rows wait for the next publish (the database was away).
    unpublished = models.BigIntegerField(default=0)
    #: Sessions whose id is not text (a BLOB, a number): the side index and so the
    #: directory cannot list them; the host's own pages do.
    unlisted = models.BigIntegerField(default=0)
    sessions = models.BigIntegerField(default=0)
    messages = models.BigIntegerField(default=0)
    failed_calls_24h = models.BigIntegerField(default=0)

    class Meta:
        ordering = ["store_name"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return self.store_name


class FleetSession(models.Model):
    """One session of one host, as its store holds it (the id exactly)."""

    host = models.ForeignKey(FleetHost, on_delete=models.CASCADE, related_name="directory")
    #: :func:`exact_key` of the session id: unique per host whatever the id holds.
    key = models.CharField(max_length=64)
    session_id = StoreIdField()
    target = models.CharField(max_length=NAME_CHARS, blank=True)
    profile = models.CharField(max_length=NAME_CHARS, blank=True)
    #: The principal as pages show it (NUL as U+2400), and exactly (:func:`exact_key`).
    principal = models.CharField(max_length=NAME_CHARS, blank=True)
    principal_key = models.CharField(max_length=64)
    title = models.CharField(max_length=TITLE_CHARS, blank=True)
    #: The store's epoch milliseconds (None: not a readable time).
    created_at = models.BigIntegerField(null=True)
    last_active = models.BigIntegerField(null=True)
    #: ``last_active``, or :data:`NO_TIME` below every time: the pages' order, never NULL.
    newest = models.BigIntegerField(default=NO_TIME)
    messages = models.BigIntegerField(default=0)
    tool_calls = models.BigIntegerField(default=0)
    failed_calls = models.BigIntegerField(default=0)

    class Meta:
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(fields=["host", "key"], name="fleet_session_once_per_host"),
            models.CheckConstraint(
                condition=models.Q(messages__gte=0, tool_calls__gte=0, failed_calls__gte=0)
                & models.Q(failed_calls__lte=models.F("tool_calls")),
                name="fleet_session_counts_add_up",
            ),
        ]
        indexes = [
            # The fleet's sessions newest first (keyset), over all hosts or one.
            models.Index(fields=["-newest", "-id"], name="fleet_session_newest"),
            models.Index(fields=["host", "-newest", "-id"], name="fleet_session_host_newest"),
            models.Index(
                fields=["principal_key", "-newest", "-id"], name="fleet_session_principal"
            ),
            models.Index(fields=["target", "-newest", "-id"], name="fleet_session_target"),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} on {self.host_id}"


class FleetErasure(models.Model):
    """One erasure of a principal across the fleet: a part per host, each carried out by
    that host's own job (:mod:`sessions_admin.deletion.fleet`), each with its own receipt."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        OK = "ok", "Done"
        PARTIAL = "partial", "Partly done"
        REFUSED = "refused", "Refused"

    requested_at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    actor = models.CharField(max_length=200)
    #: The principal as pages show it (NUL as U+2400), and exactly (:func:`encode_id`).
    principal = models.TextField()
    principal_id_exact = models.TextField()
    principal_key = models.CharField(max_length=64, db_index=True)
    reference = models.CharField(max_length=200, blank=True)
    #: What the directory counted when it was asked for (the phrase's numbers).
    sessions_seen = models.PositiveBigIntegerField(default=0)
    hosts_seen = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-requested_at", "-id"]
        default_permissions = ("view",)

    def __str__(self) -> str:
        return f"Fleet erasure of {self.principal!r} ({self.status})"

    @property
    def status(self) -> str:
        """ "ok" only when every part is; pending or running while any is."""
        states = {part.status for part in self.parts.all()}
        for state in (self.Status.RUNNING, self.Status.PENDING):
            if state in states:
                return state
        if states <= {self.Status.OK}:
            return self.Status.OK
        if states == {self.Status.REFUSED}:
            return self.Status.REFUSED
        return self.Status.PARTIAL


class FleetErasurePart(models.Model):
    """One host's part of a fleet erasure: pending until the host's next pass takes it,
    then its own erasure job and receipt (by number, in that host's store's records)."""

    erasure = models.ForeignKey(FleetErasure, on_delete=models.CASCADE, related_name="parts")
    host = models.ForeignKey(FleetHost, on_delete=models.PROTECT, related_name="erasure_parts")
    status = models.CharField(
        max_length=16, choices=FleetErasure.Status.choices, default=FleetErasure.Status.PENDING
    )
    #: The host's own receipt (:class:`~sessions_admin.ourdata.erasures.Erasure`), once taken.
    receipt = models.PositiveBigIntegerField(null=True, blank=True)
    sessions = models.PositiveBigIntegerField(default=0)
    messages = models.PositiveBigIntegerField(default=0)
    ids_sha256 = models.CharField(max_length=64, blank=True)
    detail = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)
    #: Added after the request: the host published a session of the principal later.
    late = models.BooleanField(default=False)

    class Meta:
        default_permissions = ()
        ordering = ["host__store_name"]
        constraints = [
            models.UniqueConstraint(fields=["erasure", "host"], name="fleet_part_once_per_host"),
        ]

    def __str__(self) -> str:
        return f"{self.host_id}: {self.status}"
