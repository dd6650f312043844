"""Build a realistic, deterministic demo agent store for sessions-admin.

The dashboard reads a store it does not own (``<home>/data/agents/store.db``,
written by the TypeScript agent runtime) plus the activity-frame files under
``<home>/sessions/``. This module fabricates such a home so the dashboard can
be developed, demonstrated and benchmarked without a live runtime:

* the three session tables built from ``schema.sql`` (next to this file), with
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

This module deliberately has no Django import: it is used by a management
command and by plain tests alike.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import struct
import time
from bisect import bisect
from collections.abc import Callable, Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass
from itertools import accumulate, chain, islice
from operator import itemgetter
from pathlib import Path
from queue import SimpleQueue
from random import Random
from threading import Thread
from typing import Any

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

SCHEMA_PATH = Path(__file__).with_name("schema.sql")
STORE_RELPATH = Path("data", "agents", "store.db")
FRAMES_DIRNAME = "sessions"

#: Above this many sessions, frames are written for at most
#: ``FRAMES_CAP_SESSIONS`` of them, so a 500k-session store does not create
#: millions of files.
FRAMES_CAP_THRESHOLD = 20_000
FRAMES_CAP_SESSIONS = 2_000

BIG_SESSION_ID = "sess_big"

_DAY_MS = 86_400_000
_HOUR_MS = 3_600_000
_WINDOW_MS = 90 * _DAY_MS
# Rows are buffered and flushed in chunks of about this many messages; each
# chunk is sorted by ts first so that, as in a live store, the messages of
# concurrent sessions interleave in rowid order instead of sitting together.
_CHUNK_MESSAGES = 50_000
_ORPHAN_DIRS = 5
_EMPTY_SESSION_RATE = 0.005
_NULL_TITLE_RATE = 0.05
_NULL_PRINCIPAL_RATE = 0.04

_MESSAGE_COLUMNS = (
    "session_id, role, content, tool_name, tool_call_id, tool_target, tool_op, "
    "tool_args, tool_result, tool_duration_ms, trace_id, span_id, model_id, ts"
)
_SESSION_COLUMNS = (
    "id, target_key, profile_key, principal_id, title, turn_count, created_at, last_active"
)
_STATE_COLUMNS = "session_id, key, value, updated_at"


class _Inserter:
    """Bulk INSERT through multi-row ``VALUES (...), (...), ...`` statements.

    Binding 64 rows per statement execution halves the load time compared
    with one-row ``executemany``: far fewer VM restarts and, because
    session_messages is AUTOINCREMENT, far fewer sqlite_sequence updates.
    """

    BATCH = 64

    def __init__(self, table: str, columns: str) -> None:
        one = "(" + ", ".join("?" * (columns.count(",") + 1)) + ")"
        head = f"INSERT INTO {table} ({columns}) VALUES "
        self.single = head + one
        self.multi = head + ", ".join([one] * self.BATCH)

    def __call__(self, conn: sqlite3.Connection, rows: Sequence[tuple[Any, ...]]) -> None:
        b = self.BATCH
        full = len(rows) - len(rows) % b
        if full:
            it = iter(rows)
            conn.executemany(
                self.multi, (tuple(chain.from_iterable(islice(it, b))) for _ in range(full // b))
            )
        if full < len(rows):
            conn.executemany(self.single, rows[full:])


_insert_messages = _Inserter("session_messages", _MESSAGE_COLUMNS)
_insert_sessions = _Inserter("sessions", _SESSION_COLUMNS)
_insert_state = _Inserter("session_state", _STATE_COLUMNS)

# Neighbour tables: a real store.db holds more than the session tables. They
# make sure the dashboard's "never touch anything else" rule is testable.
_NEIGHBOUR_DDL = (
    "CREATE TABLE memory_records (id INTEGER PRIMARY KEY, kind TEXT, body TEXT, "
    "created_at INTEGER)",
    "CREATE TABLE memory_embeddings (record_id INTEGER REFERENCES memory_records(id), "
    "dim INTEGER, vector BLOB)",
)

_TS = itemgetter(13)  # position of ts in a message row


@dataclass(frozen=True)
class DemoSummary:
    """What :func:`build_demo_home` wrote, and how long it took."""

    sessions: int
    messages: int
    state_rows: int
    frame_files: int
    seconds: float
    store_path: Path
    frames_root: Path

    @property
    def messages_per_second(self) -> float:
        """Build throughput over the whole run (indexes and frames included)."""
        return self.messages / self.seconds if self.seconds > 0 else float("inf")


# Compact separators: the runtime writes JSON.stringify output. One encoder
# instance: json.dumps with non-default arguments builds a new one per call.
_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


def _jsonl(objects: Sequence[dict[str, Any]]) -> bytes:
    return "".join(_json(o) + "\n" for o in objects).encode()


# --------------------------------------------------------------------------
# Schema
# --------------------------------------------------------------------------


def _strip_leading_comments(stmt: str) -> str:
    text = stmt.lstrip()
    while text.startswith("--"):
        _, _, text = text.partition("\n")
        text = text.lstrip()
    return text


def schema_statements(sql: str) -> tuple[list[str], list[str]]:
    """Split DDL into (before-load, after-load) statements.

    Indexes and triggers go after the bulk load: inserting into indexed tables
    is several times slower, and the trigger must not rewrite the
    ``last_active``/``turn_count`` values the generator computed. Everything
    else (pragmas, tables) runs first. Statement texts are kept verbatim so
    ``sqlite_master.sql`` matches what executing the file directly stores.
    """
    before: list[str] = []
    after: list[str] = []
    buf = ""
    for line in sql.splitlines(keepends=True):
        buf += line
        # complete_statement understands CREATE TRIGGER ... BEGIN ...; END;
        if sqlite3.complete_statement(buf):
            stmt = _strip_leading_comments(buf).strip()
            buf = ""
            if not stmt or stmt == ";":
                continue
            # "CREATE [UNIQUE] INDEX", "CREATE [TEMP] TRIGGER"
            head = stmt.upper().split(None, 4)[:4]
            if head[0] == "CREATE" and ("INDEX" in head[1:3] or "TRIGGER" in head[1:3]):
                after.append(stmt)
            else:
                before.append(stmt)
    if _strip_leading_comments(buf).strip():
        raise ValueError(f"schema.sql ends with an incomplete statement: {buf.strip()[:80]!r}")
    return before, after


# --------------------------------------------------------------------------
# Vocabulary: the building blocks of the pools
# --------------------------------------------------------------------------

# (target_key, weight): a few targets get most of the traffic.
_TARGETS: tuple[tuple[str, int], ...] = (
    ("system.registry", 30),
    ("infra.deployer", 19),
    ("ops.pager", 14),
    ("billing.ledger", 11),
    ("support.inbox", 9),
    ("data.warehouse", 8),
    ("search.indexer", 6),
    ("auth.gateway", 3),
)
_PROFILES: tuple[tuple[str, int], ...] = (
    ("default", 46),
    ("explain", 17),
    ("edit", 12),
    ("propose", 10),
    ("evaluate", 8),
    ("monitor", 7),
)
_MODELS: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-4-5", 62),
    ("claude-haiku-4-5", 21),
    ("claude-opus-4-1", 12),
    ("claude-sonnet-4", 5),
)
# fmt: off
_FIRST_NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
    "yasmin", "zoe", "aaron", "bianca", "chen", "diego", "elif", "farah", "gus", "hana", "igor",
    "jun", "kofi", "lena", "mateo", "nadia", "omar", "priya", "quinn", "rosa", "sami", "tara",
    "uma", "vik", "wen", "xavier", "yuki", "zane", "amara", "bjorn",
)
_AGENT_NAMES = (
    "scheduler", "triage", "nightly-report", "oncall-bot", "deploy-watcher", "billing-recon",
    "inbox-sorter", "index-warden", "cost-guard", "sla-monitor", "backup-checker",
    "release-notes",
)
_SERVICES = (
    "checkout", "payments", "notifier", "image-resizer", "geo-lookup", "session-broker",
    "feature-flags", "report-builder", "mailer", "ledger-sync", "invoice-render", "catalog",
)
# fmt: on
_NAMESPACES = ("prod", "staging", "eu-west", "us-east", "internal", "sandbox")
_ENVS = ("production", "staging", "the canary ring", "eu-west-1", "us-east-2")
_WHENS = (
    "since this morning",
    "after the 14:00 deploy",
    "overnight",
    "for the last two hours",
    "since Friday",
    "intermittently this week",
    "right after the migration",
)
_TABLES = ("orders_daily", "events_raw", "customers", "invoices", "page_views", "refunds")
_REGIONS = ("eu-west-1", "us-east-2", "ap-south-1", "São Paulo", "Zürich")
_TEAMS = ("payments", "growth", "platform", "support", "data", "search", "identity")
_TERMS = ("invoice pdf", "reset password", "refund policy", "api limits", "café menu")

_QUESTIONS: dict[str, tuple[str, ...]] = {
    "system.registry": (
        "Why does the registry still list {svc} in {ns}? I thought we removed it {when}.",
        "Can you look up who owns actor {svc} and when it was last updated?",
        "List every actor in namespace {ns} that hasn't reported a heartbeat {when}.",
        "The registry entry for {svc} points at {ver} but the pods run something else. "
        "Which one is right?",
        "Is {svc} registered twice? Lookups return two different addresses {when}.",
        "Describe the {svc} actor: version, owner, dependencies.",
    ),
    "infra.deployer": (
        "Roll back {svc} in {env} to the previous release, it's throwing 500s {when}.",
        "What changed between {ver} and the current {svc} release?",
        "Is the canary for {svc} healthy enough to promote?",
        "Why did the deploy of {svc} {ver} stall at {n}%?",
        "Plan a rollback for {svc} in {env} but don't execute it yet.",
        "Which services were deployed to {env} {when}?",
    ),
    "ops.pager": (
        "Who is on call for {svc} right now, and can you ack {ticket}?",
        "Summarize the alerts that fired for {svc} {when}.",
        "Why did {ticket} page three people at once?",
        "Silence the disk-space alert on {svc} in {env} for two hours.",
        "Is {ticket} related to the {svc} latency spike?",
    ),
    "billing.ledger": (
        "Customer {acct} says they were charged twice {when}. Can you check the ledger?",
        "Why doesn't the ledger balance for {acct} match the invoice total?",
        "How many refunds over $500 did we issue {when}?",
        "Reconcile invoice {inv} against the payment provider.",
        "Draft a credit note for {acct}, the {svc} outage affected them.",
    ),
    "support.inbox": (
        "Triage the unread tickets about {svc} and group them by cause.",
        "Draft a reply to {ticket}; the customer is asking about {svc} downtime {when}.",
        "Which tickets mention refunds {when}?",
        "Escalate {ticket} to the {team} team with a short summary.",
        "Are there more complaints about login issues than usual {when}?",
    ),
    "data.warehouse": (
        "Why is {table} missing rows for yesterday?",
        "Run a quick count of {table} by day for the last week.",
        "The nightly load for {table} failed {when}. What broke?",
        "Which dashboards read from {table}? I want to rename a column.",
        "Explain why this query on {table} takes {n} seconds.",
    ),
    "search.indexer": (
        "Reindex the {svc} documents in {ns}; results look stale {when}.",
        "Why does search for '{term}' return nothing?",
        "How far behind is the indexer on shard {n}?",
        "Compare document counts between the index and the source for {svc}.",
    ),
    "auth.gateway": (
        "Users in {region} can't log in {when}. Is the gateway rejecting tokens?",
        "If we rotate the signing key for {svc}, what would break?",
        "Why does {svc} get 401s from the gateway with a valid token?",
        "List the clients that still use the deprecated password grant.",
    ),
}
_OPENERS = ("", "", "", "", "Hi! ", "Quick question: ", "Morning. ", "Follow-up: ", "@agent ")
_DETAILS = (
    "It started {when}.",
    "This is blocking the {team} team.",
    "I already tried restarting {svc}; no change.",
    "Logs are in /var/log/{svc}/current.",
    "Please don't touch {env} without asking me first.",
    "Ticket for reference: {ticket}.",
    "{person} mentioned something similar last week.",
    "Keep it short, I'm in a meeting in ten minutes.",
    "If you need to run queries, use the read-only replica.",
    "Thanks!",
    "Context: we shipped {ver} on Tuesday.",
    "It's not urgent but it keeps coming back — could we find the root cause?",
    "The customer is in {region}, if that matters.",
)
_FINDINGS = (
    "I checked {target} and found {n} entries matching {svc}; {m} of them look stale.",
    "The lookup shows {svc} was last updated {when} by {person}.",
    "Nothing in {target} looks wrong for {svc}: version {ver}, healthy, no pending changes.",
    "The errors come from {svc}: it times out after 30 s when calling {target}.",
    "The rollback plan has {n} steps; none of them touch the {env} databases.",
    "I couldn't reach {target} on the first try (timeout); the retry succeeded.",
    "{n} of the last {m} requests to {svc} failed with 503, all from {region}.",
    "The query returned {n} rows; the gap starts at 02:00 UTC, when the {table} load ran.",
)
_ADVICE = (
    "I suggest removing the stale entries; want me to prepare that?",
    "Next step: confirm with {person} before changing anything in {env}.",
    "I can open a ticket with these details if you like.",
    "No action needed for now; I'll keep an eye on it.",
    "Short version: {svc} is fine, the alert was noise.",
    "If it happens again, check the {svc} dashboard first.",
    "I have not changed anything; all of the above was read-only.",
)
_ASKS = (
    "Let me check that with {tool}.",
    "I'll call {tool} to see the current state of {svc}.",
    "First, {tool} on {svc} to confirm.",
    "Running {tool}; this may take a moment.",
    "To be sure, I'll look at {svc} in {target} via {tool}.",
    "Before answering I want fresh data, so: {tool}.",
)
_ASK_REASONS = (
    "I want the current numbers before suggesting anything.",
    "That tells us whether the problem is upstream or in {svc} itself.",
    "If this comes back clean we can rule out {target}.",
    "It is read-only, nothing changes in {env}.",
    "The last answer from {person} was {when}, so it may be stale.",
    "",
)

# Which tools an agent uses against each target: 16-slot decks so a
# ``getrandbits(4)`` picks a tool with the right skew.
_TOOL_DECKS: dict[str, dict[str, int]] = {
    "system.registry": {
        "registry.lookup": 7,
        "actor.introspect": 3,
        "http.get": 2,
        "logs.search": 2,
        "fs.read": 1,
        "sql.query": 1,
    },
    "infra.deployer": {
        "deploy.rollback": 5,
        "http.get": 3,
        "logs.search": 3,
        "registry.lookup": 2,
        "fs.read": 2,
        "actor.introspect": 1,
    },
    "ops.pager": {
        "pager.ack": 6,
        "logs.search": 4,
        "http.get": 3,
        "registry.lookup": 2,
        "fs.read": 1,
    },
    "billing.ledger": {"ledger.query": 6, "sql.query": 6, "http.get": 2, "logs.search": 2},
    "support.inbox": {
        "sql.query": 4,
        "http.get": 4,
        "logs.search": 3,
        "ledger.query": 2,
        "registry.lookup": 2,
        "fs.read": 1,
    },
    "data.warehouse": {"sql.query": 10, "fs.read": 3, "logs.search": 3},
    "search.indexer": {
        "http.get": 5,
        "logs.search": 4,
        "sql.query": 3,
        "actor.introspect": 2,
        "fs.read": 2,
    },
    "auth.gateway": {"http.get": 5, "logs.search": 5, "registry.lookup": 3, "fs.read": 3},
}
_TOOL_OPS: dict[str, tuple[str, ...]] = {
    "registry.lookup": ("lookup", "list", "describe"),
    "actor.introspect": ("$introspect",),
    "http.get": ("get",),
    "logs.search": ("search",),
    "fs.read": ("read",),
    "sql.query": ("select", "explain"),
    "deploy.rollback": ("plan", "rollback"),
    "pager.ack": ("ack", "list"),
    "ledger.query": ("balance", "entries"),
}
_ERRORS: dict[str, tuple[tuple[str, str], ...]] = {
    "registry.lookup": (("ENOTFOUND", "no entry for key"), ("ETIMEDOUT", "registry timed out")),
    "actor.introspect": (("EACTORDOWN", "actor is not running"),),
    "http.get": (
        ("ETIMEDOUT", "request timed out after 5000 ms"),
        ("ECONNREFUSED", "connection refused"),
        ("HTTP_503", "service unavailable"),
    ),
    "logs.search": (("EQUERY", "query too broad, narrow the time range"),),
    "fs.read": (("ENOENT", "no such file or directory"), ("EACCES", "permission denied")),
    "sql.query": (
        ("SQLITE_BUSY", "database is locked"),
        ("ETIMEOUT", "statement timeout after 30000 ms"),
    ),
    "deploy.rollback": (
        ("ECONFLICT", "a rollback is already in progress"),
        ("EDENIED", "rollback in production requires approval"),
    ),
    "pager.ack": (("ENOTFOUND", "incident not found"),),
    "ledger.query": (("EPERM", "account is restricted"),),
}
_TOOL_ERROR_RATE = 0.08
_CUSTOM_STATE_KEYS = ("ui.layout", "plan", "scratch.notes", "eval.scores")


# --------------------------------------------------------------------------
# Pools
# --------------------------------------------------------------------------


class _Pools:
    """Precomputed texts, JSON documents and timing distributions.

    Pool sizes are powers of two so the hot loop can index them with
    ``getrandbits(k)``, which is much cheaper than ``randrange`` or ``choice``.
    """

    USER_BITS = 8
    REPLY_BITS = 8
    ASK_BITS = 6
    ARGS_BITS = 7
    RESULT_BITS = 7
    TIMING_BITS = 12

    def __init__(self, rng: Random) -> None:
        self.rng = rng
        self.targets = [t for t, _ in _TARGETS]
        self.user_texts: list[list[str]] = []
        self.replies: list[list[str]] = []
        self.titles: dict[str, str] = {}
        for target in self.targets:
            texts = [self._user_text(target) for _ in range(1 << self.USER_BITS)]
            self.user_texts.append(texts)
            for text in texts:
                self.titles[text] = _title_of(text)
            self.replies.append([self._reply(target) for _ in range(1 << self.REPLY_BITS)])
        self.tools = {name: self._tool(name) for name in _TOOL_OPS}
        # Per target: a 16-slot deck of tools and one of tool_target values
        # (mostly the session's own target, sometimes a neighbour).
        # Deck entries are (name, args, results, asks-for-this-target) tuples:
        # tuple unpacking is cheaper than attribute access in the hot loop.
        self.tool_decks: list[list[tuple[str, Any, Any, tuple[str, ...]]]] = []
        self.target_decks: list[list[str]] = []
        for target in self.targets:
            deck = [
                (tool.name, tool.args, tool.results, tool.asks[target])
                for tool in (
                    self.tools[n] for n, k in _TOOL_DECKS[target].items() for _ in range(k)
                )
            ]
            assert len(deck) == 16, target
            self.tool_decks.append(deck)
            others = [t for t in self.targets if t != target]
            self.target_decks.append([target] * 12 + [rng.choice(others) for _ in range(4)])
        # Tool calls per turn: mostly zero to two.
        self.calls_per_turn = [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3]
        n = 1 << self.TIMING_BITS
        # Log-normal around 150 ms (about 1% over 2 s), plus a few calls that
        # ran into a timeout somewhere.
        self.durations = [
            max(3, min(120_000, int(rng.lognormvariate(math.log(150), 1.05)))) for _ in range(n)
        ]
        for i in rng.sample(range(n), n // 400):
            self.durations[i] = rng.randint(5_000, 60_000)
        # ts advances by the tool's duration plus a little bookkeeping.
        self.tool_gaps = [d + rng.randint(3, 40) for d in self.durations]
        self.model_gaps = [
            max(300, min(90_000, int(rng.lognormvariate(math.log(2_500), 0.7)))) for _ in range(n)
        ]
        self.think_gaps = [self._think_gap() for _ in range(n)]
        self.repl_states = [self._repl_state() for _ in range(256)]
        self.snapshots = [[self._snapshot(t) for _ in range(32)] for t in self.targets]
        self.custom_states = [self._custom_state() for _ in range(64)]

    # -- text ---------------------------------------------------------------

    def _fill(self, template: str, target: str = "") -> str:
        return template.format_map(_Slots(self.rng, target))

    def _sentences(self, first: str, pool: Sequence[str], target: str, lo: int, hi: int) -> str:
        text = first
        while len(text) < lo or (len(text) < hi - 120 and self.rng.random() < 0.45):
            text += " " + self._fill(self.rng.choice(pool), target)
        if len(text) > hi:
            text = text[: text.rfind(" ", 0, hi - 1)] + "…"
        return text

    def _user_text(self, target: str) -> str:
        first = self.rng.choice(_OPENERS) + self._fill(self.rng.choice(_QUESTIONS[target]), target)
        return self._sentences(first, _DETAILS, target, 50, 400)

    def _reply(self, target: str) -> str:
        first = self._fill(self.rng.choice(_FINDINGS), target)
        return self._sentences(first, _FINDINGS + _ADVICE + _ADVICE, target, 80, 400)

    def _think_gap(self) -> int:
        rng = self.rng
        if rng.random() < 0.07:
            # The user comes back later: an hour to four days, log-uniform.
            return int(math.exp(rng.uniform(math.log(_HOUR_MS), math.log(4 * _DAY_MS))))
        return max(2_000, min(1_800_000, int(rng.lognormvariate(math.log(45_000), 1.0))))

    # -- tools --------------------------------------------------------------

    def _tool(self, name: str) -> _Tool:
        rng = self.rng
        ops = _TOOL_OPS[name]
        args: list[tuple[str, str]] = []
        for _ in range(1 << self.ARGS_BITS):
            op = rng.choice(ops)
            args.append((op, _json(self._tool_args(name, op))))
        results: list[tuple[str, str]] = []
        for _ in range(1 << self.RESULT_BITS):
            if rng.random() < _TOOL_ERROR_RATE:
                code, message = rng.choice(_ERRORS[name])
                result: dict[str, Any] = {"ok": False, "error": {"code": code, "message": message}}
                content = f"{name} failed: {code}: {message}"
            else:
                value, summary = self._tool_value(name)
                result = {"ok": True, **value}
                content = f"{name} ok: {summary}"
            text = _json(result)
            # The content is what the model was shown: a summary line and the
            # start of the raw result.
            content += "\n" + (text if len(text) <= 300 else text[:299] + "…")
            results.append((text, content))
        # The assistant's request texts name the tool and the session's target.
        asks = {
            target: tuple(
                self._fill(
                    f"{rng.choice(_ASKS)} {rng.choice(_ASK_REASONS)}".replace("{tool}", name),
                    target,
                ).strip()
                for _ in range(1 << self.ASK_BITS)
            )
            for target in self.targets
        }
        return _Tool(name, tuple(args), tuple(results), asks)

    def _tool_args(self, name: str, op: str) -> dict[str, Any]:
        rng = self.rng
        svc, ns = rng.choice(_SERVICES), rng.choice(_NAMESPACES)
        if name == "registry.lookup":
            if op == "list":
                return {"prefix": "actors/", "namespace": ns, "limit": 50}
            return {"key": f"actors/{svc}", "namespace": ns}
        if name == "actor.introspect":
            return {"actor": f"{svc}.{ns}", "depth": rng.randint(1, 3)}
        if name == "http.get":
            path = rng.choice(("healthz", "metrics", "v1/status", "v2/config"))
            return {"url": f"https://{svc}.{ns}.internal/{path}", "timeoutMs": 5000}
        if name == "logs.search":
            level = rng.choice(("error", "warn", "error"))
            return {
                "query": f"service:{svc} level:{level}",
                "since": rng.choice(("-1h", "-6h", "-24h")),
                "limit": 100,
            }
        if name == "fs.read":
            return {"path": f"/var/log/{svc}/current", "offset": 0, "limit": 4096}
        if name == "sql.query":
            table = rng.choice(_TABLES)
            sql = f"SELECT day, count(*) AS n FROM {table} WHERE day >= ? GROUP BY day ORDER BY day"
            if op == "explain":
                sql = "EXPLAIN QUERY PLAN " + sql
            return {
                "sql": sql,
                "params": [f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"],
                "readOnly": True,
            }
        if name == "deploy.rollback":
            return {
                "service": svc,
                "env": rng.choice(_ENVS),
                "toVersion": f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
                "dryRun": op == "plan",
            }
        if name == "pager.ack":
            if op == "list":
                return {"status": "triggered", "service": svc}
            return {"incidentId": f"INC-{rng.randint(1000, 9999)}", "note": "looking into it"}
        if name == "ledger.query":
            return {
                "account": f"acct_{rng.getrandbits(32):08x}",
                "op": op,
                "from": f"2025-{rng.randint(1, 12):02d}-01",
            }
        raise KeyError(name)

    def _tool_value(self, name: str) -> tuple[dict[str, Any], str]:
        rng = self.rng
        svc = rng.choice(_SERVICES)
        if name == "registry.lookup":
            version = rng.randint(1, 60)
            return (
                {
                    "value": {
                        "key": f"actors/{svc}",
                        "version": version,
                        "owner": f"team-{rng.choice(_TEAMS)}",
                        "address": f"{svc}.{rng.choice(_NAMESPACES)}.svc:8080",
                    }
                },
                f"actors/{svc} at version {version}",
            )
        if name == "actor.introspect":
            children = [f"{svc}/{c}" for c in rng.sample(("cache", "queue", "http", "db"), 2)]
            return (
                {"tree": {"id": svc, "status": "running", "children": children}},
                f"{svc} running with {len(children)} children",
            )
        if name == "http.get":
            status = rng.choice((200, 200, 200, 204, 404))
            return (
                {"status": status, "body": {"status": "ok" if status < 400 else "missing"}},
                f"HTTP {status}",
            )
        if name == "logs.search":
            hits = rng.randint(0, 400)
            sample = [
                f"ERROR {svc}: upstream timeout after {rng.randint(1, 30)}s"
                for _ in range(min(hits, rng.randint(0, 3)))
            ]
            return {"hits": hits, "sample": sample}, f"{hits} matching log lines"
        if name == "fs.read":
            size = rng.randint(200, 4096)
            return (
                {
                    "bytes": size,
                    "text": f"2025-06-0{rng.randint(1, 9)}T0{rng.randint(0, 9)}:12:44Z "
                    f"WARN {svc} retrying request (attempt {rng.randint(2, 5)})",
                },
                f"read {size} bytes",
            )
        if name == "sql.query":
            rows = [
                [f"2025-06-{d:02d}", rng.randint(0, 90_000)] for d in range(1, rng.randint(2, 8))
            ]
            return (
                {"columns": ["day", "n"], "rows": rows, "rowCount": len(rows)},
                f"{len(rows)} rows",
            )
        if name == "deploy.rollback":
            steps = rng.randint(2, 6)
            return (
                {"steps": [f"step {i + 1}" for i in range(steps)], "state": "planned"},
                f"rollback plan with {steps} steps",
            )
        if name == "pager.ack":
            return (
                {"incident": {"id": f"INC-{rng.randint(1000, 9999)}", "status": "acknowledged"}},
                "incident acknowledged",
            )
        if name == "ledger.query":
            cents = rng.randint(-50_000, 2_000_000)
            return {"balanceCents": cents, "currency": "EUR"}, f"balance {cents / 100:.2f} EUR"
        raise KeyError(name)

    # -- state --------------------------------------------------------------

    def _repl_state(self) -> str:
        rng = self.rng
        bindings = {
            f"{name}": rng.choice(
                (
                    f"#<list {rng.randint(0, 90)}>",
                    f'"{rng.choice(_SERVICES)}"',
                    str(rng.randint(0, 999)),
                    f"#<actor {rng.choice(_SERVICES)}>",
                    "nil",
                    "#t",
                )
            )
            for name in rng.sample(
                ("rows", "target", "limit", "svc", "last", "acc", "xs", "cfg", "ok?", "errs"),
                rng.randint(1, 8),
            )
        }
        history = [
            {
                "in": f"({rng.choice(('lookup', 'count', 'map', 'filter', 'describe'))} "
                f'"{rng.choice(_SERVICES)}")',
                "out": rng.choice(("nil", "#t", f"{rng.randint(0, 500)}", "#<error timeout>")),
            }
            for _ in range(rng.randint(0, 12))
        ]
        return _json({"version": 2, "ns": "user", "bindings": bindings, "history": history})

    def _snapshot(self, target: str) -> str:
        rng = self.rng

        def node(name: str, depth: int) -> dict[str, Any]:
            out: dict[str, Any] = {
                "id": name,
                "kind": "actor",
                "state": {
                    "status": rng.choice(("running", "running", "idle", "degraded")),
                    "mailbox": rng.randint(0, 40),
                },
            }
            if depth < 2:
                out["children"] = [
                    node(f"{name}/{c}", depth + 1)
                    for c in rng.sample(
                        ("cache", "queue", "http", "db", "timer"), rng.randint(1, 3)
                    )
                ]
            return out

        tree = node(target, 0)
        tree["version"] = f"{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}"
        return _json(tree)

    def _custom_state(self) -> str:
        rng = self.rng
        return _json(
            {
                "pinned": rng.sample(_SERVICES, rng.randint(0, 3)),
                "notes": self._fill(rng.choice(_DETAILS)),
                "score": round(rng.random(), 3),
            }
        )


class _Slots(dict[str, object]):
    """Template values drawn on first use: only the slots a template names cost anything."""

    def __init__(self, rng: Random, target: str) -> None:
        super().__init__(target=target)
        self.rng = rng

    def __missing__(self, key: str) -> object:
        rng = self.rng
        makers: dict[str, Callable[[], object]] = {
            "svc": lambda: rng.choice(_SERVICES),
            "ns": lambda: rng.choice(_NAMESPACES),
            "env": lambda: rng.choice(_ENVS),
            "when": lambda: rng.choice(_WHENS),
            "ver": lambda: f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "n": lambda: rng.randint(2, 97),
            "m": lambda: rng.randint(1, 40),
            "ticket": lambda: f"{rng.choice(('SUP', 'INC', 'OPS'))}-{rng.randint(1000, 9999)}",
            "person": lambda: rng.choice(_FIRST_NAMES).capitalize(),
            "acct": lambda: f"acct_{rng.getrandbits(32):08x}",
            "inv": lambda: f"INV-{rng.randint(100000, 999999)}",
            "table": lambda: rng.choice(_TABLES),
            "region": lambda: rng.choice(_REGIONS),
            "team": lambda: rng.choice(_TEAMS),
            "term": lambda: rng.choice(_TERMS),
        }
        value = self[key] = makers[key]()
        return value


@dataclass(frozen=True)
class _Tool:
    name: str
    args: tuple[tuple[str, str], ...]  # (tool_op, tool_args JSON)
    results: tuple[tuple[str, str], ...]  # (tool_result JSON, message content)
    asks: dict[str, tuple[str, ...]]  # per target: assistant texts requesting the call


def _title_of(text: str) -> str:
    """Session title as the runtime derives it: the first user message, shortened."""
    for opener in _OPENERS:
        if opener and text.startswith(opener):
            text = text[len(opener) :]
            break
    # The first sentence if it is short enough, else a cut at a word boundary.
    ends = [i for i in (text.find(". "), text.find("? "), text.find("! ")) if i >= 0]
    if ends and min(ends) < 72:
        return text[: min(ends) + 1]
    if len(text) <= 72:
        return text
    return text[: text.rfind(" ", 0, 70)].rstrip(",;:") + "…"


def _weighted(items: Sequence[tuple[str, int]]) -> tuple[list[str], list[int]]:
    return [name for name, _ in items], list(accumulate(w for _, w in items))


def _principals(rng: Random) -> list[str]:
    """A few hundred principals, most frequent first (callers pick with a skew)."""
    users = [f"user:{n}" for n in _FIRST_NAMES]
    users += [f"user:{n}.{c}" for n in _FIRST_NAMES for c in "kmrs"]
    agents = [f"agent:{n}" for n in _AGENT_NAMES] + [f"agent:worker-{i:02d}" for i in range(1, 25)]
    everyone = users + agents
    rng.shuffle(everyone)
    return everyone


# --------------------------------------------------------------------------
# The builder
# --------------------------------------------------------------------------


class _Builder:
    """One build: generates rows in a fixed order from seeded generators and loads them.

    Holds the counters that end up in :class:`DemoSummary`. All table rows
    come from ``self.rng`` in a fixed order; frame files from ``self.frng``.
    """

    def __init__(
        self,
        home: Path,
        *,
        sessions: int,
        messages_per_session: int,
        seed: int,
        big_session_messages: int,
        frames_fraction: float,
        now_ms: int,
        progress: Callable[[int], object] | None,
    ) -> None:
        self.home = home
        self.frames_root = home / FRAMES_DIRNAME
        self.n_sessions = sessions
        self.per_session = messages_per_session
        self.big = big_session_messages
        self.now_ms = now_ms
        self.progress = progress
        # Separate streams: the tables do not depend on frames_fraction, and
        # the pools do not shift when the generation code changes a little.
        self.rng = Random(f"sessions-admin-demo:{seed}:rows")
        self.frng = Random(f"sessions-admin-demo:{seed}:frames")
        self.pools = _Pools(Random(f"sessions-admin-demo:{seed}:pools"))
        self.principals = _principals(self.rng)
        n_frames = round(sessions * frames_fraction)
        if sessions > FRAMES_CAP_THRESHOLD:
            n_frames = min(n_frames, FRAMES_CAP_SESSIONS)
        self.frame_sessions = set(self.frng.sample(range(sessions), n_frames))
        self._targets = _weighted(_TARGETS)
        self._profiles = _weighted(_PROFILES)
        self._models = _weighted(_MODELS)
        self.messages = 0
        self.state_rows = 0
        self.frame_files = 0
        # (session id, [(file name, content)]) for the writer thread; None ends it.
        self._frames_queue: SimpleQueue[tuple[str, list[tuple[str, bytes]]] | None] = SimpleQueue()
        self._frames_thread = Thread(target=self._frames_worker, name="demo-frames", daemon=True)
        self._frames_error: BaseException | None = None
        self.session_rows = 0

    # -- per-session generation --------------------------------------------

    def _conversation(
        self, sid: str, ti: int, model: str, ts: int, gaps: tuple[list[int], list[int], list[int]]
    ) -> Iterator[tuple[Any, ...]]:
        """Endless user/assistant/tool turns; callers ``islice`` the count they want.

        Each turn: a user message, zero to three (assistant asks -> tool answers)
        pairs sharing a ``tool_call_id``, then the assistant's reply. All
        messages of a turn share a trace id; each gets its own span id.
        """
        p = self.pools
        grb = self.rng.getrandbits
        think_gaps, model_gaps, tool_gaps = gaps
        durations = p.durations
        users = p.user_texts[ti]
        replies = p.replies[ti]
        tools = p.tool_decks[ti]
        tool_targets = p.target_decks[ti]
        calls = p.calls_per_turn
        ub, rb, ab = p.USER_BITS, p.REPLY_BITS, p.ASK_BITS
        gb, xb, tb = p.ARGS_BITS, p.RESULT_BITS, p.TIMING_BITS
        # Rows follow _MESSAGE_COLUMNS: session_id, role, content, tool_name,
        # tool_call_id, tool_target, tool_op, tool_args, tool_result,
        # tool_duration_ms, trace_id, span_id, model_id, ts.
        # fmt: off
        while True:
            trace = f"{grb(128):032x}"
            yield (sid, "user", users[grb(ub)], None, None, None, None, None, None, None,
                   trace, f"{grb(64):016x}", None, ts)
            for _ in range(calls[grb(4)]):
                ts += model_gaps[grb(tb)]
                call = f"call_{grb(96):024x}"
                name, tool_args, tool_results, asks = tools[grb(4)]
                yield (sid, "assistant", asks[grb(ab)], None, call, None, None, None, None, None,
                       trace, f"{grb(64):016x}", model, ts)
                d = grb(tb)
                ts += tool_gaps[d]  # the tool message is logged when the call returns
                op, args = tool_args[grb(gb)]
                result, content = tool_results[grb(xb)]
                yield (sid, "tool", content, name, call, tool_targets[grb(4)], op, args, result,
                       durations[d], trace, f"{grb(64):016x}", None, ts)
            ts += model_gaps[grb(tb)]
            yield (sid, "assistant", replies[grb(rb)], None, None, None, None, None, None, None,
                   trace, f"{grb(64):016x}", model, ts)
            ts += think_gaps[grb(tb)]
        # fmt: on

    def _session_meta(self) -> tuple[int, str, str | None, str]:
        rng = self.rng
        random = rng.random
        t_names, t_cum = self._targets
        p_names, p_cum = self._profiles
        m_names, m_cum = self._models
        ti = bisect(t_cum, random() * t_cum[-1])
        profile = p_names[bisect(p_cum, random() * p_cum[-1])]
        model = m_names[bisect(m_cum, random() * m_cum[-1])]
        if random() < _NULL_PRINCIPAL_RATE:
            principal = None
        else:
            # Zipf-ish: a few principals own most sessions.
            principal = self.principals[int(len(self.principals) * random() ** 2.0)]
        return ti, profile, principal, model

    def _state_rows(self, sid: str, ti: int, created: int, last: int, empty: bool) -> list[tuple]:
        rng = self.rng
        p = self.pools
        rows: list[tuple] = []
        if rng.random() < 0.8:
            rows.append((sid, "snapshot", p.snapshots[ti][rng.getrandbits(5)], created))
        if not empty and rng.random() < 0.85:
            rows.append((sid, "repl_state", p.repl_states[rng.getrandbits(8)], last))
        if rng.random() < 0.02:
            key = _CUSTOM_STATE_KEYS[rng.getrandbits(2)]
            rows.append((sid, key, p.custom_states[rng.getrandbits(6)], last))
        return rows

    # -- the load -----------------------------------------------------------

    def run(self, conn: sqlite3.Connection) -> None:
        rng = self.rng
        now = self.now_ms

        # Creation times first, sorted, so each flushed chunk holds sessions
        # that were alive at the same time (their messages interleave). More
        # sessions are recent than old.
        created_all = sorted(
            now - int(_WINDOW_MS * rng.random() ** 1.6) - 1_000 for _ in range(self.n_sessions)
        )
        seen: set[str] = set()
        gaps = (self.pools.think_gaps, self.pools.model_gaps, self.pools.tool_gaps)
        msg_buf: list[tuple] = []
        sess_buf: list[tuple] = []
        state_buf: list[tuple] = []
        per = self.per_session

        for index, created in enumerate(created_all):
            sid = f"sess_{rng.getrandbits(96):024x}"
            while sid in seen:
                sid = f"sess_{rng.getrandbits(96):024x}"
            seen.add(sid)
            ti, profile, principal, model = self._session_meta()
            # Roughly per_session messages, +-50%; a few sessions were
            # created and never got a message (the runtime crashed, say).
            n = 0 if rng.random() < _EMPTY_SESSION_RATE else int(per * (0.5 + rng.random()) + 0.5)
            null_title = rng.random() < _NULL_TITLE_RATE
            first_ts = created + 5 + rng.getrandbits(8)
            rows = list(islice(self._conversation(sid, ti, model, first_ts, gaps), n))
            if rows and rows[-1][13] > now:
                # A long session created recently: move it back so it ends now-ish.
                shift = rows[-1][13] - now + 1 + rng.getrandbits(16)
                created -= shift
                rows = [(*r[:13], r[13] - shift) for r in rows]
            last = rows[-1][13] if rows else created
            turns = sum(1 for r in rows if r[1] == "user")
            title = None if null_title or not rows else self.pools.titles[rows[0][2]]
            sess_buf.append(
                (sid, self.pools.targets[ti], profile, principal, title, turns, created, last)
            )
            state_buf.extend(self._state_rows(sid, ti, created, last, not rows))
            msg_buf.extend(rows)
            if index in self.frame_sessions:
                self._write_frames(sid, self.pools.targets[ti], profile, principal, model, rows)
            if len(msg_buf) >= _CHUNK_MESSAGES:
                self._flush(conn, msg_buf, sess_buf, state_buf)
        self._flush(conn, msg_buf, sess_buf, state_buf)

        if self.big:
            self._big_session(conn, seen)
        self._write_orphans(seen)

    def _flush(
        self, conn: sqlite3.Connection, msgs: list[tuple], sess: list[tuple], state: list[tuple]
    ) -> None:
        msgs.sort(key=_TS)  # stable: ties keep generation order, so still deterministic
        _insert_sessions(conn, sess)
        _insert_messages(conn, msgs)
        _insert_state(conn, state)
        self.messages += len(msgs)
        self.session_rows += len(sess)
        self.state_rows += len(state)
        msgs.clear()
        sess.clear()
        state.clear()
        if self.progress is not None:
            self.progress(self.messages)

    def _big_session(self, conn: sqlite3.Connection, seen: set[str]) -> None:
        """One huge session (``sess_big``) for benchmarks, streamed in chunks.

        Its length is only known after generation, so messages are written
        with timestamps relative to a base and moved into place with one
        UPDATE afterwards; gaps are scaled down so it spans about a month.
        Unlike the other sessions, its rows are contiguous in rowid order.
        """
        rng = self.rng
        n = self.big
        p = self.pools
        ti = 0  # the busiest target
        model = _MODELS[0][0]
        mean_gap = (sum(p.think_gaps) + 3 * sum(p.model_gaps) + sum(p.tool_gaps)) / (
            4 * len(p.think_gaps)
        )
        scale = max(1, math.ceil(n * mean_gap / (30 * _DAY_MS)))
        gaps = (
            [max(1, g // scale) for g in p.think_gaps],
            [max(1, g // scale) for g in p.model_gaps],
            [max(1, g // scale) for g in p.tool_gaps],
        )
        base = 10**12  # keeps the integer width equal to real epoch-ms values
        first_id = self.messages + 1  # AUTOINCREMENT from an empty table: ids are 1..N
        conv = self._conversation(BIG_SESSION_ID, ti, model, base, gaps)
        done = 0
        while done < n:
            k = min(_CHUNK_MESSAGES * 4, n - done)
            _insert_messages(conn, list(islice(conv, k)))
            done += k
            if self.progress is not None:
                self.progress(self.messages + done)
        self.messages += n
        turns, last_rel, first_text = conn.execute(
            "SELECT (SELECT count(*) FROM session_messages WHERE id >= :first AND role = 'user'),"
            " (SELECT ts FROM session_messages WHERE id = :last),"
            " (SELECT content FROM session_messages WHERE id = :first)",
            {"first": first_id, "last": self.messages},
        ).fetchone()
        last = self.now_ms - 60_000 - rng.getrandbits(20)
        shift = last - last_rel
        conn.execute("UPDATE session_messages SET ts = ts + ? WHERE id >= ?", (shift, first_id))
        created = base + shift - 5
        row = (BIG_SESSION_ID, p.targets[ti], "default", "agent:loadtest")
        _insert_sessions(conn, [(*row, p.titles[first_text], turns, created, last)])
        state = [
            (BIG_SESSION_ID, "snapshot", p.snapshots[ti][0], created),
            (BIG_SESSION_ID, "repl_state", p.repl_states[0], last),
        ]
        _insert_state(conn, state)
        self.session_rows += 1
        self.state_rows += len(state)
        seen.add(BIG_SESSION_ID)

    # -- activity frames ------------------------------------------------------

    def _write_frames(
        self,
        sid: str,
        target: str,
        profile: str,
        principal: str | None,
        model: str,
        rows: list[tuple],
    ) -> None:
        """1-3 ``activity-<requestId>.jsonl`` files, one per request (= turn)."""
        if not rows:
            return
        frng = self.frng
        turns: dict[str, list[tuple]] = {}
        for r in rows:
            turns.setdefault(r[10], []).append(r)
        traces = list(turns)
        picked = frng.sample(traces, min(len(traces), frng.randint(1, 3)))
        files: list[tuple[str, bytes]] = []
        for trace in sorted(picked, key=traces.index):
            request_id = f"req_{frng.getrandbits(64):016x}"
            frames = self._request_frames(
                sid, request_id, target, profile, principal, model, turns[trace]
            )
            files.append((f"activity-{request_id}.jsonl", _jsonl(frames)))
        self._frames_queue.put((sid, files))
        self.frame_files += len(files)

    def _request_frames(
        self,
        sid: str,
        request_id: str,
        target: str,
        profile: str,
        principal: str | None,
        model: str,
        turn: list[tuple],
    ) -> list[dict]:
        frng = self.frng
        trace = turn[0][10]
        root = f"{frng.getrandbits(64):016x}"
        start = turn[0][13] - 3
        frames: list[dict[str, Any]] = [
            {
                "ts": start,
                "kind": "request.start",
                "traceId": trace,
                "spanId": root,
                "parentSpanId": None,
                "name": "agent.prompt",
                "requestId": request_id,
                "sessionId": sid,
                "payload": {
                    "targetKey": target,
                    "profileKey": profile,
                    "principalId": principal,
                    "prompt": turn[0][2][:120],
                },
            }
        ]
        prev = turn[0][13]
        for r in turn[1:]:
            role, ts = r[1], r[13]
            if role == "assistant":
                frames.append(
                    {
                        "ts": prev,
                        "kind": "model.call",
                        "traceId": trace,
                        "spanId": r[11],
                        "parentSpanId": root,
                        "name": "model.call",
                        "durationMs": ts - prev,
                        "payload": {
                            "model": model,
                            "inputTokens": frng.randint(800, 24_000),
                            "outputTokens": frng.randint(20, 900),
                            "stopReason": "tool_use" if r[4] else "end_turn",
                        },
                    }
                )
            elif role == "tool":
                duration = r[9]
                args, result = json.loads(r[7]), json.loads(r[8])
                frames.append(
                    {
                        "ts": ts - duration,
                        "kind": "tool.call",
                        "traceId": trace,
                        "spanId": r[11],
                        "parentSpanId": root,
                        "name": r[3],
                        "payload": {"toolCallId": r[4], "target": r[5], "op": r[6], "args": args},
                    }
                )
                frames.append(
                    {
                        "ts": ts,
                        "kind": "tool.result",
                        "traceId": trace,
                        "spanId": r[11],
                        "parentSpanId": root,
                        "name": r[3],
                        "durationMs": duration,
                        "payload": {"toolCallId": r[4], "ok": result.get("ok"), "result": result},
                    }
                )
            prev = ts
        end = prev + 2
        frames.append(
            {
                "ts": end,
                "kind": "request.end",
                "traceId": trace,
                "spanId": root,
                "parentSpanId": None,
                "name": "agent.prompt",
                "durationMs": end - start,
                "requestId": request_id,
                "payload": {
                    "status": "ok" if turn[-1][1] == "assistant" else "interrupted",
                    "messages": len(turn),
                },
            }
        )
        frames.sort(key=lambda f: f["ts"])
        return frames

    def _write_orphans(self, seen: set[str]) -> None:
        """Frame directories of sessions that no longer exist.

        The runtime's delete does not remove frame directories, so real homes
        accumulate them. One is left empty; the others hold one request each,
        written by an older runtime that used ``timestamp``/``type`` keys.
        """
        if not self.frame_sessions:
            return
        frng = self.frng
        for i in range(_ORPHAN_DIRS):
            sid = f"sess_{frng.getrandbits(96):024x}"
            if sid in seen:
                continue
            if i == 0:
                self._frames_queue.put((sid, []))
                continue
            request_id = f"req_{frng.getrandbits(64):016x}"
            trace, root = f"{frng.getrandbits(128):032x}", f"{frng.getrandbits(64):016x}"
            t0 = self.now_ms - _WINDOW_MS - frng.randint(1, 30) * _DAY_MS
            lines = [
                {
                    "timestamp": t0,
                    "type": "request.start",
                    "traceId": trace,
                    "spanId": root,
                    "name": "agent.prompt",
                    "sessionId": sid,
                },
                {
                    "timestamp": t0 + 1_900,
                    "type": "model.call",
                    "traceId": trace,
                    "spanId": f"{frng.getrandbits(64):016x}",
                    "parentSpanId": root,
                    "name": "model.call",
                    "duration": 1_850,
                    "model": _MODELS[0][0],
                },
                {
                    "timestamp": t0 + 2_000,
                    "type": "request.end",
                    "traceId": trace,
                    "spanId": root,
                    "name": "agent.prompt",
                    "duration": 2_000,
                },
            ]
            self._frames_queue.put((sid, [(f"activity-{request_id}.jsonl", _jsonl(lines))]))
            self.frame_files += 1

    # Frame files are written by a worker thread fed through a queue. Creating
    # thousands of small files is mostly kernel time (about 0.1-0.5 ms each on
    # an ext4 VM disk), and SQLite releases the GIL while it inserts, builds
    # indexes and commits, so the two overlap instead of adding up.

    def start_frames_writer(self) -> None:
        self._frames_thread.start()

    def finish_frames_writer(self, *, report_errors: bool = True) -> None:
        """Wait for the worker; re-raise what it failed with, if anything."""
        if self._frames_thread.is_alive():
            self._frames_queue.put(None)
            self._frames_thread.join()
        if report_errors and self._frames_error is not None:
            raise self._frames_error

    def _frames_worker(self) -> None:
        root = os.fspath(self.frames_root)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC
        try:
            while (item := self._frames_queue.get()) is not None:
                sid, files = item
                directory = os.path.join(root, sid)
                with suppress(FileExistsError):  # a leftover from an earlier build
                    os.mkdir(directory)
                for name, data in files:
                    fd = os.open(os.path.join(directory, name), flags, 0o644)
                    try:
                        os.write(fd, data)
                    finally:
                        os.close(fd)
        except BaseException as exc:  # reported by finish_frames_writer()
            self._frames_error = exc


# --------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------


def _neighbour_rows(conn: sqlite3.Connection, now_ms: int) -> None:
    rng = Random("sessions-admin-demo:neighbours")
    kinds = ("fact", "preference", "summary")
    bodies = (
        "alice prefers short answers",
        "checkout is owned by team-payments",
        "staging resets every Sunday night",
        "refunds above 500 EUR need a second approver",
        "the indexer lags after bulk imports",
        "use the read-only replica for ad-hoc SQL",
        "deploys freeze on the last day of the quarter",
        "ops.pager escalates after 15 minutes",
    )
    for i, body in enumerate(bodies, start=1):
        conn.execute(
            "INSERT INTO memory_records VALUES (?, ?, ?, ?)",
            (i, kinds[i % 3], body, now_ms - rng.randint(1, 200) * _DAY_MS),
        )
        vector = struct.pack("<16f", *(rng.uniform(-1, 1) for _ in range(16)))
        conn.execute("INSERT INTO memory_embeddings VALUES (?, ?, ?)", (i, 16, vector))


def build_demo_home(
    home: Path,
    *,
    sessions: int = 2000,
    messages_per_session: int = 20,
    seed: int = 1,
    big_session_messages: int = 0,
    frames_fraction: float = 0.3,
    now_ms: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> DemoSummary:
    """Create ``<home>/data/agents/store.db`` and ``<home>/sessions/`` with demo data.

    Raises ``FileExistsError`` if the store (or its -wal/-journal) already
    exists: a demo home is never overwritten (it might be a real one). Frame
    files of an earlier build in ``<home>/sessions/`` are overwritten or left
    in place, so use a fresh home for exact reproductions. The store is built under a
    temporary name and linked into place only when complete, so an
    interrupted build leaves no half-filled ``store.db`` behind.

    ``progress``, if given, is called with the number of messages written so
    far after each chunk. ``now_ms`` (default: the current time) is the
    instant the data ends at; pass it explicitly for reproducible output.
    """
    if sessions < 0 or messages_per_session < 0 or big_session_messages < 0:
        raise ValueError("sessions, messages_per_session and big_session_messages must be >= 0")
    if not 0.0 <= frames_fraction <= 1.0:
        raise ValueError("frames_fraction must be between 0 and 1")
    home = Path(home)
    store = home / STORE_RELPATH
    # A leftover -wal or -journal would be replayed into the new file by
    # SQLite, so it counts as an existing store too.
    for existing in (store, Path(f"{store}-wal"), Path(f"{store}-journal")):
        if existing.exists():
            raise FileExistsError(
                f"refusing to overwrite existing store {existing}; remove it (and "
                f"{home / FRAMES_DIRNAME}) or pick another home"
            )
    if now_ms is None:
        now_ms = int(time.time() * 1000)
    started = time.perf_counter()
    store.parent.mkdir(parents=True, exist_ok=True)
    frames_root = home / FRAMES_DIRNAME
    frames_root.mkdir(parents=True, exist_ok=True)

    before, after = schema_statements(SCHEMA_PATH.read_text(encoding="utf-8"))
    partial = store.with_name(store.name + ".partial")
    for leftover in (
        partial,
        Path(f"{partial}-journal"),
        Path(f"{partial}-wal"),
        Path(f"{partial}-shm"),
    ):
        leftover.unlink(missing_ok=True)

    builder = _Builder(
        home,
        sessions=sessions,
        messages_per_session=messages_per_session,
        seed=seed,
        big_session_messages=big_session_messages,
        frames_fraction=frames_fraction,
        now_ms=now_ms,
        progress=progress,
    )
    # isolation_level=None: we issue BEGIN/COMMIT ourselves.
    conn = sqlite3.connect(partial, isolation_level=None)
    try:
        # Build settings: no journal, no fsync, a big cache (also the sorter's
        # memory for CREATE INDEX). The file is private until linked into
        # place, so a crash only loses the partial file. One sorter helper
        # thread: on 10M rows, more threads were no faster on a 2-core machine.
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("PRAGMA cache_size = -524288")  # 512 MiB
        conn.execute(f"PRAGMA threads = {1 if (os.cpu_count() or 1) > 1 else 0}")
        for stmt in before:
            conn.execute(stmt)
        for stmt in _NEIGHBOUR_DDL:
            conn.execute(stmt)
        conn.execute("BEGIN")
        _neighbour_rows(conn, now_ms)
        builder.start_frames_writer()
        try:
            builder.run(conn)
            for stmt in after:
                conn.execute(stmt)
            conn.execute("COMMIT")
            # What the runtime runs with; persistent in the file header.
            conn.execute("PRAGMA journal_mode = WAL")
            conn.close()
        except BaseException:
            builder.finish_frames_writer(report_errors=False)  # keep the first error
            raise
        builder.finish_frames_writer()
        try:
            os.link(partial, store)  # fails if a store appeared meanwhile
            partial.unlink()
        except FileExistsError:
            raise FileExistsError(f"refusing to overwrite existing store {store}") from None
        except OSError:
            if store.exists():
                raise FileExistsError(f"refusing to overwrite existing store {store}") from None
            partial.rename(store)  # filesystems without hard links
    except BaseException:
        conn.close()
        for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
            leftover.unlink(missing_ok=True)
        raise
    return DemoSummary(
        sessions=builder.session_rows,
        messages=builder.messages,
        state_rows=builder.state_rows,
        frame_files=builder.frame_files,
        seconds=time.perf_counter() - started,
        store_path=store,
        frames_root=frames_root,
    )
