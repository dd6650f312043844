# sessions-admin: `make run` to try it on a demo store, `make test` for the whole suite.
SHELL := /bin/bash
VENV ?= .venv
HOST_HOME ?= $(if $(AGENTS_HOST_HOME),$(AGENTS_HOST_HOME),var/demo-home)
DEMO_SESSIONS ?= 2000
PORT ?= 8000
PY := $(VENV)/bin/python
ENV := DJANGO_SECRET_KEY="$${DJANGO_SECRET_KEY:-$$(cat var/secret_key)}" AGENTS_HOST_HOME="$(abspath $(HOST_HOME))"
MANAGE := $(ENV) $(PY) manage.py

.PHONY: run serve fleet-demo setup setup-dev venv venv-dev demo migrate staff test test-fast browser-deps lint bench screens clean

# Both serve at once: scripts/serve-with-sync runs `sync_index --follow` beside the
# server (the first build in the background, the pages say how far it is) and
# stops it when the server stops (Ctrl-C included).
run: setup demo migrate staff ## Set up, then serve the dashboard on 127.0.0.1:$(PORT) while the index builds
	$(MANAGE) collectstatic --noinput --verbosity 0 --skip-checks
	$(MANAGE) check
	@echo "Python: $$($(PY) -c 'import sys; print(sys.version.split()[0], "at", sys.executable)') (set PYTHON= before the first run to choose)"
	@echo "Serving on http://127.0.0.1:$(PORT)/  (store: $(HOST_HOME)/data/agents/store.db; PORT=8001 make run serves on another port); the side index syncs in the background"
	DJANGO_LOG_FORMAT=$${DJANGO_LOG_FORMAT:-text} $(ENV) scripts/serve-with-sync $(PY) \
	  $(PY) manage.py runserver 127.0.0.1:$(PORT) --skip-checks

serve: setup demo migrate staff ## The same, served as in production: gunicorn from gunicorn.conf.py, JSON logs
	$(MANAGE) collectstatic --noinput --verbosity 0 --skip-checks
	$(MANAGE) check
	@echo "Serving with gunicorn on http://127.0.0.1:$(PORT)/  (store: $(HOST_HOME)/data/agents/store.db); the side index syncs in the background"
	$(ENV) scripts/serve-with-sync $(PY) \
	  $(VENV)/bin/gunicorn -c gunicorn.conf.py --bind 127.0.0.1:$(PORT)

fleet-demo: setup ## Three demo hosts sharing one database: the fleet at http://127.0.0.1:8001/fleet/
	$(ENV) scripts/fleet-demo $(PY) $${FLEET_PORT:-8001}

setup: venv var/secret_key
setup-dev: venv-dev var/secret_key

# Two stamps: .installed says requirements.txt (what production runs) is in
# the venv, .installed-dev that requirements-dev.txt (tests, lint, benchmarks)
# is too. `make run` needs only the first; `make test` after it still
# installs the dev set, and a dev install counts as the production one.
venv: $(VENV)/.installed
venv-dev: $(VENV)/.installed-dev

$(VENV)/.installed: requirements.txt
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements.txt
	@touch $@

$(VENV)/.installed-dev: requirements.txt requirements-dev.txt
	@test -x $(PY) || "$$(scripts/find-python)" -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	@touch $@ $(VENV)/.installed

var/secret_key:
	@mkdir -p -m 700 var
	@umask 077 && $(PY) -c "import secrets; print(secrets.token_urlsafe(50))" > $@

demo: setup ## A demo host home under var/ (only if AGENTS_HOST_HOME is not set and none exists)
	@if [ -z "$(AGENTS_HOST_HOME)" ] && [ ! -f "$(HOST_HOME)/data/agents/store.db" ]; then \
	  $(MANAGE) make_demo_store "$(HOST_HOME)" --sessions $(DEMO_SESSIONS) --seed 7; \
	fi

migrate: setup ## Django's own tables only (the default database); never the store
	$(MANAGE) migrate --noinput --skip-checks --verbosity 0

staff: migrate ## Make sure a local staff account exists and say how to log in
	$(MANAGE) ensure_staff --skip-checks

browser-deps: ## Debian's Chromium for the browser tests (nothing downloads a browser)
	@if ! command -v chromium >/dev/null 2>&1; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else \
	    echo "The browser tests need Debian's Chromium: sudo apt-get install chromium"; exit 1; \
	  fi; \
	fi

test: setup-dev browser-deps ## The whole suite: on two cores, then the browser tests one at a time
	$(PY) -m pytest -n 2 -m "not browser"
	$(PY) -m pytest -m browser

test-fast: setup-dev ## The inner loop on two cores: everything but the browser tests and the slow ones (the crawl, the fuzzer)
	$(PY) -m pytest -n 2 -m "not browser and not slow"

lint: setup-dev ## ruff, then the import contracts in pyproject.toml (import-linter)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports --no-cache

bench: setup-dev ## Benchmarks on a generated 500k-session store (takes a while)
	$(PY) bench/run.py

screens: setup-dev browser-deps ## docs/screens/: every screen at 1440 and 390 px, on a fresh demo store in a temp dir
	$(PY) scripts/screens.py $(SCREENS)

clean:
	rm -rf $(VENV) var/staticfiles .pytest_cache
