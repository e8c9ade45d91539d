"""Configuration: defaults plus strict parsing of the environment.

This is the only module that reads ``os.environ``. Everything else receives a
plain dict (``app.config``), so tests pass overrides instead of patching the
environment. A malformed variable stops start-up with a message naming it,
rather than surfacing later as a confusing failure inside a worker.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent


class ConfigError(ValueError):
    """An environment variable holds a value we cannot use."""


def _int(name: str, raw: str, minimum: int) -> int:
    return _number(int, "an integer", name, raw, minimum)


def _float(name: str, raw: str, minimum: float) -> float:
    return _number(float, "a number", name, raw, minimum)


def _number(kind, word: str, name: str, raw: str, minimum):
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be {word}, got {raw!r}") from None
    if value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value


def _temperature(name: str, raw: str) -> float:
    value = _float(name, raw, 0.0)
    if value > 2.0:  # the OpenAI API's range; a run would fail on every call
        raise ConfigError(f"{name} must be at most 2, got {value}")
    return value


def _prices(name: str, raw: str) -> dict:
    from core.usage import parse_prices

    try:
        return parse_prices(raw)
    except (ValueError, TypeError, KeyError) as exc:
        raise ConfigError(
            f"{name} must be model=input/output entries (USD per million tokens), "
            f"each optionally with cached=P batch=I/O batch_cached=P, or their "
            f"JSON, got {raw!r} ({exc})"
        ) from None


def _port(name: str, raw: str) -> int:
    """A TCP port.

    >>> _port("PORT", "8080")
    8080
    >>> _port("PORT", "70000")
    Traceback (most recent call last):
    config.ConfigError: PORT must be a port from 1 to 65535, got 70000
    """
    port = _int(name, raw, 1)
    if port > 65535:
        raise ConfigError(f"{name} must be a port from 1 to 65535, got {port}")
    return port


def port(environ: Mapping[str, str] | None = None) -> int:
    """The port the app serves on (``PORT``), for the set-up script's check
    that it is free before anything is installed (scripts/check_port.py)."""
    raw = (os.environ if environ is None else environ).get("PORT", "").strip()
    return _port("PORT", raw) if raw else DEFAULTS["PORT"]


def _url(name: str, raw: str, schemes: tuple[str, ...]) -> str:
    if not raw.startswith(schemes):
        raise ConfigError(f"{name} must start with one of {schemes}, got {raw!r}")
    return raw.rstrip("/")


def _rate_limit(name: str, raw: str) -> str:
    """A Flask-Limiter rate: "30 per hour", or several joined by ";".

    >>> _rate_limit("RATE_LIMIT_UPLOADS", "10 per minute; 30 per hour")
    '10 per minute; 30 per hour'
    >>> _rate_limit("RATE_LIMIT_UPLOADS", "thirty an hour")
    Traceback (most recent call last):
    ...
    config.ConfigError: RATE_LIMIT_UPLOADS must be a rate such as '30 per hour' ...
    """
    # The parser Flask-Limiter itself uses, so what passes here is what it applies.
    from limits import parse_many

    try:
        rates = parse_many(raw)
    except ValueError:
        rates = []
    if not rates or any(rate.amount < 1 for rate in rates):
        raise ConfigError(
            f"{name} must be a rate such as '30 per hour' (several joined by"
            f" ';'), got {raw!r}"
        )
    return raw.strip()


def _choice(name: str, raw: str, choices: tuple[str, ...]) -> str:
    """One of ``choices`` (case-insensitive).

    >>> _choice("LOG_FORMAT", "JSON", ("text", "json"))
    'json'
    """
    lowered = raw.strip().lower()
    if lowered not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {raw!r}")
    return lowered


def _embedded_worker(name: str, raw: str) -> str:
    """``process`` or ``none``. The forked worker (a command forked its
    worker instead of spawning it) was removed in issue 60: a setting that
    asks for it stops the start with what to set instead.

    >>> _embedded_worker("EMBEDDED_WORKER", "fork")
    Traceback (most recent call last):
    ...
    config.ConfigError: EMBEDDED_WORKER=fork: the forked worker was removed; set EMBEDDED_WORKER=process (the app spawns its worker process) or none
    """
    if raw.strip().lower() in ("fork", "forked"):
        raise ConfigError(
            f"{name}={raw.strip()}: the forked worker was removed; set "
            f"{name}=process (the app spawns its worker process) or none"
        )
    return _choice(name, raw, ("process", "none"))


def _bool(name: str, raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off", ""}:
        return False
    raise ConfigError(f"{name} must be true or false, got {raw!r}")


# Every default of the product, in one place. Paths are added by ``defaults``.
DEFAULTS: dict = {
    "SECRET_KEY": None,  # filled from instance/secret_key when absent
    "REDIS_URL": None,
    "JUDGE_API_URL": None,
    "JUDGE_API_KEY": None,
    "JUDGE_MODEL": None,
    "JUDGE_CONCURRENCY": 8,  # per worker process and judge (endpoint + model)
    "JUDGE_TIMEOUT_S": 60.0,
    "JUDGE_MAX_RETRIES": 4,
    "JUDGE_CONNECT_TIMEOUT_S": 5.0,
    # A whole call (connect, headers, body) ends by this deadline, however
    # slowly the server drips bytes (JUDGE_TIMEOUT_S bounds one read only).
    "JUDGE_DEADLINE_S": 180.0,
    # A reply body is read up to this many bytes; a longer one is unscored
    # (reply_too_large) and never stored whole.
    "JUDGE_MAX_REPLY_BYTES": 262_144,
    "JUDGE_TEMPERATURE": 0.0,  # part of every cache key: change it, re-judge
    "JUDGE_MAX_TOKENS": 1024,
    # A reply cut off by max_tokens is asked once more with this many.
    "JUDGE_MAX_TOKENS_RETRY": 4096,
    # model -> {"input", "output"}: USD per million tokens (core/usage.py).
    "JUDGE_PRICES": {},
    "JUDGE_BACKOFF_CAP_S": 20.0,  # longest wait between retries without Retry-After
    # A judge endpoint's limits per minute where it sends no x-ratelimit-*
    # headers (its headers win): requests go out paced under them.
    "JUDGE_RPM": None,
    "JUDGE_TPM": None,
    # Batch mode (the Files and Batches endpoints): a batch file holds at
    # most this many requests and bytes (OpenAI's limits), and a batch is
    # asked about after the first wait, each wait growing by half up to the
    # longest (so one ready in seconds is read within seconds).
    "JUDGE_BATCH_MAX_REQUESTS": 50_000,
    "JUDGE_BATCH_MAX_MB": 200,
    "JUDGE_BATCH_FIRST_POLL_S": 1.0,
    "JUDGE_BATCH_MAX_POLL_S": 300.0,
    # A batch's output or error file is downloaded up to this size; a larger
    # one is not read, and the batch part fails with the reason (its requests
    # go online). 50,000 answers of a few KB each are far below it.
    "JUDGE_BATCH_OUTPUT_MAX_MB": 1024,
    "MAX_UPLOAD_MB": 200,
    # Files the upload page checked, kept for the run they may become
    # (pipeline/service/kept_uploads.py): a client keeps its newest few, and all of
    # them together at most this much; over it the file is sent with the run.
    "KEPT_UPLOADS_MB": 1024,
    "KEPT_UPLOADS_PER_CLIENT": 2,
    # /readyz reports not ready below this much free space where uploads
    # and the SQLite database live (an upload then gets 507 disk_full)
    "MIN_FREE_MB": 100,
    "MAX_LINE_MB": 8,
    "MAX_VALIDATION_ERRORS": 200,
    "MAX_SAMPLES": 15,  # judge samples per item a request may ask for
    # Judge calls one run may make: its estimate (items x modes x samples x
    # judges; cached verdicts counted too) over it is a 400, and every
    # request (re-asks and transport retries too) takes one before it goes
    # out, shared with the run's retries: a run stops at it (budget_exhausted).
    "MAX_JUDGE_CALLS_PER_RUN": 200_000,
    # Judge calls the runs of one workspace may reserve per day (UTC), all
    # together; unset: no daily cap. Checked like the run's cap: before a
    # run (its estimate over what is left today is a 400), before each call
    # (workspace_budget_exhausted) and on retries.
    "WORKSPACE_DAILY_JUDGE_CALLS": None,
    # Characters of one judge request's messages; a longer prompt is never sent.
    "MAX_PROMPT_CHARS_PER_CALL": 200_000,
    # What one upload may ask of the server (dataset/limits.py); their product
    # bounds the units of a run: 100,000 x 200 x 32 < 2**31 (an INTEGER).
    "MAX_SESSIONS": 100_000,
    "MAX_ROUNDS_PER_SESSION": 200,
    "MAX_METHODS": 32,
    "MAX_TEXT_CHARS": 32_000,  # per profile, message or response
    "MAX_SLOT_TOPICS": 100,
    # Judge prompts carry at most this much dialogue history; older turns go first.
    "JUDGE_HISTORY_CHARS": 12_000,
    # Method pairs compared with paired tests; beyond, each method vs the first.
    "MAX_COMPARED_METHODS": 12,
    # Runs one comparison across runs may hold (GET /api/v1/compare).
    "MAX_COMPARED_RUNS": 8,
    # Result rows a comparison may read, all its runs together: the work one
    # request does is bounded (over it, a 400 naming both figures).
    "MAX_COMPARED_ROWS": 2_000_000,
    # A comparison is computed on a worker and stored; a request waits this
    # long for it before answering "computing" (202), so a web thread is
    # never held longer. One still computing after COMPARE_STALE_S is asked
    # for again (its worker died).
    "COMPARE_WAIT_S": 0.8,
    "COMPARE_STALE_S": 300,
    # Judge models the web and the API may choose; unset: JUDGE_MODEL alone.
    "JUDGE_MODELS": None,
    # Team deployments: comma-separated keys; a state-changing API request
    # that is not from the app's own pages must carry one (Authorization:
    # Bearer <key>). Empty: the API is open, as on a laptop.
    "API_KEYS": [],
    # Fair scheduling (pipeline/dispatch.py): chunks in the queue or on a
    # worker at once, per run and per client (all of one client's runs).
    # 8 fills two workers of 4 task threads: at 4, one run at c = 64 was
    # 1.55x ideal against 1.37x at 8 (bench/judge_orchestration.py).
    "RUN_INFLIGHT_CHUNKS": 8,
    "CLIENT_INFLIGHT_CHUNKS": 16,
    # The watchdog (pipeline/worker/watchdog.py), the one recovery path: a chunk
    # whose lease is void goes back for another claim, up to
    # MAX_CHUNK_ATTEMPTS claims. A lease is void when it was not renewed for
    # CHUNK_STALL_S (its worker's watchdog renews it three times a lease, so
    # only a killed or stopped worker's expires; 60 s: a killed worker's
    # chunks wait about a minute, and a judge call it had under way is not
    # paid twice: store/call_claims.py), when its holder is a process of
    # this host that ended, or when a chunk sent waited QUEUE_TIMEOUT_S for
    # a worker (then a copy of its task is sent: harmless, the first copy to
    # come claims it; this also recovers a Redis that lost its data).
    "WATCHDOG_INTERVAL_S": 30.0,
    # Provisional results while a run is evaluated: the rows stored so far
    # are aggregated at most this often, the first time this long after the run
    # started (pipeline/worker/interim.py).
    "INTERIM_EVERY_S": 15.0,
    "CHUNK_STALL_S": 60.0,
    # A running run that moved for RUN_STALL_S (no unit done, no judge call
    # counted, no row stored) is marked stalled with its cause on its page
    # and status, and its chunks are handed out again (pipeline/stalls.py).
    "RUN_STALL_S": 600.0,
    "QUEUE_TIMEOUT_S": 300.0,
    "MAX_CHUNK_ATTEMPTS": 3,
    # Abuse limits per client address (web/security/limits.py), in Flask-Limiter's
    # notation; an upload is a run started from the page or the API.
    "RATE_LIMITS_ENABLED": True,
    "RATE_LIMIT_UPLOADS": "30 per hour",
    "RATE_LIMIT_VALIDATIONS": "120 per hour",  # the upload page's dry-run check
    # POST /api/v1/convert running at once across every web process of the
    # instance (web/security/shared_slots.py): each holds a CPU for up to a minute
    # on a 200 MB file; one more is refused with 503 and Retry-After.
    "CONVERT_SLOTS": 2,
    "RATE_LIMIT_RETRIES": "20 per hour",
    "RATE_LIMIT_WORKSPACES": "60 per hour",  # POST /api/v1/workspaces
    # comparisons read every row of their runs: the one read that is counted
    "RATE_LIMIT_COMPARISONS": "300 per hour",
    # word diffs and searches of one run (each reads the upload)
    "RATE_LIMIT_EXPLORE": "600 per hour",
    # annotation queues: labels saved and items served (a label is one click)
    "RATE_LIMIT_LABELS": "1200 per hour",
    # "Test judge" on the upload page: each check is a few paid judge calls
    "RATE_LIMIT_JUDGE_CHECKS": "20 per hour",
    # Reverse proxies in front of the app that append X-Forwarded-For: the
    # client address (rate limits, fair scheduling) is taken that many hops
    # back. 0 trusts no header, else any client could pick its own address.
    "TRUSTED_PROXIES": 0,
    "FORCE_HTTPS": False,
    # Base of the absolute links in API replies, e.g. https://bench.example.org;
    # unset: relative links (never taken from the request's Host header).
    "PUBLIC_URL": None,
    # The port `python app.py` (and so `bash scripts/bootstrap.sh run`) serves
    # on, at 127.0.0.1; gunicorn and `flask run` take their own.
    "PORT": 5000,
    # Redis redelivers a task whose worker died once this has passed;
    # keep it above the longest chunk.
    "CELERY_VISIBILITY_TIMEOUT_S": 3600,
    # A chunk holds a task thread while it waits on its judge, so a slow
    # judge's runs could hold every thread: with more threads than one
    # client may have chunks in flight (CLIENT_INFLIGHT_CHUNKS), another
    # client's run always finds one (bench/slow_judge_drill.py). Waiting
    # threads cost no CPU.
    "EMBEDDED_WORKER_THREADS": 20,
    # Embedded mode (no REDIS_URL): "process" runs the Celery worker as a child
    # process the app starts and supervises (pipeline/worker/worker_process.py);
    # "none" starts none: run `celery -A app:celery_app worker` yourself on
    # this machine (the tests run one in their own process).
    "EMBEDDED_WORKER": "process",
    # Work per Celery task, in (session, round, method) units.
    "CHUNK_UNITS": 160,
    # Upgrade the schema at start-up; default: only for SQLite (the embedded
    # default). A shared PostgreSQL is upgraded with `flask db upgrade`.
    "DB_AUTO_UPGRADE": None,
    # "json": one JSON object per log line (log shippers); "text": for people.
    "LOG_FORMAT": "text",
    # The plotly.js pages load: "charts", the set-up's build of only the trace
    # types drawn (web/views/assets.py), else the wheel's full one; "full".
    "PLOTLY_BUNDLE": "charts",
    # prometheus_client's own variable: the processes of one host (gunicorn
    # workers, local Celery workers) share their counters through files there.
    "PROMETHEUS_MULTIPROC_DIR": None,
}


# The configurable rates, each applied by web/security/limits.py to its endpoints.
RATE_LIMITS = (
    "RATE_LIMIT_UPLOADS",
    "RATE_LIMIT_VALIDATIONS",
    "RATE_LIMIT_RETRIES",
    "RATE_LIMIT_WORKSPACES",
    "RATE_LIMIT_COMPARISONS",
    "RATE_LIMIT_EXPLORE",
    "RATE_LIMIT_LABELS",
    "RATE_LIMIT_JUDGE_CHECKS",
)


def defaults(instance_path: Path) -> dict:
    """Settings for the embedded default: no Redis, SQLite, no judge."""
    return {
        **DEFAULTS,
        "DATABASE_URL": f"sqlite:///{instance_path / 'personasteer.sqlite3'}",
        "UPLOAD_FOLDER": str(PROJECT_ROOT / "uploads"),
        "RESULTS_FOLDER": str(PROJECT_ROOT / "results"),
        "NLTK_DATA": str(PROJECT_ROOT / "nltk_data"),
        # embedded mode's broker: one file per queued task (local_broker.py);
        # None: a folder of the instance named after the database (load())
        "QUEUE_FOLDER": None,
    }


# name -> parser(name, raw) for every variable we accept from the environment.
_PARSERS = {
    "SECRET_KEY": lambda n, v: v,
    "DATABASE_URL": lambda n, v: _url(n, v, ("sqlite:", "postgresql")),
    "REDIS_URL": lambda n, v: _url(n, v, ("redis://", "rediss://")),
    "JUDGE_API_URL": lambda n, v: _url(n, v, ("http://", "https://")),
    "JUDGE_API_KEY": lambda n, v: v,
    "JUDGE_MODEL": lambda n, v: v,
    "JUDGE_CONCURRENCY": lambda n, v: _int(n, v, 1),
    "JUDGE_TIMEOUT_S": lambda n, v: _float(n, v, 0.1),
    "JUDGE_CONNECT_TIMEOUT_S": lambda n, v: _float(n, v, 0.1),
    "JUDGE_BACKOFF_CAP_S": lambda n, v: _float(n, v, 0),
    "JUDGE_RPM": lambda n, v: _int(n, v, 1),
    "JUDGE_BATCH_MAX_REQUESTS": lambda n, v: _int(n, v, 1),
    "JUDGE_BATCH_MAX_MB": lambda n, v: _float(n, v, 0.001),
    "JUDGE_BATCH_FIRST_POLL_S": lambda n, v: _float(n, v, 0.05),
    "JUDGE_BATCH_MAX_POLL_S": lambda n, v: _float(n, v, 0.05),
    "JUDGE_BATCH_OUTPUT_MAX_MB": lambda n, v: _float(n, v, 0.001),
    "JUDGE_TPM": lambda n, v: _int(n, v, 1),
    "JUDGE_TEMPERATURE": _temperature,
    "JUDGE_DEADLINE_S": lambda n, v: _float(n, v, 0.1),
    "JUDGE_MAX_REPLY_BYTES": lambda n, v: _int(n, v, 1024),
    "JUDGE_MAX_RETRIES": lambda n, v: _int(n, v, 0),
    "MAX_UPLOAD_MB": lambda n, v: _int(n, v, 1),
    "KEPT_UPLOADS_MB": lambda n, v: _float(n, v, 0),
    "KEPT_UPLOADS_PER_CLIENT": lambda n, v: _int(n, v, 1),
    "MIN_FREE_MB": lambda n, v: _int(n, v, 0),
    "MAX_LINE_MB": lambda n, v: _int(n, v, 1),
    "MAX_SAMPLES": lambda n, v: _int(n, v, 1),
    "MAX_JUDGE_CALLS_PER_RUN": lambda n, v: _int(n, v, 1),
    "WORKSPACE_DAILY_JUDGE_CALLS": lambda n, v: _int(n, v, 1),
    "MAX_PROMPT_CHARS_PER_CALL": lambda n, v: _int(n, v, 1000),
    "LOG_FORMAT": lambda n, v: _choice(n, v, ("text", "json")),
    "PLOTLY_BUNDLE": lambda n, v: _choice(n, v, ("charts", "full")),
    "EMBEDDED_WORKER": _embedded_worker,
    "PROMETHEUS_MULTIPROC_DIR": lambda n, v: v,
    "MAX_SESSIONS": lambda n, v: _int(n, v, 1),
    "MAX_ROUNDS_PER_SESSION": lambda n, v: _int(n, v, 1),
    "MAX_METHODS": lambda n, v: _int(n, v, 1),
    "MAX_TEXT_CHARS": lambda n, v: _int(n, v, 1),
    "MAX_SLOT_TOPICS": lambda n, v: _int(n, v, 1),
    "MAX_VALIDATION_ERRORS": lambda n, v: _int(n, v, 1),
    "EMBEDDED_WORKER_THREADS": lambda n, v: _int(n, v, 1),
    "JUDGE_HISTORY_CHARS": lambda n, v: _int(n, v, 0),
    "MAX_COMPARED_METHODS": lambda n, v: _int(n, v, 2),
    "MAX_COMPARED_RUNS": lambda n, v: _int(n, v, 2),
    "MAX_COMPARED_ROWS": lambda n, v: _int(n, v, 1),
    "COMPARE_WAIT_S": lambda n, v: _float(n, v, 0),
    "COMPARE_STALE_S": lambda n, v: _int(n, v, 1),
    "JUDGE_MODELS": lambda n, v: [m.strip() for m in v.split(",") if m.strip()],
    "API_KEYS": lambda n, v: [k.strip() for k in v.split(",") if k.strip()],
    "JUDGE_PRICES": _prices,
    "JUDGE_MAX_TOKENS": lambda n, v: _int(n, v, 16),
    "JUDGE_MAX_TOKENS_RETRY": lambda n, v: _int(n, v, 16),
    "RUN_INFLIGHT_CHUNKS": lambda n, v: _int(n, v, 1),
    "CLIENT_INFLIGHT_CHUNKS": lambda n, v: _int(n, v, 1),
    "WATCHDOG_INTERVAL_S": lambda n, v: _float(n, v, 0.1),
    "INTERIM_EVERY_S": lambda n, v: _float(n, v, 0),
    "CHUNK_STALL_S": lambda n, v: _float(n, v, 1.0),
    "RUN_STALL_S": lambda n, v: _float(n, v, 1.0),
    "QUEUE_TIMEOUT_S": lambda n, v: _float(n, v, 1.0),
    "MAX_CHUNK_ATTEMPTS": lambda n, v: _int(n, v, 1),
    "CONVERT_SLOTS": lambda n, v: _int(n, v, 1),
    "RATE_LIMITS_ENABLED": _bool,
    "RATE_LIMIT_UPLOADS": _rate_limit,
    "RATE_LIMIT_VALIDATIONS": _rate_limit,
    "RATE_LIMIT_RETRIES": _rate_limit,
    "RATE_LIMIT_WORKSPACES": _rate_limit,
    "RATE_LIMIT_COMPARISONS": _rate_limit,
    "RATE_LIMIT_EXPLORE": _rate_limit,
    "RATE_LIMIT_LABELS": _rate_limit,
    "RATE_LIMIT_JUDGE_CHECKS": _rate_limit,
    "TRUSTED_PROXIES": lambda n, v: _int(n, v, 0),
    "FORCE_HTTPS": _bool,
    "PUBLIC_URL": lambda n, v: _url(n, v, ("http://", "https://")),
    "PORT": lambda n, v: _port(n, v),
    "DB_AUTO_UPGRADE": _bool,
    "CELERY_VISIBILITY_TIMEOUT_S": lambda n, v: _int(n, v, 1),
    "CHUNK_UNITS": lambda n, v: _int(n, v, 1),
    "UPLOAD_FOLDER": lambda n, v: v,
    "RESULTS_FOLDER": lambda n, v: v,
    "NLTK_DATA": lambda n, v: v,
    "QUEUE_FOLDER": lambda n, v: v,
}


def from_environ(environ: Mapping[str, str] | None = None) -> dict:
    """Parse the recognised variables that are set and non-empty."""
    environ = os.environ if environ is None else environ
    parsed = {}
    for name, parse in _PARSERS.items():
        raw = environ.get(name, "").strip()
        if raw:
            parsed[name] = parse(name, raw)
    return parsed


def normalize_database_url(url: str) -> str:
    """Route ``postgresql://`` URLs to the psycopg 3 driver we ship.

    >>> normalize_database_url("postgresql://u@h/db")
    'postgresql+psycopg://u@h/db'
    >>> normalize_database_url("sqlite:///x.db")
    'sqlite:///x.db'
    """
    if url.startswith("postgresql://"):
        return "postgresql+psycopg://" + url.removeprefix("postgresql://")
    return url


def load(instance_path: Path, overrides: dict | None = None) -> dict:
    """Defaults, then the environment, then explicit overrides (tests, CLI)."""
    settings = defaults(instance_path)
    settings.update(from_environ())
    settings.update(overrides or {})
    settings["DATABASE_URL"] = normalize_database_url(settings["DATABASE_URL"])
    if settings["JUDGE_MODELS"] is None:
        settings["JUDGE_MODELS"] = (
            [settings["JUDGE_MODEL"]] if settings["JUDGE_MODEL"] else []
        )
    if settings["QUEUE_FOLDER"] is None:
        settings["QUEUE_FOLDER"] = str(queue_folder(instance_path, settings))
    if settings["DB_AUTO_UPGRADE"] is None:
        settings["DB_AUTO_UPGRADE"] = settings["DATABASE_URL"].startswith("sqlite")
    settings["MAX_CONTENT_LENGTH"] = settings["MAX_UPLOAD_MB"] * 1024 * 1024
    units = (
        settings["MAX_SESSIONS"]
        * settings["MAX_ROUNDS_PER_SESSION"]
        * settings["MAX_METHODS"]
    )
    if units >= 2**31:
        raise ConfigError(
            "MAX_SESSIONS x MAX_ROUNDS_PER_SESSION x MAX_METHODS must stay below "
            f"2**31 (a run's unit count is a 32-bit integer), got {units}"
        )
    for name in RATE_LIMITS:  # overrides bypass the parsers: check them too
        settings[name] = _rate_limit(name, str(settings[name]))
    if not settings["SECRET_KEY"]:
        settings["SECRET_KEY"] = _instance_secret(instance_path)
    return settings


def queue_folder(instance_path: Path, settings: dict) -> Path:
    """The embedded queue (and its worker's lock, beside it) of the
    instance's database: ``instance/queue``; another database in the same
    checkout gets its own (``queue-<hash>``), so its runs are served by a
    worker of its own instead of waiting forever on another database's."""
    if settings["DATABASE_URL"] == defaults(instance_path)["DATABASE_URL"]:
        return instance_path / "queue"
    digest = hashlib.sha256(settings["DATABASE_URL"].encode()).hexdigest()[:12]
    return instance_path / f"queue-{digest}"


def judge_configured(settings: dict) -> bool:
    return bool(settings.get("JUDGE_API_URL") and settings.get("JUDGE_MODEL"))


def _instance_secret(instance_path: Path) -> str:
    """A per-install secret kept under instance/, so sessions survive restarts."""
    path = instance_path / "secret_key"
    if path.exists():
        return path.read_text().strip()
    instance_path.mkdir(parents=True, exist_ok=True)
    key = secrets.token_hex(32)
    path.write_text(key)
    path.chmod(0o600)
    return key
