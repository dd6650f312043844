"""Numbers as people read them ("6.9 KB"), shared by templates and messages."""

from __future__ import annotations


def file_size(value: int | None) -> str:
    """``512 B``, ``6.9 KB``, ``1.3 MB``, ``4.2 GB``; ``—`` for unknown."""
    if value is None:
        return "—"
    size = float(value)
    for unit in ("B", "KB", "MB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GB"
