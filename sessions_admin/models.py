"""The app's models, gathered where Django looks for them.

The store models (unmanaged, read-only) live in :mod:`sessions_admin.store.models`;
:class:`DeletionAudit`, the erasure receipts (:class:`Erasure`) and the review models
(notes, labels, queues, in :mod:`sessions_admin.ourdata.review.models`), ours, in
:mod:`sessions_admin.ourdata` (Django's
``default`` database, never the runtime's store). Importing them here registers
them with the app.
"""

from __future__ import annotations

from sessions_admin.ourdata.audit import AuditSession, DeletionAudit
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.ourdata.fleet.models import (
    FleetErasure,
    FleetErasurePart,
    FleetHost,
    FleetSession,
)
from sessions_admin.ourdata.jobs import Job, JobSession
from sessions_admin.ourdata.reveals import Reveal
from sessions_admin.ourdata.review.models import (
    EarlierVerdict,
    Label,
    LabelCopiesMark,
    Note,
    ReviewItem,
    ReviewQueue,
    SessionLabel,
)
from sessions_admin.store.models import Message, Session, SessionState

__all__ = [
    "AuditSession",
    "DeletionAudit",
    "EarlierVerdict",
    "Erasure",
    "FleetErasure",
    "FleetErasurePart",
    "FleetHost",
    "FleetSession",
    "Job",
    "JobSession",
    "Label",
    "LabelCopiesMark",
    "Message",
    "Note",
    "Reveal",
    "ReviewItem",
    "ReviewQueue",
    "Session",
    "SessionLabel",
    "SessionState",
]
