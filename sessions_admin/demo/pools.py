"""Pools: the vocabulary expanded into ready-made texts, JSON and timings.

Built once per build from a seeded ``Random``, so the hot loop in
:mod:`sessions_admin.demo.rows` only indexes lists by ``getrandbits``.
Also here: the JSON encoder every generated document goes through, session
titles as the runtime derives them, weighted choices and the principals.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from random import Random
from typing import Any

from sessions_admin.demo.vocabulary import (
    ADVICE,
    AGENT_NAMES,
    ASK_REASONS,
    ASKS,
    DAY_MS,
    DETAILS,
    ENVS,
    ERRORS,
    FINDINGS,
    FIRST_NAMES,
    HOUR_MS,
    NAMESPACES,
    OPENERS,
    QUESTIONS,
    REGIONS,
    SERVICES,
    TABLES,
    TARGETS,
    TEAMS,
    TERMS,
    TOOL_DECKS,
    TOOL_ERROR_RATE,
    TOOL_OPS,
    WHENS,
)

# Compact separators: the runtime writes JSON.stringify output. One encoder
# instance: json.dumps with non-default arguments builds a new one per call.
compact_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode


class Pools:
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
        self.targets = [t for t, _ in TARGETS]
        self.user_texts: list[list[str]] = []
        self.replies: list[list[str]] = []
        self.titles: dict[str, str] = {}
        for target in self.targets:
            texts = [self._user_text(target) for _ in range(1 << self.USER_BITS)]
            self.user_texts.append(texts)
            for text in texts:
                self.titles[text] = _title_of(text)
            self.replies.append([self._reply(target) for _ in range(1 << self.REPLY_BITS)])
        self.tools = {name: self._tool(name) for name in TOOL_OPS}
        # Per target: a 16-slot deck of tools and one of tool_target values
        # (mostly the session's own target, sometimes a neighbour).
        # Deck entries are (name, args, results, asks-for-this-target) tuples:
        # tuple unpacking is cheaper than attribute access in the hot loop.
        self.tool_decks: list[list[tuple[str, Any, Any, tuple[str, ...]]]] = []
        self.target_decks: list[list[str]] = []
        for target in self.targets:
            deck = [
                (tool.name, tool.args, tool.results, tool.asks[target])
                for tool in (self.tools[n] for n, k in TOOL_DECKS[target].items() for _ in range(k))
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
        first = self.rng.choice(OPENERS) + self._fill(self.rng.choice(QUESTIONS[target]), target)
        return self._sentences(first, DETAILS, target, 50, 400)

    def _reply(self, target: str) -> str:
        first = self._fill(self.rng.choice(FINDINGS), target)
        return self._sentences(first, FINDINGS + ADVICE + ADVICE, target, 80, 400)

    def _think_gap(self) -> int:
        rng = self.rng
        if rng.random() < 0.07:
            # The user comes back later: an hour to four days, log-uniform.
            return int(math.exp(rng.uniform(math.log(HOUR_MS), math.log(4 * DAY_MS))))
        return max(2_000, min(1_800_000, int(rng.lognormvariate(math.log(45_000), 1.0))))

    # -- tools --------------------------------------------------------------

    def _tool(self, name: str) -> _Tool:
        rng = self.rng
        ops = TOOL_OPS[name]
        args: list[tuple[str, str]] = []
        for _ in range(1 << self.ARGS_BITS):
            op = rng.choice(ops)
            args.append((op, compact_json(self._tool_args(name, op))))
        results: list[tuple[str, str]] = []
        for _ in range(1 << self.RESULT_BITS):
            if rng.random() < TOOL_ERROR_RATE:
                code, message = rng.choice(ERRORS[name])
                result: dict[str, Any] = {"ok": False, "error": {"code": code, "message": message}}
                content = f"{name} failed: {code}: {message}"
            else:
                value, summary = self._tool_value(name)
                result = {"ok": True, **value}
                content = f"{name} ok: {summary}"
            text = compact_json(result)
            # The content is what the model was shown: a summary line and the
            # start of the raw result.
            content += "\n" + (text if len(text) <= 300 else text[:299] + "…")
            results.append((text, content))
        # The assistant's request texts name the tool and the session's target.
        asks = {
            target: tuple(
                self._fill(
                    f"{rng.choice(ASKS)} {rng.choice(ASK_REASONS)}".replace("{tool}", name),
                    target,
                ).strip()
                for _ in range(1 << self.ASK_BITS)
            )
            for target in self.targets
        }
        return _Tool(name, tuple(args), tuple(results), asks)

    def _tool_args(self, name: str, op: str) -> dict[str, Any]:
        rng = self.rng
        svc, ns = rng.choice(SERVICES), rng.choice(NAMESPACES)
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
            table = rng.choice(TABLES)
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
                "env": rng.choice(ENVS),
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
        svc = rng.choice(SERVICES)
        if name == "registry.lookup":
            version = rng.randint(1, 60)
            return (
                {
                    "value": {
                        "key": f"actors/{svc}",
                        "version": version,
                        "owner": f"team-{rng.choice(TEAMS)}",
                        "address": f"{svc}.{rng.choice(NAMESPACES)}.svc:8080",
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
                    f'"{rng.choice(SERVICES)}"',
                    str(rng.randint(0, 999)),
                    f"#<actor {rng.choice(SERVICES)}>",
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
                f'"{rng.choice(SERVICES)}")',
                "out": rng.choice(("nil", "#t", f"{rng.randint(0, 500)}", "#<error timeout>")),
            }
            for _ in range(rng.randint(0, 12))
        ]
        return compact_json({"version": 2, "ns": "user", "bindings": bindings, "history": history})

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
        return compact_json(tree)

    def _custom_state(self) -> str:
        rng = self.rng
        return compact_json(
            {
                "pinned": rng.sample(SERVICES, rng.randint(0, 3)),
                "notes": self._fill(rng.choice(DETAILS)),
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
            "svc": lambda: rng.choice(SERVICES),
            "ns": lambda: rng.choice(NAMESPACES),
            "env": lambda: rng.choice(ENVS),
            "when": lambda: rng.choice(WHENS),
            "ver": lambda: f"v{rng.randint(1, 4)}.{rng.randint(0, 20)}.{rng.randint(0, 9)}",
            "n": lambda: rng.randint(2, 97),
            "m": lambda: rng.randint(1, 40),
            "ticket": lambda: f"{rng.choice(('SUP', 'INC', 'OPS'))}-{rng.randint(1000, 9999)}",
            "person": lambda: rng.choice(FIRST_NAMES).capitalize(),
            "acct": lambda: f"acct_{rng.getrandbits(32):08x}",
            "inv": lambda: f"INV-{rng.randint(100000, 999999)}",
            "table": lambda: rng.choice(TABLES),
            "region": lambda: rng.choice(REGIONS),
            "team": lambda: rng.choice(TEAMS),
            "term": lambda: rng.choice(TERMS),
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
    for opener in OPENERS:
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


def weighted(items: Sequence[tuple[str, int]]) -> tuple[list[str], list[int]]:
    """Names and cumulative weights, for ``random.choices(..., cum_weights=...)``."""
    return [name for name, _ in items], list(accumulate(w for _, w in items))


def principals(rng: Random) -> list[str]:
    """A few hundred principals, most frequent first (callers pick with a skew)."""
    users = [f"user:{n}" for n in FIRST_NAMES]
    users += [f"user:{n}.{c}" for n in FIRST_NAMES for c in "kmrs"]
    agents = [f"agent:{n}" for n in AGENT_NAMES] + [f"agent:worker-{i:02d}" for i in range(1, 25)]
    everyone = users + agents
    rng.shuffle(everyone)
    return everyone
