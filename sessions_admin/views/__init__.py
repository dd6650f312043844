"""One thin module per screen; store access lives in :mod:`sessions_admin.store`."""
