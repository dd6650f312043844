"""Our own data, kept apart from the runtime's: everything under the data folder.

The runtime's data (``store.db`` and the frames root) is read, and deleted
only through :mod:`sessions_admin.deletion`. What the dashboard itself
keeps lives here, under ``settings.VAR_DIR`` (``SESSIONS_ADMIN_VAR_DIR``),
never in the store's folder:

* the side database (``side.sqlite3``, with the trigram index over message
  text in ``side-text.sqlite3`` beside it): the search index over every
  transcript and the rollups behind the overview and tool pages, both fed by
  one pass of ``manage.py sync_index`` (:mod:`.sync`);
* the deletion audit (:mod:`.audit`, a Django model in Django's own database),
  written by :mod:`sessions_admin.deletion` for every delete it runs.

Modules here never open ``store.db`` themselves: they read the store through
:mod:`sessions_admin.store.feed`.
"""
