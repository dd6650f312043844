"""Names the runtime's documentation fixes, used wherever the dashboard lists them.

The store does not enforce them (a row may hold any text): menus list these and keep
an unknown value that came in a URL, and pages show an unknown role as "other".
"""

from __future__ import annotations

#: The runtime's built-in profiles, in the order menus show them.
PROFILES = ("default", "explain", "edit", "propose", "evaluate", "monitor")
#: Message roles, in the order filters and statistics show them.
KNOWN_ROLES = ("user", "assistant", "tool", "system")

#: The three tables' documented columns (session-schema.md), in DDL order.
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "sessions": (
        "id",
        "target_key",
        "profile_key",
        "principal_id",
        "title",
        "turn_count",
        "created_at",
        "last_active",
    ),
    "session_messages": (
        "id",
        "session_id",
        "role",
        "content",
        "tool_name",
        "tool_call_id",
        "tool_target",
        "tool_op",
        "tool_args",
        "tool_result",
        "tool_duration_ms",
        "trace_id",
        "span_id",
        "model_id",
        "ts",
    ),
    "session_state": ("session_id", "key", "value", "updated_at"),
}
