"""Settings for sessions-admin, read from the environment and secure by default.

The store (``agents`` database) is the runtime's SQLite file: we never migrate
it and write to it only through ``sessions_admin.deletion``. Django's own
tables live in ``default``, a separate SQLite file under ``var/``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.csp import CSP

from sessions_admin.env import (
    env_bool,
    env_choice,
    env_database_url,
    env_int,
    env_is_set,
    env_list,
    env_mask_rules,
    env_path,
    env_str,
    env_url_template,
)

BASE_DIR = Path(__file__).resolve().parent.parent

# --- Our data folder: Django's SQLite file, collected static files ---------
# Created here, so that a fresh clone's first `manage.py migrate` works; a
# folder we may not create stops the start with the variable to set. Mode 0700:
# it holds password hashes, sessions and the side index, for this user alone.
VAR_DIR = env_path("SESSIONS_ADMIN_VAR_DIR") or BASE_DIR / "var"
try:
    VAR_DIR.mkdir(mode=0o700, parents=True, exist_ok=True)
except OSError as exc:
    raise ImproperlyConfigured(
        f"The data folder {VAR_DIR} cannot be created ({exc.strerror}): "
        "set SESSIONS_ADMIN_VAR_DIR to a folder this user may write."
    ) from None

DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = env_str("DJANGO_SECRET_KEY")
if not SECRET_KEY:
    raise ImproperlyConfigured(
        "DJANGO_SECRET_KEY is not set. Set it to a long random string "
        "(`make run` creates one under var/ for local use)."
    )
if len(SECRET_KEY) < 32 and not DEBUG:
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is too short: use at least 32 characters.")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

# --- The runtime's host home: the store and the activity-frame files -------
AGENTS_HOST_HOME = env_path("AGENTS_HOST_HOME") or VAR_DIR / "demo-home"
STORE_PATH = env_path("SESSIONS_ADMIN_STORE") or AGENTS_HOST_HOME / "data" / "agents" / "store.db"
FRAMES_DIR = env_path("SESSIONS_ADMIN_FRAMES_DIR") or AGENTS_HOST_HOME / "sessions"
READ_ONLY = env_bool("SESSIONS_ADMIN_READ_ONLY", False)
# Secrets and personal data are masked where they are shown (sessions_admin.masking):
# built-in detectors, less those named in SESSIONS_ADMIN_MASK_OFF, plus the JSON object
# of name -> regular expression in SESSIONS_ADMIN_MASK_RULES; a bad one stops the start.
MASKING = env_bool("SESSIONS_ADMIN_MASKING", True)
MASK_RULES = env_mask_rules("SESSIONS_ADMIN_MASK_OFF", "SESSIONS_ADMIN_MASK_RULES")
# The runtime writes while we read: wait this long for its locks before giving up.
# The name this dashboard's store goes by in Django's own database: every row of
# ours that names a session (notes, labels, review items, the audit, jobs) names
# its store too, so dashboards over several stores can share one PostgreSQL.
# Unset: host and store file ("host:/path/store.db"), as the data folder recorded
# it (sessions_admin.ourdata.storename). Set it when a store's file may move.
STORE_NAME = env_str("SESSIONS_ADMIN_STORE_NAME", "")[:100] or None
# The fleet (docs/fleet.md): this host publishes its sessions to the shared database
# after each sync pass, and its own dashboard answers at PUBLIC_URL (the fleet's pages
# link there). A host whose last pass is older than FLEET_STALE_S is marked stale.
FLEET_PUBLISH = env_bool("SESSIONS_ADMIN_FLEET", False)
PUBLIC_URL = env_str("SESSIONS_ADMIN_PUBLIC_URL", "").rstrip("/")
FLEET_STALE_S = env_int("SESSIONS_ADMIN_FLEET_STALE_S", 300, minimum=1)
# Sessions written per transaction of the shared database when publishing.
FLEET_PUBLISH_CHUNK = env_int("SESSIONS_ADMIN_FLEET_CHUNK", 2000, minimum=1)
# The data folder belongs to one store; pointed at another, pages and deletes
# refuse until `manage.py adopt_store` (tests of other subjects turn it off).
STORE_IDENTITY_CHECK = True
STORE_BUSY_TIMEOUT_MS = env_int("SESSIONS_ADMIN_BUSY_TIMEOUT_MS", 5000, minimum=0)
# Every list/search query the dashboard runs is interrupted after this long.
STORE_QUERY_TIME_LIMIT_MS = env_int("SESSIONS_ADMIN_QUERY_TIME_LIMIT_MS", 3000, minimum=50)
TRACE_URL_TEMPLATE = env_url_template("SESSIONS_ADMIN_TRACE_URL", "{trace_id}")
# "Resume in Director Chat": {session_id}, {target_key}, {profile_key}, percent-encoded.
RESUME_URL_TEMPLATE = env_url_template("SESSIONS_ADMIN_RESUME_URL", "{session_id}")
SLOW_TOOL_CALL_MS = env_int("SESSIONS_ADMIN_SLOW_CALL_MS", 2000, minimum=1)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "axes",
    "sessions_admin",
]

MIDDLEWARE = [
    "sessions_admin.logs.RequestLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "sessions_admin.staticstorage.StaticFilesMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "sessions_admin.middleware.StoreErrorMiddleware",
    "sessions_admin.middleware.BadParameterMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into our page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "sessions_admin.urls"
WSGI_APPLICATION = "sessions_admin.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.csp",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "sessions_admin.context_processors.store",
            ],
            "builtins": ["django_htmx.templatetags.django_htmx"],
        },
    }
]

# --- Django's own database: SQLite in the data folder, or PostgreSQL -------
# DJANGO_DATABASE_URL (postgres://user:password@host:port/name) lets several
# dashboard instances share users, permissions, logins and the audit log.
# The store below is the runtime's SQLite file whatever this says.
DJANGO_DATABASE = env_database_url("DJANGO_DATABASE_URL") or {
    "ENGINE": "django.db.backends.sqlite3",
    "NAME": env_path("SESSIONS_ADMIN_DJANGO_DB") or VAR_DIR / "django.sqlite3",
    # Kept a minute between requests, as for PostgreSQL (env_database_url): opening
    # it and running the pragmas below cost every request otherwise.
    "CONN_MAX_AGE": 60,
    "CONN_HEALTH_CHECKS": True,
}
if DJANGO_DATABASE["ENGINE"].endswith("sqlite3") and Path(DJANGO_DATABASE["NAME"]).parent.is_dir():
    # SQLite would create the file 0644 (the umask's default); an empty file is
    # a valid database, so it starts 0600 here, and SQLite gives its -journal
    # and -wal files the database file's mode.
    Path(DJANGO_DATABASE["NAME"]).touch(mode=0o600, exist_ok=True)
if DJANGO_DATABASE["ENGINE"].endswith("sqlite3"):
    # Every claim, verdict and note is a commit. In SQLite's default rollback
    # journal each commit waits for several fsyncs (10-40 ms on a busy disk,
    # most of a review "next"); in WAL with synchronous=NORMAL a commit waits
    # for none (a power cut may lose the last commits, never corrupt the file)
    # and pages read while another worker writes. IMMEDIATE: an atomic block
    # takes the write lock when it starts, so two workers' blocks queue on the
    # busy timeout instead of one failing "database is locked" mid-way.
    DJANGO_DATABASE.setdefault("OPTIONS", {}).update(
        {
            "init_command": "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;",
            "transaction_mode": "IMMEDIATE",
        }
    )

DATABASES = {
    "default": DJANGO_DATABASE,
    "agents": {
        # A thin wrapper over Django's SQLite backend: opens the file with a
        # mode=ro|rw URI (never creating it), sets the busy timeout, and installs
        # an authorizer that refuses any DDL or any write but the session deletes.
        "ENGINE": "sessions_admin.store.backend",
        "NAME": str(STORE_PATH),
        "OPTIONS": {
            "read_only": READ_ONLY,
            "timeout": STORE_BUSY_TIMEOUT_MS / 1000,
            "transaction_mode": "IMMEDIATE",
        },
        "TEST": {"MIGRATE": False},
    },
}
DATABASE_ROUTERS = ["sessions_admin.store.router.StoreRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "sessions"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
# ISO dates in the admin as on our pages (sessions_admin/formats/en/formats.py).
FORMAT_MODULE_PATH = ["sessions_admin.formats"]
TIME_ZONE = env_str("SESSIONS_ADMIN_TIME_ZONE", "UTC")
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "sessions_admin.staticstorage.StaticStorage"},
}
# Serve straight from the finders when static files were not collected (dev, tests).
WHITENOISE_USE_FINDERS = True

# --- Security: nothing from the store may ever run in the browser ----------
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF, CSP.NONCE],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "object-src": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "frame-ancestors": [CSP.NONE],
    "form-action": [CSP.SELF],
}
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SESSION_COOKIE_HTTPONLY = True
# Served over HTTPS (usually behind a proxy that sets X-Forwarded-Proto):
# secure cookies by default, and HSTS / redirects when asked for.
BEHIND_TLS_PROXY = env_bool("DJANGO_BEHIND_TLS_PROXY", False)
if BEHIND_TLS_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", BEHIND_TLS_PROXY)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_AGE = env_int("DJANGO_SESSION_COOKIE_AGE", 12 * 3600, minimum=60)
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("DJANGO_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
# `check --deploy` warns about each of these while it is off. An operator who
# sets the variable to 0 has made that choice (the proxy redirects or sends
# HSTS itself, other subdomains are not HTTPS yet, no preload list): say so
# once, and the warning goes. Left unset, it stays, to be decided.
_DEPLOY_CHOICES = {
    "DJANGO_SSL_REDIRECT": ("security.W008", SECURE_SSL_REDIRECT),
    "DJANGO_HSTS_SECONDS": ("security.W004", SECURE_HSTS_SECONDS),
    "DJANGO_HSTS_INCLUDE_SUBDOMAINS": ("security.W005", SECURE_HSTS_INCLUDE_SUBDOMAINS),
    "DJANGO_HSTS_PRELOAD": ("security.W021", SECURE_HSTS_PRELOAD),
}
SILENCED_SYSTEM_CHECKS = [
    check for name, (check, value) in _DEPLOY_CHOICES.items() if env_is_set(name) and not value
]
# /healthz is probed over plain HTTP by load balancers.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# --- Login throttling (django-axes) ----------------------------------------
# After DJANGO_LOGIN_FAILURE_LIMIT wrong passwords for one username from one
# address, that pair is locked out for the cool-off, on /login/ and
# /admin/login/ alike; each try while locked out restarts the cool-off.
# Staff with "Can delete access attempt" unlock from the admin (Access
# attempts); `manage.py axes_reset_username NAME` from a shell.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("DJANGO_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("DJANGO_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "sessions_admin.views.lockout.locked_out"
# Behind N proxies, the client is the Nth address from the right of X-Forwarded-For.
CLIENT_IP_PROXY_COUNT = env_int("DJANGO_PROXY_COUNT", 0, minimum=0)
AXES_CLIENT_IP_CALLABLE = "sessions_admin.views.lockout.client_address"

# --- Logs: one JSON object per line, or readable text ----------------------
# JSON by default (gunicorn, a log shipper); DJANGO_LOG_FORMAT=text for a
# terminal (`make run` sets it). See sessions_admin/logs.py for the fields.
LOG_FORMAT = env_choice("DJANGO_LOG_FORMAT", ("json", "text"), "json")
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_id": {"()": "sessions_admin.logs.RequestIdFilter"}},
    "formatters": {
        "json": {"()": "sessions_admin.logs.JsonFormatter"},
        "text": {"()": "sessions_admin.logs.TextFormatter"},
    },
    "handlers": {
        "console": {
            "class": "logging.StreamHandler",
            "formatter": LOG_FORMAT,
            "filters": ["request_id"],
        }
    },
    "root": {"handlers": ["console"], "level": env_str("DJANGO_LOG_LEVEL", "INFO")},
    "loggers": {
        # Our request line covers every request: Django's own 4xx warnings and
        # runserver's access lines would only repeat it. 5xx tracebacks stay.
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        # axes warns of each failure and lockout; its INFO lines (every good
        # login, every clean-up) are noise.
        "axes": {"level": "WARNING"},
    },
}
