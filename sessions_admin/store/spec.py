"""Names the runtime's documentation fixes, used wherever the dashboard lists them.

The store does not enforce them (a row may hold any text): menus list these and keep
an unknown value that came in a URL, and pages show an unknown role as "other".
"""

from __future__ import annotations

#: The runtime's built-in profiles, in the order menus show them.
PROFILES = ("default", "explain", "edit", "propose", "evaluate", "monitor")
#: Message roles, in the order filters and statistics show them.
KNOWN_ROLES = ("user", "assistant", "tool", "system")
