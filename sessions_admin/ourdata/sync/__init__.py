"""The sync: one pass over the store's new messages feeds every consumer of our side database.

:mod:`.passes` runs a pass (and the forgetting after our deletes), :mod:`.state`
keeps the side database's bookkeeping, :mod:`.progress` tells the pages how far
a pass has got, and :mod:`.listeners` holds the consumers the app registered.
"""

from sessions_admin.ourdata.sync.listeners import LISTENERS, SyncListener, listeners, register
from sessions_admin.ourdata.sync.passes import (
    Progress,
    SyncReport,
    forget_sessions,
    purge_step,
    rebuild,
    sync_once,
)
from sessions_admin.ourdata.sync.progress import BuildProgress, LastRun, build_progress, last_run
from sessions_admin.ourdata.sync.state import (
    BATCH_SIZE,
    ERROR_CHARS,
    LAYOUT_VERSION,
    SideLayoutChanged,
    SyncState,
    has_tables,
    is_current,
    prepare,
    read_state,
)

__all__ = [
    "BATCH_SIZE",
    "ERROR_CHARS",
    "LAYOUT_VERSION",
    "LISTENERS",
    "BuildProgress",
    "LastRun",
    "Progress",
    "SideLayoutChanged",
    "SyncListener",
    "SyncReport",
    "SyncState",
    "build_progress",
    "forget_sessions",
    "has_tables",
    "is_current",
    "last_run",
    "listeners",
    "prepare",
    "purge_step",
    "read_state",
    "rebuild",
    "register",
    "sync_once",
]
