# Two commands: `make run` serves the app with demo data, `make test` runs the whole suite.
#   make run                 http://127.0.0.1:8000/admin/ (the login is printed just before the server starts)
#   make test PYTEST_ARGS="-k billing -x"
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
DEMO ?= 300
PRESET ?= mineola
# The suite runs in one process more than the machine has cores (pytest-xdist): a good part of it waits on a
# browser, a live server or a Celery worker, and the extra process keeps the cores busy meanwhile (on 2 cores,
# 3 processes: 6 min 18 s against 7 min 5 s for 2). An idle process takes tests queued for a busy one
# (worksteal); the tests marked `long` start first (tests/conftest.py). Each process has its own test database (on
# PostgreSQL copied from one migrated per run) and, with REDIS_URL, its own Celery worker. The 25 slowest are listed.
# PYTEST_ARGS replaces this: make test PYTEST_ARGS="tests/billing -x" runs serially.
TEST_PROCESSES ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_ARGS ?= -n $(TEST_PROCESSES) --dist worksteal --durations=25

.PHONY: run test install install-dev lint clean bench screens

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed
	$(PY) -m pip install -q -e '.[dev]'
	touch $@

install: $(VENV)/.installed
install-dev: $(VENV)/.installed-dev

# demo_bootstrap adds the preset and $(DEMO) demo accounts only to a database without accounts, bills
# them, and prints a fresh admin password every time. The settings are production unless asked otherwise:
# the demo asks for development mode (debug pages, a development SECRET_KEY, plain HTTP).
run: export DJANGO_DEBUG := 1
# The demo's e-mails (bills to paperless accounts, sign-ups, receipts) are written to sent-mail/, one file each,
# rather than printed over the server's log.
run: export EMAIL_BACKEND ?= django.core.mail.backends.filebased.EmailBackend
run: export EMAIL_FILE_PATH ?= $(CURDIR)/sent-mail
# Test payments: the app's own checkout page stands in for the processor and a made-up bank key and bank for the
# bank's, so the demo pays online, enrols in autopay and makes the debit file; every page says no money moves.
run: export TEST_PAYMENTS ?= 1
run: install
	$(PY) manage.py migrate --noinput
	$(PY) manage.py demo_bootstrap --preset $(PRESET) --demo $(DEMO)
	$(PY) manage.py runserver 127.0.0.1:8000

test: install-dev
	$(PY) -m pytest $(PYTEST_ARGS)

# Every speed figure against its target (scripts/bench.py); empties and refills the bench database.
#   make bench BENCH_ARGS="--accounts 2000 --json bench-results.json"
bench: export DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/wb_bench
bench: install-dev
	$(PY) scripts/bench.py all $(BENCH_ARGS)

# The pictures of the reworked screens the clerk's guide shows (docs/screens/), taken by their browser tests.
screens: export SCREENS_DIR := $(CURDIR)/docs/screens
screens: install-dev
	$(PY) -m pytest -q -p no:cacheprovider tests/waterbilling/test_office_screens_browser.py \
		tests/waterbilling/test_account_inquiry_browser.py tests/waterbilling/test_role_days_browser.py

lint: install-dev
	$(VENV)/bin/ruff check .

clean:
	rm -rf $(VENV) db.sqlite3 media staticfiles sent-mail
