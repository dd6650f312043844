"""Session, message and state rows: the seeded generator and its bulk load.

:class:`Builder` draws every table row from one ``Random`` stream in a fixed
order, buffers them, and flushes each chunk (sorted by ``ts``, so concurrent
sessions interleave as in a live store) through multi-row INSERTs. It also
appends the optional huge ``sess_big`` session. The activity-frame half of a
build comes from :class:`~sessions_admin.demo.frames_writer.FramesWriter`.
"""

from __future__ import annotations

import math
import sqlite3
from bisect import bisect
from collections.abc import Callable, Iterator, Sequence
from itertools import chain, islice
from operator import itemgetter
from pathlib import Path
from queue import SimpleQueue
from random import Random
from threading import Thread
from typing import Any

from sessions_admin.demo.frames_writer import FRAMES_DIRNAME, FramesWriter
from sessions_admin.demo.pools import Pools, principals, weighted
from sessions_admin.demo.vocabulary import (
    CUSTOM_STATE_KEYS,
    DAY_MS,
    MODELS,
    PROFILES,
    TARGETS,
    WINDOW_MS,
)
from sessions_admin.sqlhelpers import placeholders

#: Above this many sessions, frames are written for at most
#: ``FRAMES_CAP_SESSIONS`` of them, so a 500k-session store does not create
#: millions of files.
FRAMES_CAP_THRESHOLD = 20_000
FRAMES_CAP_SESSIONS = 2_000

BIG_SESSION_ID = "sess_big"

# Rows are buffered and flushed in chunks of about this many messages; each
# chunk is sorted by ts first so that, as in a live store, the messages of
# concurrent sessions interleave in rowid order instead of sitting together.
_CHUNK_MESSAGES = 50_000
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
        one = "(" + placeholders(columns.count(",") + 1) + ")"
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

_TS = itemgetter(13)  # position of ts in a message row


class Builder(FramesWriter):
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
        self.pools = Pools(Random(f"sessions-admin-demo:{seed}:pools"))
        self.principals = principals(self.rng)
        n_frames = round(sessions * frames_fraction)
        if sessions > FRAMES_CAP_THRESHOLD:
            n_frames = min(n_frames, FRAMES_CAP_SESSIONS)
        self.frame_sessions = set(self.frng.sample(range(sessions), n_frames))
        self._targets = weighted(TARGETS)
        self._profiles = weighted(PROFILES)
        self._models = weighted(MODELS)
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
            key = CUSTOM_STATE_KEYS[rng.getrandbits(2)]
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
            now - int(WINDOW_MS * rng.random() ** 1.6) - 1_000 for _ in range(self.n_sessions)
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
        model = MODELS[0][0]
        mean_gap = (sum(p.think_gaps) + 3 * sum(p.model_gaps) + sum(p.tool_gaps)) / (
            4 * len(p.think_gaps)
        )
        scale = max(1, math.ceil(n * mean_gap / (30 * DAY_MS)))
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
