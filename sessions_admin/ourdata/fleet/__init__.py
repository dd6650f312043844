"""One dashboard over every host: the directory each host publishes into the shared database.

:mod:`.models` holds the directory's tables, :mod:`.dirty` the sync listener that
notes which sessions changed, :mod:`.publish` what a host writes after each pass.
"""

from sessions_admin.ourdata.fleet.dirty import FleetDirty

FLEET_DIRTY = FleetDirty()

__all__ = ["FLEET_DIRTY", "FleetDirty"]
