"""Activity frames: the requests of a session, the frames of one request, and orphans.

* ``/sessions/<id>/frames/``: the session's ``activity-<requestId>.jsonl`` files.
  With ``?trace=<id>`` (the transcript links here from a message's trace id) it
  also searches those files for the trace's frames, within a byte budget.
* ``/sessions/<id>/frames/<request_id>/``: one request's frames, read a page at a
  time from a byte ``offset`` (``?n=`` carries the line number of that offset as a
  display hint), filtered by ``kind``, ``q`` (text), ``trace`` and ``span``;
  ``?end=1`` opens the last stretch of the file. At the end of a file that is still
  being written, an htmx poll (``?tail=1``) appends new rows until it stops changing.
* ``/frames/orphans/``: frame directories left without a session row, disk use, and
  their removal through :func:`sessions_admin.deletion.remove_orphan_frames`.

Both session subpages accept a session id with no row in the store (orphans stay
readable). Every path is checked by :mod:`sessions_admin.store.frames`; what it
refuses becomes a 400 page saying why, a missing file a 404, never a traceback.

Layout: a module per screen, plus what they share.

* :mod:`~sessions_admin.views.frames.session_requests`: the ``frames`` subpage and the
  trace search.
* :mod:`~sessions_admin.views.frames.request_frames`: the ``frames_request`` subpage and
  its live tail.
* :mod:`~sessions_admin.views.frames.orphans`: the orphans page.
* :mod:`~sessions_admin.views.frames.render`: the table rows and the SVG timeline, as
  values for the template.
* :mod:`~sessions_admin.views.frames.common`: query parameters, problem pages, request URLs.

The tunables (page sizes, budgets) live in, and are patched on, the module that uses them.
"""
