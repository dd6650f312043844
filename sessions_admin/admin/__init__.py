"""The Django admin over the store (:mod:`.store`), its clear-all (:mod:`.clear_all`) and our
records (:mod:`.ourrecords`): read-only, fast on a big store, deletes via the cascade.

* ``Session`` and ``Message`` are registered read-only (no add, no change).
  ``SessionState`` has a composite key, which the admin cannot register; the
  session's page shows its state rows instead.
* Nothing here runs a full ``COUNT(*)`` or ``SELECT DISTINCT`` per page: the
  paginator counts at most ``COUNT_CAP + 1`` rows, the full count is off, the
  target filter lists targets by index seeks (``queries.distinct_targets``),
  search is an index range on the id, and the default order follows an index.
* Deletes (the admin's delete page, the "delete selected" action, the "Clear
  all sessions" page) all call :mod:`sessions_admin.deletion`, which
  writes the audit rows; the stock ``delete_selected`` would fail on the
  foreign keys and skip the audit. ``DeletionAudit`` is shown read-only, and
  beside it the erasure receipts (``Erasure``).
"""

from sessions_admin.admin import ourrecords, store
from sessions_admin.admin.clear_all import clear_all_phrase, confirms_clear_all

__all__ = ["clear_all_phrase", "confirms_clear_all", "ourrecords", "store"]
