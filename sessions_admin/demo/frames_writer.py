"""Activity-frame files of the demo home, and the thread that writes them.

For a fraction of the sessions, :mod:`sessions_admin.demo.rows` hands
each session's finished rows to :meth:`FramesWriter._write_frames`, which
turns one to three of its turns (requests) into ``activity-<requestId>.jsonl``
files the way the runtime logs them; a few orphan directories (sessions that
no longer exist) are added at the end. Frames draw only from the builder's
``frng`` stream, so the tables never depend on how many frames are written.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from queue import SimpleQueue
from random import Random
from threading import Thread
from typing import Any

from sessions_admin.demo.pools import compact_json
from sessions_admin.demo.vocabulary import DAY_MS, MODELS, WINDOW_MS

FRAMES_DIRNAME = "sessions"
_ORPHAN_DIRS = 5


def _jsonl(objects: Sequence[dict[str, Any]]) -> bytes:
    return "".join(compact_json(o) + "\n" for o in objects).encode()


class FramesWriter:
    """The frames half of :class:`~sessions_admin.demo.rows.Builder` (a mixin).

    The builder's ``__init__`` sets the state declared below: one build's
    frame sessions, its ``frng`` stream and the writer thread's queue.
    """

    frames_root: Path
    frng: Random
    now_ms: int
    frame_sessions: set[int]
    frame_files: int
    _frames_queue: SimpleQueue[tuple[str, list[tuple[str, bytes]]] | None]
    _frames_thread: Thread
    _frames_error: BaseException | None

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
                frames.append(self._model_frame(r, prev, trace, root, model))
            elif role == "tool":
                frames.extend(_tool_frames(r, trace, root))
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

    def _model_frame(self, r: tuple, prev: int, trace: str, root: str, model: str) -> dict:
        """The model call that produced assistant message ``r``, from the previous message."""
        frng = self.frng
        return {
            "ts": prev,
            "kind": "model.call",
            "traceId": trace,
            "spanId": r[11],
            "parentSpanId": root,
            "name": "model.call",
            "durationMs": r[13] - prev,
            "payload": {
                "model": model,
                "inputTokens": frng.randint(800, 24_000),
                "outputTokens": frng.randint(20, 900),
                "stopReason": "tool_use" if r[4] else "end_turn",
            },
        }

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
            t0 = self.now_ms - WINDOW_MS - frng.randint(1, 30) * DAY_MS
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
                    "model": MODELS[0][0],
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


def _tool_frames(r: tuple, trace: str, root: str) -> list[dict]:
    """The call and result frames of tool message ``r`` (its duration ends at its ts)."""
    ts, duration = r[13], r[9]
    args, result = json.loads(r[7]), json.loads(r[8])
    common = {"traceId": trace, "spanId": r[11], "parentSpanId": root, "name": r[3]}
    return [
        {
            "ts": ts - duration,
            "kind": "tool.call",
            **common,
            "payload": {"toolCallId": r[4], "target": r[5], "op": r[6], "args": args},
        },
        {
            "ts": ts,
            "kind": "tool.result",
            **common,
            "durationMs": duration,
            "payload": {"toolCallId": r[4], "ok": result.get("ok"), "result": result},
        },
    ]
