"""Deploy a copy of the repo as the Production section of docs/operations.md says, and talk to it.

Shared by the production tests: the copy has no ``var/`` (a fresh clone),
the steps are read from that document itself (so the two cannot drift), and
gunicorn is started from the copy's ``gunicorn.conf.py``.
"""

from __future__ import annotations

import http.client
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

ROOT = Path(__file__).resolve().parent.parent
#: Where the production steps are written (and read from, so the two cannot drift).
PRODUCTION_DOC = "docs/operations.md"
HOST = "admin.example.com"
PASSWORD = "a-long-test-password-1"


def production_block(readme: str) -> list[list[str]]:
    """The production doc's Production commands, each split as a shell would."""
    block = readme.split("## Production", 1)[1].split("```sh", 1)[1].split("```", 1)[0]
    logical = block.replace("\\\n", " ").splitlines()
    return [words for line in logical if (words := shlex.split(line, comments=True))]


def production_install(readme: str) -> list[str]:
    """The production doc's ``pip`` command, without the ``pip``."""
    return next(words[1:] for words in production_block(readme) if words[0] == "pip")


def production_steps(readme: str) -> tuple[dict[str, str], list[list[str]], list[str]]:
    """The production doc's Production block: its exported variables, its manage.py steps
    and its gunicorn command, each split as a shell would."""
    env: dict[str, str] = {}
    steps: list[list[str]] = []
    server: list[str] = []
    for words in production_block(readme):
        if words[0] == "export":
            env.update(word.split("=", 1) for word in words[1:])
        elif words[:2] == ["python", "manage.py"]:
            steps.append(words[2:])
        elif words[0] == "gunicorn":
            server = words[1:]
    return env, steps, server


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def copy_repo(dest: Path) -> Path:
    """The files git knows (committed or new, never ignored ones like var/)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, (entry.decode() for entry in listed)):
        source = ROOT / name
        if source.is_file():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest / name)
    return dest


@dataclass
class Response:
    status: int
    headers: http.client.HTTPMessage
    body: str


@dataclass
class Browser:
    """Cookies and CSRF by hand, as a browser behind the TLS proxy would send them."""

    port: int
    cookies: dict[str, str] = field(default_factory=dict)

    def request(self, method: str, path: str, body: str = "", **headers: str) -> Response:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {
            "Host": HOST,
            "X-Forwarded-Proto": "https",  # what the production doc's TLS proxy sets
            **headers,
        }
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if body:
            sent["Content-Type"] = "application/x-www-form-urlencoded"
            sent["Origin"] = f"https://{HOST}"
            sent["Content-Length"] = str(len(body.encode()))
        # skip_host: http.client would otherwise send 127.0.0.1 as the Host.
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in sent.items():
            conn.putheader(name, value)
        conn.endheaders(body.encode() if body else None)
        reply = conn.getresponse()
        for header in reply.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(header).items():
                self.cookies[name] = morsel.value
        result = Response(reply.status, reply.headers, reply.read().decode("utf-8", "replace"))
        conn.close()
        return result

    def submit(self, path: str, fields: dict[str, str], to: str | None = None) -> Response:
        """GET the form at ``path`` and POST ``fields`` with its CSRF token (to ``to``, if
        the form's action is another URL)."""
        form = self.request("GET", path).body
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form).group(1)
        body = urlencode({"csrfmiddlewaretoken": token, **fields})
        return self.request("POST", to or path, body)

    def log_in(self, username: str, password: str, path: str = "/login/") -> Response:
        return self.submit(path, {"username": username, "password": password})


@dataclass
class Deployment:
    repo: Path
    env: dict[str, str]
    port: int
    process: subprocess.Popen
    log: Path
    outputs: dict[str, str]
    python: str = sys.executable
    #: What the production doc starts beside the server (the job worker).
    background: list[subprocess.Popen] = field(default_factory=list)

    def manage(self, *args: str) -> subprocess.CompletedProcess:
        """``python manage.py ARGS`` in the deployed copy, as an operator would run it."""
        return subprocess.run(
            [self.python, "manage.py", *args],
            cwd=self.repo,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
        )

    def browser(self) -> Browser:
        return Browser(self.port)

    def log_lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def stop(self) -> None:
        for process in [self.process, *self.background]:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    process.kill()


def clean_environment(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DJANGO_", "SESSIONS_ADMIN_", "AGENTS_", "GUNICORN_"))
        # A server's Python finds only its own venv's packages.
        and k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")
    }
    env.update(extra)
    return env


def production_venv(repo: Path, venv: Path) -> str:
    """A new venv from the Python ``scripts/find-python`` picks, holding only what
    the production doc's ``pip install`` puts there; returns its interpreter."""
    found = subprocess.run(
        [str(repo / "scripts" / "find-python")], capture_output=True, text=True, check=True
    ).stdout.strip()
    subprocess.run([found, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    python = str(venv / "bin" / "python")
    install = production_install((repo / PRODUCTION_DOC).read_text())
    done = subprocess.run(
        [python, "-m", "pip", *install, "--quiet"],
        cwd=repo,
        env=clean_environment(),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"pip {' '.join(install)}:\n{done.stdout}{done.stderr}"
    return python


def deploy(
    workdir: Path, host_home: Path, *, fresh_venv: bool = False, **extra_env: str
) -> Deployment:
    """Copy the repo, run the production doc's steps in it, start its gunicorn command.

    ``fresh_venv``: run everything with a new venv's Python holding only the
    README's install (slow: ~10 s with pip's cache, more without), not the
    test run's own.
    """
    repo = copy_repo(workdir / "repo")
    assert not (repo / "var").exists()
    python = production_venv(repo, workdir / "venv") if fresh_venv else sys.executable
    exported, steps, server = production_steps((repo / PRODUCTION_DOC).read_text())
    env = clean_environment(**exported)
    env.update(
        DJANGO_SECRET_KEY="prod-test-" + "k" * 40,
        AGENTS_HOST_HOME=str(host_home),
        DJANGO_SUPERUSER_PASSWORD=PASSWORD,
        **extra_env,
    )
    outputs: dict[str, str] = {}
    background: list[subprocess.Popen] = []
    for step in steps:
        if step[-1] == "&":
            # The job worker: it runs beside the server, as the production doc starts it.
            log = (workdir / f"{step[0]}.log").open("w")
            background.append(
                subprocess.Popen(
                    [python, "manage.py", *step[:-1]],
                    cwd=repo,
                    env=env,
                    stdout=log,
                    stderr=subprocess.STDOUT,
                )
            )
            continue
        if step == ["createsuperuser"]:
            # The production doc's step asks for a password at the terminal; the same, unattended:
            step = [*step, "--noinput", "--username", "admin", "--email", "admin@example.com"]
        done = subprocess.run(
            [python, "manage.py", *step],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"manage.py {' '.join(step)}:\n{done.stdout}{done.stderr}"
        outputs[" ".join(step)] = done.stdout + done.stderr
    process, port, log = serve(repo, env, server, workdir / "gunicorn.log", python)
    deployment = Deployment(repo, env, port, process, log, outputs, python, background)
    wait_until_healthy(deployment)
    return deployment


def serve(
    repo: Path, env: dict[str, str], server: list[str], log: Path, python: str = sys.executable
) -> tuple[subprocess.Popen, int, Path]:
    """Start the production doc's gunicorn command in ``repo`` on a free port."""
    port = free_port()
    bind = [w if not w.startswith("127.0.0.1:") else f"127.0.0.1:{port}" for w in server]
    process = subprocess.Popen(
        [python, "-m", "gunicorn", *bind],
        cwd=repo,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    return process, port, log


def another_instance(deployment: Deployment, workdir: Path) -> Deployment:
    """A second dashboard from the same code, with its own data folder."""
    env = {**deployment.env, "SESSIONS_ADMIN_VAR_DIR": str(workdir / "var-2")}
    _, _, server = production_steps((deployment.repo / PRODUCTION_DOC).read_text())
    process, port, log = serve(
        deployment.repo, env, server, workdir / "gunicorn-2.log", deployment.python
    )
    second = Deployment(deployment.repo, env, port, process, log, {}, deployment.python)
    wait_until_healthy(second)
    return second


def wait_until_healthy(deployment: Deployment, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if deployment.process.poll() is not None:
            raise AssertionError("gunicorn exited:\n" + deployment.log.read_text())
        try:
            if deployment.browser().request("GET", "/healthz").status == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    deployment.stop()
    raise AssertionError("gunicorn never answered /healthz:\n" + deployment.log.read_text())
