"""The search index over every transcript, in the side database.

The app registers :data:`~.listener.SEARCH_INDEX` with the sync in its
``ready()``. The semantics of a hit are in :mod:`.text`, the tables in
:mod:`.listener`, the queries in :mod:`.search` (the search page) and
:mod:`.sessions` (the list's filters).
"""

from sessions_admin.ourdata.index.listener import SEARCH_INDEX

__all__ = ["SEARCH_INDEX"]
