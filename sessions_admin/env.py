"""Tiny helpers that read settings from the environment and fail loudly.

Every bad value raises ``ImproperlyConfigured`` naming the variable, so a
typo in a deployment stops the process at start instead of running with a
surprising default.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def env_is_set(name: str) -> bool:
    """Whether the deployment said anything at all about ``name`` (an empty value counts)."""
    return name in os.environ


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return raw


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise ImproperlyConfigured(
        f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}"
    )


def env_int(name: str, default: int, *, minimum: int = 0) -> int:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number; got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}; got {value}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    raw = os.environ.get(name)
    if raw is None:
        return default
    items = [item.strip() for item in raw.split(",") if item.strip()]
    if not items:
        raise ImproperlyConfigured(f"{name} is set but lists no value")
    return items


def env_path(name: str) -> Path | None:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return None
    path = Path(raw).expanduser()
    if not path.is_absolute():
        path = Path.cwd() / path
    return path


def env_url_template(name: str, placeholder: str) -> str:
    raw = os.environ.get(name, "").strip()
    if raw and placeholder not in raw:
        raise ImproperlyConfigured(f"{name} must contain {placeholder}; got {raw!r}")
    if raw and not raw.startswith(("https://", "http://")):
        raise ImproperlyConfigured(f"{name} must be an http(s) URL; got {raw!r}")
    return raw


#: Engines Django's own database may use (the store is SQLite, always).
DATABASE_ENGINES = ("django.db.backends.postgresql", "django.db.backends.sqlite3")


def env_database_url(name: str) -> dict | None:
    """A ``DATABASES`` entry from a URL (``postgres://…``, ``sqlite:///…``), or None."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    import dj_database_url

    try:
        config = dj_database_url.parse(raw, conn_max_age=60, conn_health_checks=True)
    except ValueError as exc:  # UnknownSchemeError included
        raise ImproperlyConfigured(f"{name} is not a database URL we can read: {exc}") from None
    if config.get("ENGINE") not in DATABASE_ENGINES:
        raise ImproperlyConfigured(
            f"{name} must be a postgres:// or sqlite:// URL; got {config.get('ENGINE')!r}"
        )
    if not config.get("NAME"):
        raise ImproperlyConfigured(f"{name} names no database (postgres://user@host/NAME)")
    return dict(config)


def env_mask_rules(off_name: str, rules_name: str) -> tuple:
    """The masking rules in force: built-ins less ``off_name``'s list, plus
    ``rules_name``'s JSON object of name to regular expression."""
    from sessions_admin.masking import parse_rules

    raw = env_str(rules_name).strip()
    try:
        custom = json.loads(raw) if raw else {}
    except ValueError as exc:
        raise ImproperlyConfigured(f"{rules_name} must be a JSON object: {exc}") from None
    if not isinstance(custom, dict) or not all(isinstance(v, str) for v in custom.values()):
        raise ImproperlyConfigured(
            f"{rules_name} must be a JSON object of names to patterns, "
            'like {"ticket": "T-[0-9]+"}'
        )
    try:
        return parse_rules(env_str(off_name), custom)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{rules_name} / {off_name}: {exc}") from None
