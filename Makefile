.DEFAULT_GOAL := help
PY := .venv/bin/python

help: ## Show this help
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-10s %s\n", $$1, $$2}'

install: ## Install Debian + Python packages, offline NLP data, translations
	bash scripts/bootstrap.sh install

run: ## Install, then serve on http://127.0.0.1:5000 (embedded worker)
	bash scripts/bootstrap.sh run

test: ## Install, then lint and run the full test suite
	bash scripts/bootstrap.sh test

lint: ## ruff check + format check, import contracts, type check
	.venv/bin/ruff check . && .venv/bin/ruff format --check .
	bash scripts/check_layout_owned.sh
	.venv/bin/lint-imports
	.venv/bin/mypy

test-fast: ## Units, contracts and doctests: no servers, no browser (about a minute)
	$(PY) -m pytest -q -n 2 -m "not integration"

check: lint ## Lint, then the full test suite (needs Redis and PostgreSQL for some tests)
	$(PY) -m pytest

messages: ## Extract user-facing strings and update the zh/ko catalogs
	$(PY) scripts/update_catalogs.py

format: ## Apply ruff fixes and formatting
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

worker: ## Run a Celery worker against REDIS_URL
	.venv/bin/celery -A app:celery_app worker --loglevel=INFO

reference: ## Regenerate the frozen aggregates (after adding a suite or changing a metric on purpose)
	$(PY) -m tests.aggregate_rows

durations: ## Record each test module's time for the workers' order (testing/schedule.py; an idle machine)
	$(PY) -m pytest -q -n 6 --dist worksteal --record-durations testing/durations.json

settings: ## Regenerate docs/configuration.md from config.DEFAULTS and docs/settings.toml
	$(PY) scripts/config_reference.py

bench: ## Run the benchmarks and write bench/results.json
	$(PY) -m bench

lock: ## Regenerate the hashed locks requirements*.txt from pyproject.toml
	bash scripts/lock.sh

.PHONY: help install run test test-fast lint check messages format worker reference durations settings bench lock
