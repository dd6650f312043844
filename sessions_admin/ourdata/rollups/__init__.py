"""Rollups behind the overview and the tool pages, kept in the side database by the sync.

Importing this package registers :class:`~.listener.RollupListener` in
:data:`sessions_admin.ourdata.sync.LISTENERS`; the pages read the tables
through :mod:`.figures` and :mod:`.calls` only (sums of rollup cells and
index seeks, never the store).
"""

from sessions_admin.ourdata.rollups.listener import RollupListener
from sessions_admin.ourdata.sync import LISTENERS

ROLLUPS = RollupListener()
if not any(isinstance(listener, RollupListener) for listener in LISTENERS):
    LISTENERS.append(ROLLUPS)
