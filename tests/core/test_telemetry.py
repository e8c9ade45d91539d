"""The process's own Prometheus instruments (core/telemetry.py) under the
names ``GET /metrics`` exposes, moving when recorded."""

from prometheus_client import REGISTRY, generate_latest

from core.telemetry import FINALIZE_REQUESTS, HTTP_ERRORS, JUDGE_FAILURES, JUDGE_SECONDS


def sample(name, **labels):
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_the_instruments_are_exported_under_their_names():
    text = generate_latest(REGISTRY).decode()
    for name in (
        "personasteer_judge_call_seconds histogram",
        "personasteer_judge_failures_total counter",
        "personasteer_http_server_errors_total counter",
        "personasteer_finalize_requests_total counter",
    ):
        assert f"# TYPE {name}" in text


def test_recording_moves_the_counters_by_label():
    failures = sample("personasteer_judge_failures_total", reason="timeout")
    finalized = sample("personasteer_finalize_requests_total", outcome="claimed")
    errors = sample("personasteer_http_server_errors_total")
    calls = sample("personasteer_judge_call_seconds_count")
    JUDGE_FAILURES.labels(reason="timeout").inc()
    FINALIZE_REQUESTS.labels(outcome="claimed").inc()
    HTTP_ERRORS.inc()
    JUDGE_SECONDS.observe(0.3)
    assert sample("personasteer_judge_failures_total", reason="timeout") == failures + 1
    assert (
        sample("personasteer_finalize_requests_total", outcome="claimed")
        == finalized + 1
    )
    assert sample("personasteer_http_server_errors_total") == errors + 1
    assert sample("personasteer_judge_call_seconds_count") == calls + 1
    assert sample("personasteer_judge_call_seconds_bucket", le="0.5") >= 1
