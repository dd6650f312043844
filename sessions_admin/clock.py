"""The one clock: the current time as the store writes it, epoch milliseconds.

Call it as ``clock.now_ms()`` (the module attribute), so a test patches one
name, ``sessions_admin.clock.now_ms``, and every page and pass sees that time.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """The current time in integer milliseconds since the epoch (UTC)."""
    return int(time.time() * 1000)
