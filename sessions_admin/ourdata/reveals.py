"""Who revealed which hidden values, when and why: a row per reveal, kept read-only.

Masking (:mod:`sessions_admin.masking`) hides secrets and personal data wherever a
value is shown; a staff member with ``sessions_admin.reveal_hidden`` may see one
message's values in full for a stated reason. Each such answer is recorded here
before it is sent, naming the store, the session and the message.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from sessions_admin.ourdata.storeids import StoreIdField
from sessions_admin.ourdata.storename import STORE_NAME_CHARS, OfThisStore, current_store
from sessions_admin.sqlhelpers import chunks

#: A reason is a ticket number or a sentence, not an essay.
REASON_MAX_CHARS = 500
REVEAL_PERMISSION = "sessions_admin.reveal_hidden"


class Reveal(models.Model):
    """One message's hidden values shown in full to one person, for a reason."""

    store_name = models.CharField(max_length=STORE_NAME_CHARS, default=current_store)
    revealed_at = models.DateTimeField(auto_now_add=True, db_index=True)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL
    )
    #: Kept when the account goes, so the record still says who it was.
    actor = models.CharField(max_length=150)
    session_id = StoreIdField()
    #: None: the whole session, exported unmasked.
    message_id = models.BigIntegerField(null=True, blank=True)
    reason = models.TextField(max_length=REASON_MAX_CHARS)

    objects = OfThisStore.as_manager()

    class Meta:
        ordering = ["-revealed_at", "-id"]
        default_permissions = ("view",)
        permissions = [("reveal_hidden", "Can reveal hidden values")]
        indexes = [models.Index(fields=["store_name", "session_id"])]
        constraints = [
            models.CheckConstraint(condition=~Q(reason=""), name="reveal_has_a_reason"),
        ]

    def __str__(self) -> str:
        what = "the session" if self.message_id is None else f"message {self.message_id}"
        return f"{self.actor} revealed {what} ({self.revealed_at:%Y-%m-%d %H:%M})"

    @classmethod
    def forget_sessions(cls, session_ids: list, store_name: str | None = None) -> int:
        """Delete the reveal records of these sessions (an erasure); returns how many."""
        store = store_name or current_store()
        ids = [sid for sid in dict.fromkeys(session_ids) if isinstance(sid, str)]
        return sum(
            cls.objects.filter(store_name=store, session_id__in=chunk).delete()[0]
            for chunk in chunks(ids, 500)
        )
