"""``GET /metrics`` (web/views/prometheus.py): Prometheus text whose counters move
when a run is evaluated; JSON logs behind LOG_FORMAT (core/logs.py)."""

from __future__ import annotations

import json
import logging

from prometheus_client.parser import text_string_to_metric_families

from tests.web.views.test_api import sample_bytes, upload, wait_final


def scrape(client) -> dict[tuple[str, tuple], float]:
    response = client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=")
    return {
        (sample.name, tuple(sorted(sample.labels.items()))): sample.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for sample in family.samples
    }


def test_counters_move_after_a_judged_run(app_factory, judge_server):
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    client = app.test_client()
    before = scrape(client)
    assert before[("personasteer_runs", (("status", "done"),))] == 0
    assert before[("personasteer_judge_calls_total", ())] == 0
    token = upload(client, sample_bytes(), suites="alignment").get_json()["token"]
    calls = wait_final(client, token)["results"]["run"]["counts"]["judge_calls"]
    after = scrape(client)
    assert calls > 0
    assert after[("personasteer_runs", (("status", "done"),))] == 1
    assert after[("personasteer_judge_calls_total", ())] == calls
    latency = ("personasteer_judge_call_seconds_count", ())
    assert after[latency] - before.get(latency, 0) >= calls  # retries add calls
    assert after[("personasteer_chunks", (("state", "pending"),))] == 0
    # the same file with two samples: the first sample's verdicts are cached
    token = upload(client, sample_bytes(), suites="alignment", samples="2")
    wait_final(client, token.get_json()["token"])
    again = scrape(client)
    assert again[("personasteer_judge_cache_hits_total", ())] == calls
    assert again[("personasteer_runs", (("status", "done"),))] == 2
    # deleting runs never makes a counter go down (Prometheus reads a restart)
    manage = app.extensions["storage"].runs.find_run(token.get_json()["manage_token"])
    assert client.delete(f"/api/v1/runs/{manage.item.manage_token}").status_code == 204
    gone = scrape(client)
    assert gone[("personasteer_runs", (("status", "done"),))] == 1
    for counter in (
        "judge_calls_total",
        "judge_cache_hits_total",
        "judge_prompt_tokens_total",
        "judge_completion_tokens_total",
    ):
        name = (f"personasteer_{counter}", ())
        assert gone[name] == again[name], counter


def test_metrics_name_no_run_token_or_url(app_factory, judge_server):
    app = app_factory(JUDGE_API_URL=judge_server.url, JUDGE_MODEL="scripted")
    client = app.test_client()
    created = upload(client, sample_bytes(), suites="quality").get_json()
    wait_final(client, created["token"])
    text = client.get("/metrics").get_data(as_text=True)
    assert created["token"] not in text and created["manage_token"] not in text
    assert judge_server.url not in text and "127.0.0.1" not in text


def test_server_errors_are_counted(app_factory):
    app = app_factory()
    app.config["PROPAGATE_EXCEPTIONS"] = False  # as in production, not testing

    @app.get("/boom")
    def boom():
        raise RuntimeError("boom")

    client = app.test_client()
    key = ("personasteer_http_server_errors_total", ())
    before = scrape(client)[key]
    assert client.get("/boom").status_code == 500
    assert scrape(client)[key] == before + 1


def test_json_logs_behind_the_setting(app_factory, capfd):
    app_factory(LOG_FORMAT="json")
    logging.getLogger("pipeline.service.runs").warning("run %s is late", "r1")
    line = capfd.readouterr().err.strip().splitlines()[-1]
    record = json.loads(line)
    assert record["message"] == "run r1 is late" and record["levelname"] == "WARNING"
    app_factory(LOG_FORMAT="text")  # the handler goes again
    assert not [h for h in logging.getLogger().handlers if hasattr(h, "_personasteer")]
