"""Every delete the dashboard makes: the runtime's cascade and its bulk forms.

This package sits above both kinds of data, because a delete writes to both:
the runtime's store (through :mod:`sessions_admin.store.cascade`, where the SQL
is) and ours (the :class:`~sessions_admin.ourdata.audit.DeletionAudit` row, the
side index and rollups told what is gone). The store is the runtime's; it keeps
writing while we delete. So:

* The cascade's SQL lives in exactly one function,
  :func:`sessions_admin.store.cascade.delete_rows`: one ``BEGIN IMMEDIATE``,
  messages, state, then the session row, in the runtime's order. Only this
  package calls it, through :func:`.cascade.cascade_delete`.
* Bulk operations (a filtered set, retention, clear-all) are many short
  batches. Each batch is chosen outside any transaction, sized by the number
  of rows it will delete so it holds the write lock for a few tens of
  milliseconds, then re-checked *inside* its transaction: a session that
  stopped matching (it became active again, or is already gone) is left whole.
  Between batches we pause, so a runtime writer sleeping in SQLite's busy
  handler gets the lock; its longest wait stays well under half a second.
  A crash or a kill between (or inside) batches leaves every session either
  fully present or fully gone, because each batch is one transaction.
* Frame directories (``<frames root>/<id>/``) are removed only after the rows
  are committed, through :func:`sessions_admin.store.frames.remove_session_dir`
  (which never follows a symlink or leaves the root). A refusal is reported,
  never raised: the rows are gone either way.
* Every operation runs inside :func:`.audit.audited`, which writes a
  :class:`~sessions_admin.ourdata.audit.DeletionAudit` row in Django's own database:
  "running" before it touches the store, the counts and outcome after, so even a
  crash leaves a trace.
* After a commit, :func:`.cascade.cascade_delete` is the one place every delete
  passes with the ids it removed (where the side index and rollups forget them).
* Read-only mode refuses everything with :class:`StoreReadOnly`.

The package, each module using only the ones above it:

* :mod:`.results` -- what a delete takes and gives back: :class:`Actor`,
  :class:`DeletionResult`, and :class:`SessionNotFound` (the store's
  :class:`Counts`, :class:`FramesReport`, previews and counts are re-exported here);
* :mod:`.audit` -- :func:`~.audit.audited`, the bookkeeping of the
  :class:`~sessions_admin.ourdata.audit.DeletionAudit` row every operation goes
  through, and the read-only refusal;
* :mod:`.cascade` -- :func:`~.cascade.cascade_delete` (the store's cascade, then
  our data forgets the ids) and one session: delete, wipe;
* :mod:`.bulk` -- the paced batch runner and everything built on it:
  filtered sets, clear-all, retention, selected ids, and the clear-all job's request;
  Its pacing settings (``MIN_PAUSE_MS``, ``MAX_BATCH_SESSIONS``,
  the row budgets…) are read at run time from that module: tune them there
  (they are not re-exported here, so ``monkeypatch.setattr`` on the package
  fails loudly instead of silently changing nothing);
* :mod:`.jobs`, :mod:`.receipts`, :mod:`.worker` -- long work as a job
  (an erasure, the admin's clear-all): carried out by ``manage.py run_jobs``,
  resumed after a crash, final only when verified;
* :mod:`.erasure` -- a principal's erasure asked for, or run in this process;
* :mod:`.orphans` -- leftovers removed: messages and state without a session
  row, and frame directories without one (found by :mod:`sessions_admin.store.orphans`).
"""

from sessions_admin.deletion.bulk import (
    BatchHook,
    clear_all,
    delete_filtered,
    delete_older_than,
    delete_sessions,
    request_clear_all,
    retention_filter,
)
from sessions_admin.deletion.cascade import delete_session
from sessions_admin.deletion.orphans import remove_orphan_frames, remove_orphaned_children
from sessions_admin.deletion.results import Actor, DeletionResult, SessionNotFound
from sessions_admin.store.cascade import (
    Counts,
    FramesReport,
    SessionPreview,
    count_all,
    count_ids,
    count_matching,
    preview_session,
)
from sessions_admin.store.orphans import (
    OrphanedChildren,
    find_orphan_frames,
    find_orphaned_children,
)

__all__ = [
    "Actor",
    "BatchHook",
    "Counts",
    "DeletionResult",
    "FramesReport",
    "OrphanedChildren",
    "SessionNotFound",
    "SessionPreview",
    "clear_all",
    "count_all",
    "count_ids",
    "count_matching",
    "delete_filtered",
    "delete_older_than",
    "delete_session",
    "delete_sessions",
    "find_orphan_frames",
    "find_orphaned_children",
    "preview_session",
    "remove_orphan_frames",
    "remove_orphaned_children",
    "retention_filter",
    "request_clear_all",
]
