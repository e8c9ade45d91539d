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

lint: ## ruff check + format check
	.venv/bin/ruff check . && .venv/bin/ruff format --check .

format: ## Apply ruff fixes and formatting
	.venv/bin/ruff check --fix . && .venv/bin/ruff format .

worker: ## Run a Celery worker against REDIS_URL
	.venv/bin/celery -A app:celery_app worker --loglevel=INFO

bench: ## Run the benchmarks and write bench/results.json
	$(PY) -m bench

.PHONY: help install run test lint format worker bench
