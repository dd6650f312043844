"""Build a realistic, deterministic demo agent store for sessions-admin.

The dashboard reads a store it does not own (``<home>/data/agents/store.db``,
written by the TypeScript agent runtime) plus the activity-frame files under
``<home>/sessions/``. This package fabricates such a home so the dashboard can
be developed, demonstrated and benchmarked without a live runtime:

* the three session tables built from ``sessions_admin/store/schema.sql``, with
  two unrelated neighbour tables the dashboard must leave alone;
* sessions over ~8 targets and the six agency profiles, with
  user / assistant / tool conversations, OpenTelemetry-style trace and span
  ids, tool calls with JSON arguments and results (some failed);
* ``session_state`` rows (``repl_state``, ``snapshot``, a few custom keys);
* activity-frame JSONL files for a fraction of the sessions, plus a few
  orphan frame directories of sessions that no longer exist.

Output is deterministic: the same arguments, ``seed`` and ``now_ms`` give
byte-identical table contents. Every random choice comes from
``random.Random`` instances seeded from ``seed``; nothing reads the clock
except the default for ``now_ms``.

Speed matters (benchmarks want stores of 10M messages), so the hot path picks
from precomputed pools of strings and JSON texts by ``getrandbits`` index,
loads everything in one transaction with journaling off, and creates the
indexes and the trigger only after the load.

The package is layered, each module using only the ones above it:

* :mod:`.vocabulary` -- the fabricated world as data: its calendar, targets,
  profiles, models, people, services, sentence templates, tools and errors;
* :mod:`.pools` -- the vocabulary expanded once per build into power-of-two
  pools of texts, JSON documents and timings (and session titles);
* :mod:`.frames_writer` -- activity-frame files derived from a session's
  rows, and the worker thread that writes them;
* :mod:`.rows` -- the seeded generator of session / message / state rows and
  their bulk load, chunk by chunk;
* :mod:`.build` -- the entry point: schema split around the load, build
  pragmas, neighbour tables, indexes and trigger after the load, WAL, and the
  refusal to overwrite an existing store.

This package deliberately has no Django import: it is used by a management
command and by plain tests alike.
"""

from __future__ import annotations

from sessions_admin.demo.build import (
    SCHEMA_PATH,
    STORE_RELPATH,
    DemoSummary,
    build_demo_home,
    schema_statements,
)

# The builder reads the frame caps from sessions_admin.demo.rows: tune
# (or monkeypatch) them there; these names are copies for reading.
from sessions_admin.demo.rows import (
    BIG_SESSION_ID,
    FRAMES_CAP_SESSIONS,
    FRAMES_CAP_THRESHOLD,
)

__all__ = [
    "BIG_SESSION_ID",
    "FRAMES_CAP_SESSIONS",
    "FRAMES_CAP_THRESHOLD",
    "SCHEMA_PATH",
    "STORE_RELPATH",
    "DemoSummary",
    "build_demo_home",
    "schema_statements",
]
