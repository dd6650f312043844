"""Rollups behind the overview and the tool pages, kept in the side database by the sync.

The app registers :data:`ROLLUPS` with the sync in its ``ready()``; the pages
read the tables through :mod:`.figures` and :mod:`.calls` only (sums of rollup
cells and index seeks, never the store).
"""

from sessions_admin.ourdata.rollups.listener import RollupListener

ROLLUPS = RollupListener()

__all__ = ["ROLLUPS", "RollupListener"]
