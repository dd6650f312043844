"""gunicorn for sessions-admin: ``gunicorn -c gunicorn.conf.py [--bind HOST:PORT]``.

Sized for a small host (2 cores): a process per core plus one, each with a
few threads, since a request spends much of its time inside SQLite, which
releases the GIL. ``GUNICORN_WORKERS`` / ``GUNICORN_THREADS`` override.

Restarts are graceful: ``kill -HUP <master>`` reloads this file and the code
and replaces the workers one by one once their requests are done; ``TERM``
lets running requests finish (up to ``graceful_timeout``) before exiting;
workers are also recycled after ``max_requests``, with jitter so that they
never restart together.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

wsgi_app = "sessions_admin.wsgi:application"
chdir = str(Path(__file__).resolve().parent)
bind = ["127.0.0.1:8000"]  # --bind on the command line takes precedence

_cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
worker_class = "gthread"
workers = int(os.environ.get("GUNICORN_WORKERS") or (_cores or 1) + 1)
threads = int(os.environ.get("GUNICORN_THREADS") or 4)

# The store stops any list/search query after SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS,
# and a page runs at most a few of them (its rows, then a capped count): a
# worker that has been silent for four limits is stuck, not slow. A restart
# waits as long for the requests in flight.
_query_limit_s = int(os.environ.get("SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS") or 3000) / 1000
timeout = max(30, math.ceil(4 * _query_limit_s))
graceful_timeout = timeout
keepalive = 5  # behind a proxy that reuses its connections
max_requests = 5000
max_requests_jitter = 500
preload_app = False  # so that HUP loads new code
# The heartbeat file lives in memory where there is /dev/shm (gunicorn's own advice).
worker_tmp_dir = "/dev/shm" if os.path.isdir("/dev/shm") else None
# gunicorn 25+ opens a control socket in $HOME by default: several instances
# on one host would share it. GUNICORN_CONTROL_SOCKET=path turns it on.
control_socket = os.environ.get("GUNICORN_CONTROL_SOCKET") or "gunicorn.ctl"
control_socket_disable = not os.environ.get("GUNICORN_CONTROL_SOCKET")

# The application logs one line per request itself (sessions_admin/logs.py),
# so gunicorn's access log stays off; its own lines use the same format.
_log_format = (os.environ.get("DJANGO_LOG_FORMAT") or "json").strip().lower()
_formatter = "TextFormatter" if _log_format == "text" else "JsonFormatter"
logconfig_dict = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"ours": {"()": f"sessions_admin.logs.{_formatter}"}},
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": "ours",
            "stream": "ext://sys.stderr",
        },
    },
    "root": {"level": "INFO", "handlers": ["console"]},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": ["console"], "propagate": False},
        "gunicorn.access": {"level": "CRITICAL", "handlers": [], "propagate": False},
    },
}
