"""The demo world as plain data: the words the generated sessions are made of.

Its calendar (the data spans the 90 days before ``now_ms``), the weighted
targets, profiles and models, names of people, agents and services, the
templates users and the assistant speak in, and the tools with their
operations and failure modes. Nothing here draws a random number:
:mod:`sessions_admin.demo.pools` turns it into pools once per build.
"""

from __future__ import annotations

from sessions_admin.store import spec

# The calendar: sessions are created in the 90 days before ``now_ms``.
DAY_MS = 86_400_000
HOUR_MS = 3_600_000
WINDOW_MS = 90 * DAY_MS


# --------------------------------------------------------------------------
# Vocabulary: the building blocks of the pools
# --------------------------------------------------------------------------

# (target_key, weight): a few targets get most of the traffic.
TARGETS: tuple[tuple[str, int], ...] = (
    ("system.registry", 30),
    ("infra.deployer", 19),
    ("ops.pager", 14),
    ("billing.ledger", 11),
    ("support.inbox", 9),
    ("data.warehouse", 8),
    ("search.indexer", 6),
    ("auth.gateway", 3),
)
# Weights of the demo's sessions over the runtime's built-in profiles.
PROFILE_WEIGHTS = {
    "default": 46,
    "explain": 17,
    "edit": 12,
    "propose": 10,
    "evaluate": 8,
    "monitor": 7,
}
PROFILES: tuple[tuple[str, int], ...] = tuple(
    (name, PROFILE_WEIGHTS[name]) for name in spec.PROFILES
)
MODELS: tuple[tuple[str, int], ...] = (
    ("claude-sonnet-4-5", 62),
    ("claude-haiku-4-5", 21),
    ("claude-opus-4-1", 12),
    ("claude-sonnet-4", 5),
)
# fmt: off
FIRST_NAMES = (
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi", "ivan", "judy",
    "mallory", "niaj", "olivia", "peggy", "rupert", "sybil", "trent", "victor", "walter",
    "yasmin", "zoe", "aaron", "bianca", "chen", "diego", "elif", "farah", "gus", "hana", "igor",
    "jun", "kofi", "lena", "mateo", "nadia", "omar", "priya", "quinn", "rosa", "sami", "tara",
    "uma", "vik", "wen", "xavier", "yuki", "zane", "amara", "bjorn",
)
AGENT_NAMES = (
    "scheduler", "triage", "nightly-report", "oncall-bot", "deploy-watcher", "billing-recon",
    "inbox-sorter", "index-warden", "cost-guard", "sla-monitor", "backup-checker",
    "release-notes",
)
SERVICES = (
    "checkout", "payments", "notifier", "image-resizer", "geo-lookup", "session-broker",
    "feature-flags", "report-builder", "mailer", "ledger-sync", "invoice-render", "catalog",
)
# fmt: on
NAMESPACES = ("prod", "staging", "eu-west", "us-east", "internal", "sandbox")
ENVS = ("production", "staging", "the canary ring", "eu-west-1", "us-east-2")
WHENS = (
    "since this morning",
    "after the 14:00 deploy",
    "overnight",
    "for the last two hours",
    "since Friday",
    "intermittently this week",
    "right after the migration",
)
TABLES = ("orders_daily", "events_raw", "customers", "invoices", "page_views", "refunds")
REGIONS = ("eu-west-1", "us-east-2", "ap-south-1", "São Paulo", "Zürich")
TEAMS = ("payments", "growth", "platform", "support", "data", "search", "identity")
TERMS = ("invoice pdf", "reset password", "refund policy", "api limits", "café menu")

QUESTIONS: dict[str, tuple[str, ...]] = {
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
OPENERS = ("", "", "", "", "Hi! ", "Quick question: ", "Morning. ", "Follow-up: ", "@agent ")
DETAILS = (
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
FINDINGS = (
    "I checked {target} and found {n} entries matching {svc}; {m} of them look stale.",
    "The lookup shows {svc} was last updated {when} by {person}.",
    "Nothing in {target} looks wrong for {svc}: version {ver}, healthy, no pending changes.",
    "The errors come from {svc}: it times out after 30 s when calling {target}.",
    "The rollback plan has {n} steps; none of them touch the {env} databases.",
    "I couldn't reach {target} on the first try (timeout); the retry succeeded.",
    "{n} of the last {m} requests to {svc} failed with 503, all from {region}.",
    "The query returned {n} rows; the gap starts at 02:00 UTC, when the {table} load ran.",
)
ADVICE = (
    "I suggest removing the stale entries; want me to prepare that?",
    "Next step: confirm with {person} before changing anything in {env}.",
    "I can open a ticket with these details if you like.",
    "No action needed for now; I'll keep an eye on it.",
    "Short version: {svc} is fine, the alert was noise.",
    "If it happens again, check the {svc} dashboard first.",
    "I have not changed anything; all of the above was read-only.",
)
ASKS = (
    "Let me check that with {tool}.",
    "I'll call {tool} to see the current state of {svc}.",
    "First, {tool} on {svc} to confirm.",
    "Running {tool}; this may take a moment.",
    "To be sure, I'll look at {svc} in {target} via {tool}.",
    "Before answering I want fresh data, so: {tool}.",
)
ASK_REASONS = (
    "I want the current numbers before suggesting anything.",
    "That tells us whether the problem is upstream or in {svc} itself.",
    "If this comes back clean we can rule out {target}.",
    "It is read-only, nothing changes in {env}.",
    "The last answer from {person} was {when}, so it may be stale.",
    "",
)

# Which tools an agent uses against each target: 16-slot decks so a
# ``getrandbits(4)`` picks a tool with the right skew.
TOOL_DECKS: dict[str, dict[str, int]] = {
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
TOOL_OPS: dict[str, tuple[str, ...]] = {
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
ERRORS: dict[str, tuple[tuple[str, str], ...]] = {
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
TOOL_ERROR_RATE = 0.08
CUSTOM_STATE_KEYS = ("ui.layout", "plan", "scratch.notes", "eval.scores")
