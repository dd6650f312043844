"""The app's models, gathered where Django looks for them.

The store models (unmanaged, read-only) live in :mod:`sessions_admin.store.models`;
:class:`DeletionAudit` and the erasure receipts (:class:`Erasure`), ours, in
:mod:`sessions_admin.ourdata` (Django's
``default`` database, never the runtime's store). Importing them here registers
them with the app.
"""

from __future__ import annotations

from sessions_admin.ourdata.audit import DeletionAudit
from sessions_admin.ourdata.erasures import Erasure
from sessions_admin.store.models import Message, Session, SessionState

__all__ = ["DeletionAudit", "Erasure", "Message", "Session", "SessionState"]
