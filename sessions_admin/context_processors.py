from __future__ import annotations

from django.http import HttpRequest

from sessions_admin.store.connection import frames_root, is_read_only, store_path


def store(request: HttpRequest) -> dict:
    return {
        "store_path": str(store_path()),
        "store_read_only": is_read_only(),
        "frames_root": str(frames_root()),
    }
