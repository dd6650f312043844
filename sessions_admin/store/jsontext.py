"""JSON kept as TEXT by the runtime, parsed in Python with a safe fallback.

A real store can hold anything in ``tool_args``, ``tool_result`` and
``session_state.value``: broken JSON, a bare string, megabytes. Parsing never
raises; the caller gets the raw text and knows whether it was valid.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sessions_admin.store.toolcalls import reports_error


@dataclass(frozen=True)
class ParsedJSON:
    raw: str
    valid: bool
    value: Any = None

    @property
    def size(self) -> int:
        return len(self.raw.encode("utf-8", "surrogatepass"))

    def pretty(self) -> str:
        if not self.valid:
            return self.raw
        return json.dumps(self.value, indent=2, ensure_ascii=False, sort_keys=False)

    @property
    def reports_error(self) -> bool:
        """True for results such as ``{"ok": false}`` or ``{"error": ...}``.

        The rule is :func:`sessions_admin.store.toolcalls.reports_error`, the
        one definition of a failed call that every screen shares.
        """
        return reports_error(self.raw)


def parse_json_text(text: str | None) -> ParsedJSON | None:
    if text is None:
        return None
    try:
        return ParsedJSON(raw=text, valid=True, value=json.loads(text))
    except (ValueError, RecursionError):
        return ParsedJSON(raw=text, valid=False)
