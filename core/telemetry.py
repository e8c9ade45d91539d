"""The Prometheus instruments a process records into (``GET /metrics``
exposes them with the figures read from the database, web/views/prometheus.py).

Only what happens inside one process is counted here: judge call latency
and failures (in the process that calls the judge), finalize requests (in
the worker that got them) and server errors (in the process that serves
pages). Figures every process shares (runs by
status, judge calls, cache hits, queued chunks) are read from the database
at scrape time instead, so they are right whichever process did the work.

With ``PROMETHEUS_MULTIPROC_DIR`` set (gunicorn.conf.py sets it), the
processes of one host write these to files there and ``/metrics`` sums them.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram

JUDGE_SECONDS = Histogram(
    "personasteer_judge_call_seconds",
    "Latency of one judge HTTP call (each retry is a call).",
    buckets=(0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120),
)
JUDGE_FAILURES = Counter(
    "personasteer_judge_failures",
    "Judge calls that failed (network, HTTP status, malformed reply).",
    ["reason"],
)
HTTP_ERRORS = Counter(
    "personasteer_http_server_errors",
    "Requests answered with a 5xx status.",
)
FINALIZE_REQUESTS = Counter(
    "personasteer_finalize_requests",
    "Requests to finalize a run, by outcome: aggregated (this worker took the"
    " run's claim and aggregated it), claimed (another holds the claim), ended"
    " (the run had already ended). Each run is aggregated once.",
    ["outcome"],
)
