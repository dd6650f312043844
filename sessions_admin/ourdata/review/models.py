"""The review models: notes, labels on sessions, review queues, their items and the
verdicts later ones replaced.

Session and message ids are the store's, kept as plain values (no foreign key
can point into the runtime's store), each beside ``store_name``.
"""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from django.db import models
from django.db.models import Q

from sessions_admin.ourdata.storeids import StoreIdField
from sessions_admin.ourdata.storename import STORE_NAME_CHARS, OfThisStore, current_store

#: A note's text, at most (the issue's figure).
NOTE_MAX_CHARS = 10_000
#: A review queue holds at most this many sessions; a longer source is cut, saying so.
QUEUE_MAX_ITEMS = 10_000


def _store_field() -> models.CharField:
    return models.CharField(max_length=STORE_NAME_CHARS, default=current_store)


class Label(models.Model):
    """An outcome label defined in the admin ("regression", "needs-followup")."""

    name = models.CharField(
        max_length=64,
        unique=True,
        validators=[
            RegexValidator(
                r"^[^\s,]+$", "A label name is one word: no spaces or commas (it goes in URLs)."
            )
        ],
    )
    color = models.CharField(
        max_length=7,
        default="#64748b",
        validators=[RegexValidator(r"^#[0-9a-fA-F]{6}$", "A colour is #rrggbb.")],
    )
    description = models.CharField(max_length=300, blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


def _session_created_field() -> models.BigIntegerField:
    return models.BigIntegerField(
        null=True,
        blank=True,
        help_text="the session's created_at when this row was written: a session the "
        "runtime re-creates under the same id has another, and drops this row",
    )


class SessionLabel(models.Model):
    """One label on one session of one store.

    The session's sort values are copied here (when labelled, refreshed by each
    ``sync_index`` pass, see :mod:`.labels`) so the list's ``?label=`` filter reads
    a page in label order from our own indexes; ``None`` where the store holds a
    value no integer stands for in SQLite's order (text, a BLOB, a fraction).
    """

    store_name = _store_field()
    session_id = StoreIdField()
    label = models.ForeignKey(Label, on_delete=models.CASCADE, related_name="uses")
    added_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    added_at = models.DateTimeField(auto_now_add=True)
    session_created_at = _session_created_field()
    session_last_active = models.BigIntegerField(null=True, blank=True)
    #: NULL in the store sorts as 0 (the list's ``COALESCE``): copied as 0.
    session_turn_count = models.BigIntegerField(null=True, blank=True)

    objects = OfThisStore.as_manager()

    class Meta:
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(
                fields=["store_name", "session_id", "label"], name="one_label_per_session"
            )
        ]
        # The list's ?label= filter walks (store, label, sort value, session id) in order.
        indexes = [
            models.Index(fields=["store_name", "label", "session_id"]),
            *(
                models.Index(
                    fields=["store_name", "label", f"session_{column}", "session_id"],
                    name=f"label_by_{column}",
                )
                for column in ("last_active", "created_at", "turn_count")
            ),
        ]

    def __str__(self) -> str:
        return f"{self.label_id} on {self.session_id}"


class Note(models.Model):
    """Plain text about a session, or about one message of it (``message_id``)."""

    store_name = _store_field()
    session_id = StoreIdField()
    message_id = models.BigIntegerField(null=True, blank=True)
    text = models.TextField(max_length=NOTE_MAX_CHARS)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    #: Kept when the account goes, so a note still says who wrote it.
    author_name = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)
    session_created_at = _session_created_field()
    edited_at = models.DateTimeField(null=True, blank=True)

    objects = OfThisStore.as_manager()

    class Meta:
        ordering = ["created_at", "id"]
        default_permissions = ("view",)
        permissions = [
            ("annotate", "Can annotate (notes, labels, verdicts)"),
            ("delete_any_note", "Can delete any note"),
        ]
        indexes = [models.Index(fields=["store_name", "session_id", "message_id"])]
        constraints = [
            models.CheckConstraint(condition=~Q(text=""), name="note_has_text"),
            models.CheckConstraint(
                condition=Q(edited_at__isnull=True) | Q(edited_at__gte=models.F("created_at")),
                name="note_edited_after_written",
            ),
        ]

    def __str__(self) -> str:
        return f"note by {self.author_name} on {self.session_id}"


class ReviewQueue(models.Model):
    """The sessions a dashboard URL listed, in its order, to be reviewed one by one."""

    store_name = _store_field()
    name = models.CharField(max_length=200)
    source = models.TextField(help_text="the dashboard URL the sessions came from")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    created_at = models.DateTimeField(auto_now_add=True)
    total = models.PositiveIntegerField(default=0)
    #: The source listed more than QUEUE_MAX_ITEMS sessions; the queue holds the first ones.
    capped = models.BooleanField(default=False)
    #: Sessions the source listed that the queue left out: ids no text names (NULL, a
    #: BLOB, TEXT that is not UTF-8), or sessions gone from the store meanwhile.
    skipped = models.PositiveIntegerField(default=0)

    objects = OfThisStore.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        default_permissions = ("view",)
        permissions = [("manage_review_queues", "Can manage review queues")]

    def __str__(self) -> str:
        return self.name


class ReviewItem(models.Model):
    """One session of a queue: who holds it, and the verdict once given."""

    class Verdict(models.TextChoices):
        OPEN = "", "not reviewed"
        PASS = "pass", "pass"
        FAIL = "fail", "fail"
        SKIP = "skip", "skip"

    queue = models.ForeignKey(ReviewQueue, on_delete=models.CASCADE, related_name="items")
    store_name = _store_field()
    session_id = StoreIdField()
    session_created_at = _session_created_field()
    position = models.PositiveIntegerField()
    verdict = models.CharField(max_length=8, choices=Verdict.choices, blank=True, default="")
    text = models.TextField(blank=True, max_length=NOTE_MAX_CHARS)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(null=True, blank=True)
    claimed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    claimed_at = models.DateTimeField(null=True, blank=True)
    #: The session was deleted (by us or the runtime): the verdict stays, the text went.
    session_deleted = models.BooleanField(default=False)
    #: The verdict was given by a queue manager over another reviewer's claim or verdict.
    by_manager = models.BooleanField(default=False)

    objects = OfThisStore.as_manager()

    class Meta:
        ordering = ["queue", "position"]
        default_permissions = ()
        constraints = [
            models.UniqueConstraint(fields=["queue", "session_id"], name="one_item_per_session"),
            models.CheckConstraint(
                condition=Q(verdict__in=["", "pass", "fail", "skip"]), name="review_item_verdict"
            ),
            # A reviewed time belongs to a verdict; a claim has the time it was taken.
            models.CheckConstraint(
                condition=Q(reviewed_at__isnull=True) | ~Q(verdict=""),
                name="review_item_reviewed_has_verdict",
            ),
            models.CheckConstraint(
                condition=Q(claimed_by__isnull=True) | Q(claimed_at__isnull=False),
                name="review_item_claim_has_time",
            ),
        ]
        indexes = [
            # "next" reads the first open item of a queue: only open items are indexed.
            models.Index(
                fields=["queue", "position"],
                condition=Q(verdict="", session_deleted=False),
                name="review_open_items",
            ),
            # "next" first looks for the reviewer's own live claim: without this it
            # reads every open item of the queue (10,000 in a new one).
            models.Index(
                fields=["claimed_by", "queue", "position"],
                condition=Q(verdict="", session_deleted=False),
                name="review_open_claims",
            ),
            models.Index(fields=["store_name", "session_id"], name="review_item_session"),
            # The tally of a queue's items (progress_of) reads this index alone, not
            # the rows: 6 ms for two 10,000-item queues instead of 36.
            models.Index(
                fields=["queue", "verdict", "session_deleted", "claimed_at"], name="review_tally"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.session_id} in queue {self.queue_id}: {self.verdict or 'open'}"


class EarlierVerdict(models.Model):
    """A verdict a later one replaced: what it was, who gave it and when, so a
    changed verdict keeps its history."""

    item = models.ForeignKey(ReviewItem, on_delete=models.CASCADE, related_name="earlier_verdicts")
    verdict = models.CharField(
        max_length=8, choices=[c for c in ReviewItem.Verdict.choices if c[0]]
    )
    text = models.TextField(blank=True, max_length=NOTE_MAX_CHARS)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
    )
    #: Kept when the account goes, so the history still says who.
    reviewer_name = models.CharField(max_length=150, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    by_manager = models.BooleanField(default=False)
    replaced_at = models.DateTimeField()

    class Meta:
        ordering = ["item", "replaced_at", "id"]
        default_permissions = ()
        constraints = [
            models.CheckConstraint(
                condition=Q(verdict__in=["pass", "fail", "skip"]), name="earlier_verdict_verdict"
            ),
            models.CheckConstraint(
                condition=Q(reviewed_at__isnull=True) | Q(replaced_at__gte=models.F("reviewed_at")),
                name="earlier_verdict_replaced_after_given",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} by {self.reviewer_name or 'someone'}, replaced"


class LabelCopiesMark(models.Model):
    """Up to which store message the label rows' sort copies are current (per store).

    A session's sort values change when a message is appended (the runtime's
    trigger), so the sessions whose copies may be stale are those with a
    message after :attr:`message_id`; the list reads those few from the store.
    """

    store_name = models.CharField(max_length=STORE_NAME_CHARS, unique=True, default=current_store)
    message_id = models.BigIntegerField()
    refreshed_at = models.DateTimeField(auto_now=True)

    objects = OfThisStore.as_manager()

    class Meta:
        default_permissions = ()

    def __str__(self) -> str:
        return f"label copies of {self.store_name} at message {self.message_id}"
