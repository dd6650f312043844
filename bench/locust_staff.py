"""Locust users for bench/bench_load.py: support staff browsing the dashboard.

Not run by hand: bench_load.py starts ``locust --headless -f`` on this file
with ``BENCH_LOAD_SAMPLES`` naming a JSON file of ids taken from the store
(sessions, targets, principals, frame requests) and the staff's session
cookies, and
``BENCH_LOAD_TIMINGS`` the file where every request's time is written.

Each user starts with the session cookie of an account that bench_load.py
logged in beforehand (a password hash is slow on purpose: it is timed
there, apart), then clicks with a think time between pages of half to one
and a half times ``BENCH_LOAD_THINK_S`` (default 2 s, i.e. 1-3 s):
the list (default, filtered, searched, "Load more"), transcripts (one of them
the 50,000-message session), a session's frames and a request's frames, and
the targets overview, weighted as a support shift would use them.
"""

from __future__ import annotations

import html
import itertools
import json
import os
import random
import re
from urllib.parse import quote, urlencode

from locust import HttpUser, between, events, task

with open(os.environ["BENCH_LOAD_SAMPLES"]) as _file:
    SAMPLES = json.load(_file)
_LOGINS = itertools.cycle(SAMPLES["logins"])
_MORE = re.compile(r'href="(\?[^"]*cursor=[^"]+)"')


#: Every request as (name, ms, failed): exact percentiles.
_TIMINGS: list[tuple[str, float, bool]] = []


@events.request.add_listener
def _record(name: str, response_time: float, exception: BaseException | None, **kwargs) -> None:
    _TIMINGS.append((name, response_time, exception is not None))


@events.quitting.add_listener
def _save(**kwargs) -> None:
    with open(os.environ["BENCH_LOAD_TIMINGS"], "w") as file:
        json.dump(_TIMINGS, file)


def session_path(session_id: str, sub: str = "") -> str:
    return f"/sessions/{quote(session_id, safe='')}/{sub}"


#: bench_load.py --think: the mean pause between a user's pages.
THINK_S = float(os.environ.get("BENCH_LOAD_THINK_S", "2"))


class Staff(HttpUser):
    wait_time = between(THINK_S * 0.5, THINK_S * 1.5)

    def on_start(self) -> None:
        # Logged in beforehand by bench_load.py (its own figure): the run is all browsing.
        self.client.cookies.set("sessionid", next(_LOGINS))

    def listing(self, query: dict[str, str], name: str) -> str:
        url = "/sessions/" + (f"?{urlencode(query)}" if query else "")
        return self.client.get(url, name=name).text

    @task(6)
    def session_list(self) -> None:
        page = self.listing({}, "list")
        more = _MORE.search(page)
        if more and random.random() < 0.3:
            # As htmx asks for it: the next rows only.
            self.client.get(
                "/sessions/" + html.unescape(more.group(1)),
                headers={"HX-Request": "true"},
                name="list: load more",
            )

    @task(3)
    def list_by_target(self) -> None:
        self.listing({"target": random.choice(SAMPLES["targets"])}, "list: target")

    @task(2)
    def list_by_target_and_profile_last_day(self) -> None:
        query = {"target": random.choice(SAMPLES["targets"]), "profile": "default"}
        self.listing({**query, "active": "24h"}, "list: target+profile, 24h")

    @task(1)
    def list_by_principal(self) -> None:
        self.listing({"principal": random.choice(SAMPLES["principals"])}, "list: principal")

    @task(5)
    def transcript(self) -> None:
        self.client.get(session_path(random.choice(SAMPLES["sessions"])), name="transcript")

    @task(1)
    def big_transcript(self) -> None:
        self.client.get(session_path(SAMPLES["big_session"]), name="transcript: 50k messages")

    @task(2)
    def frames(self) -> None:
        session_id, _ = random.choice(SAMPLES["frames"])
        self.client.get(session_path(session_id, "frames/"), name="frames: requests")

    @task(2)
    def request_frames(self) -> None:
        session_id, request_id = random.choice(SAMPLES["frames"])
        path = session_path(session_id, f"frames/{quote(request_id, safe='')}/")
        self.client.get(path, name="frames: one request")

    @task(1)
    def targets(self) -> None:
        self.client.get("/targets/", name="targets")
