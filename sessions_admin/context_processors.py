from __future__ import annotations

from django.conf import settings
from django.http import HttpRequest

from sessions_admin.store.connection import frames_root, is_read_only, store_path


def store(request: HttpRequest) -> dict:
    return {
        "store_path": str(store_path()),
        "store_read_only": is_read_only(),
        "frames_root": str(frames_root()),
        # This instance is one host of a fleet: the main menu leads to the fleet's pages.
        "in_fleet": settings.FLEET_PUBLISH,
    }
