"""The search index over every transcript, in the side database.

Importing this package registers :data:`~.listener.SEARCH_INDEX` with the
sync (:data:`sessions_admin.ourdata.sync.LISTENERS`). The semantics of a hit
are in :mod:`.text`, the tables in :mod:`.listener`, the queries in
:mod:`.search` (the search page) and :mod:`.sessions` (the list's filters).
"""

from sessions_admin.ourdata.index.listener import SEARCH_INDEX
from sessions_admin.ourdata.sync import LISTENERS

if SEARCH_INDEX not in LISTENERS:
    LISTENERS.append(SEARCH_INDEX)
