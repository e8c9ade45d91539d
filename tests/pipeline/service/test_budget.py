"""The judge budget (pipeline/service/budget.py): the estimate before a run starts,
and the refusal over MAX_JUDGE_CALLS_PER_RUN through the API and the page; a
run's own estimate and ceiling (``pipeline/service/run_budget.py``)."""

from __future__ import annotations

import io

import pytest
from sqlalchemy import func, select

from store.models import Run
from tests.web.views.test_api import sample_bytes, upload
from tests.web.views.test_pages import post_run

PANEL = ["scripted", "scripted+10"]


@pytest.fixture
def judged(app_factory, judge_server):
    def make(limit: int = 200_000):
        app = app_factory(
            JUDGE_API_URL=judge_server.url,
            JUDGE_MODEL="scripted",
            JUDGE_MODELS=PANEL,
            MAX_JUDGE_CALLS_PER_RUN=limit,
        )
        return app, app.test_client()

    return make


def validate(client, **fields) -> dict:
    body = {"file": (io.BytesIO(sample_bytes()), "s.jsonl"), **fields}
    response = client.post("/api/v1/validate", data=body)
    assert response.status_code == 200, response.get_json()
    return response.get_json()


def runs_stored(app) -> int:
    with app.extensions["storage"].engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(Run)).scalar_one()


def test_validate_estimates_items_x_modes_x_samples_x_judges(judged):
    _, client = judged()
    one = validate(client, suites="alignment")
    per_sample = one["estimate"]["alignment"]["judge_calls"]
    spend = one["judge_calls"].pop("judges")
    assert one["judge_calls"] == {"estimate": per_sample, "limit": 200_000}
    [judge] = spend.values()  # what it would spend, per judge
    chars = one["estimate"]["alignment"]["prompt_chars"]
    assert judge["calls"] == per_sample and judge["prompt_tokens"] == chars // 4
    assert judge["completion_tokens_max"] == per_sample * 1024
    assert judge["cost_usd_max"] is None  # no price set
    both = validate(
        client, suites="alignment", samples="3", judge_model=",".join(PANEL)
    )
    assert both["judge_calls"]["estimate"] == per_sample * 3 * 2
    quality = validate(client, suites="quality")  # asks no judge
    assert quality["judge_calls"]["estimate"] == 0


def test_without_a_judge_nothing_counts_against_the_budget(app_factory):
    client = app_factory(MAX_JUDGE_CALLS_PER_RUN=1).test_client()
    assert validate(client)["judge_calls"]["estimate"] == 0
    assert upload(client, sample_bytes()).status_code == 202


def test_api_refuses_a_run_over_the_budget_naming_both_figures(judged):
    app, client = judged(limit=20)
    estimate = validate(client, suites="alignment")["judge_calls"]["estimate"]
    assert estimate > 20
    response = upload(client, sample_bytes(), suites="alignment")
    assert response.status_code == 400
    (error,) = response.get_json()["errors"]
    assert error["code"] == "over_judge_budget"
    assert error["params"]["estimate"] == estimate and error["params"]["limit"] == 20
    assert f"{estimate} judge calls" in error["message"] and "20" in error["message"]
    assert runs_stored(app) == 0  # nothing recorded, nothing queued
    assert upload(client, sample_bytes(), suites="quality").status_code == 202


def test_the_refusal_is_translated(judged):
    _, client = judged(limit=20)
    answer = upload(client, sample_bytes(), suites="alignment")
    english = answer.get_json()["errors"][0]["message"]
    body = {"file": (io.BytesIO(sample_bytes()), "s.jsonl"), "suites": "alignment"}
    chinese = client.post("/api/v1/runs?lang=zh", data=body).get_json()["errors"][0]
    assert chinese["message"] != english and "20" in chinese["message"]
    assert "judge calls" not in chinese["message"]


def test_the_upload_page_refuses_with_the_message_and_shows_the_limit(judged):
    app, client = judged(limit=20)
    page = client.get("/").get_data(as_text=True)
    assert 'data-judge-limit="20"' in page and "over_budget" in page
    response = post_run(client, sample_bytes(), suites="alignment")
    assert response.status_code == 400
    text = response.get_data(as_text=True)
    assert "judge calls; the limit is 20 per run" in text
    assert runs_stored(app) == 0


# -- the cap is a ceiling during the run and on retries ---------------------------
def garbage_sessions() -> list[dict]:
    """Every reply unparseable: each item asks twice (the re-ask)."""
    from tests import crafted

    sessions = crafted.alignment_sessions()
    for session in sessions:
        for round_ in session["rounds"]:
            round_["responses"] = {
                m: f"{text} [[fault=garbage]]"
                for m, text in round_["responses"].items()
            }
    return sessions


def test_a_run_stops_at_exactly_its_call_cap_and_retries_cannot_pass_it(
    app_factory, judge_server, tmp_path
):
    from tests import crafted
    from tests.web.views.test_api import wait_final

    limit = 50  # the estimate is 40 (20 items x 2 modes); re-asks would make 80
    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        MAX_JUDGE_CALLS_PER_RUN=limit,
    )
    client = app.test_client()
    data = crafted.write(tmp_path / "g.jsonl", garbage_sessions()).read_bytes()
    before = judge_server.state.calls
    created = upload(client, data, suites="alignment").get_json()
    final = wait_final(client, created["token"])
    assert final["status"] == "failed"  # no reply read (issue 56)
    assert judge_server.state.calls - before == limit
    notes = {r["note_code"] for r in final["results"]["rows"] if r["status"] == "error"}
    assert notes == {"budget_exhausted"}
    retried = client.post(f"/api/v1/runs/{created['manage_token']}/retry")
    assert retried.status_code == 409, retried.get_json()
    assert "share them" in retried.get_json()["errors"][0]["message"]
    assert judge_server.state.calls - before == limit


def test_a_prompt_over_the_cap_is_never_sent(app_factory, judge_server, tmp_path):
    from tests import crafted
    from tests.web.views.test_api import wait_final

    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        MAX_PROMPT_CHARS_PER_CALL=8000,
    )
    client = app.test_client()
    sessions = crafted.alignment_sessions()
    sessions[0]["user_profile"] = "x" * 9000
    data = crafted.write(tmp_path / "p.jsonl", sessions).read_bytes()
    created = upload(client, data, suites="alignment").get_json()
    final = wait_final(client, created["token"])
    rows = final["results"]["rows"]
    too_large = [r for r in rows if r["note_code"] == "prompt_too_large"]
    assert too_large and {r["session_id"] for r in too_large} == {"a"}
    assert judge_server.state.max_prompt_chars <= 8000


def test_a_workspace_stops_at_its_daily_cap_across_runs(
    app_factory, judge_server, tmp_path
):
    from tests import crafted
    from tests.store.test_workspaces import upload as upload_into
    from tests.web.views.test_api import wait_final

    daily = 60  # each run's estimate is 40; unparseable replies ask twice
    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        WORKSPACE_DAILY_JUDGE_CALLS=daily,
    )
    client = app.test_client()
    space = client.post("/api/v1/workspaces", json={"name": "lab"}).get_json()
    data = crafted.write(tmp_path / "g.jsonl", garbage_sessions()).read_bytes()
    before = judge_server.state.calls
    first = upload_into(
        client, data, suites="alignment", workspace=space["manage_token"]
    ).get_json()
    final = wait_final(client, first["token"])
    assert final["status"] == "failed"  # no reply read (issue 56)
    assert judge_server.state.calls - before == daily
    notes = {r["note_code"] for r in final["results"]["rows"] if r["status"] == "error"}
    assert notes == {"workspace_budget_exhausted"}
    # nothing left today: a new run of the workspace and a retry are refused
    second = upload_into(
        client, data, suites="alignment", workspace=space["manage_token"]
    )
    assert second.status_code == 409
    assert second.get_json()["errors"][0]["code"] == "daily_budget_used"
    retried = client.post(f"/api/v1/runs/{first['manage_token']}/retry")
    assert retried.status_code == 409
    assert judge_server.state.calls - before == daily
    # a run outside the workspace is not counted against it
    other = upload(client, data, suites="alignment").get_json()
    assert wait_final(client, other["token"])["status"] == "failed"
    assert judge_server.state.calls - before == daily + 80


def test_daily_reservations_share_one_count_and_give_back_what_was_unused(
    any_storage,
):
    from core.caps import DAILY_CAP, Daily
    from tests.store.test_workspaces import RUN_FIELDS

    storage = any_storage
    a, b = (storage.runs.create_run(**RUN_FIELDS, upload_id="u") for _ in range(2))
    day = Daily("ws", "2026-11-26", cap=100)
    assert storage.budget.reserve_calls(a.id, 1000, 64, day) == (64, 36, None)
    assert storage.budget.reserve_calls(b.id, 1000, 64, day) == (
        1,
        35,
        None,
    )  # one fits
    storage.budget.release_calls(a.id, 60, day)
    assert storage.budget.workspace_calls(day) == 5
    assert storage.budget.reserve_calls(b.id, 1000, 95, day) == (95, 0, None)
    assert storage.budget.reserve_calls(a.id, 1000, 64, day) == (0, 0, DAILY_CAP)
    with storage.engine.connect() as conn:
        reserved = dict(conn.execute(select(Run.id, Run.calls_reserved)).all())
    assert reserved == {a.id: 4, b.id: 96}  # a refused block is not kept by the run
    assert storage.budget.workspace_calls(Daily("ws", "2026-11-27", cap=100)) == 0


def test_the_estimate_before_a_run_is_within_ten_percent_of_its_cost(
    app_factory, judge_server, tmp_path
):
    """The expected cost: prompt tokens from the prompt characters, the
    completion tokens per call and the cached share of the workspace's
    earlier runs of the judge; against a run on the scripted judge that
    reports usage (and its prompt cache) like OpenAI."""
    from testing import datagen
    from tests.store.test_workspaces import upload as upload_into
    from tests.web.views.test_api import wait_final

    price = {"input": 2.5, "output": 10.0, "cached_input": 1.25}
    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        JUDGE_PRICES={"scripted": price},
    )
    client = app.test_client()
    space = client.post("/api/v1/workspaces", json={"name": "lab"}).get_json()
    files = [
        datagen.write_file(
            tmp_path / f"{seed}.jsonl", 30_000, 16, seed=seed
        ).read_bytes()
        for seed in (1, 2)
    ]
    fields = {"suites": "alignment", "workspace": space["manage_token"]}

    def estimate(data: bytes) -> dict:
        body = {"file": (io.BytesIO(data), "s.jsonl"), **fields}
        found = client.post("/api/v1/validate", data=body).get_json()
        return found["judge_calls"]["judges"]["scripted"]

    assert estimate(files[0])["cost_note"] == "no_earlier_run"  # nothing to go on
    first = upload_into(client, files[0], **fields).get_json()
    assert wait_final(client, first["token"])["status"] == "done"
    said = estimate(files[1])
    second = upload_into(client, files[1], **fields).get_json()
    final = wait_final(client, second["token"])
    used = final["results"]["judge_usage"]["scripted"]
    # 16 rounds: a method's later prompts share more than 1,024 tokens with
    # its earlier ones (static-first: rubric, profile, history, then reply)
    assert used["cached_tokens"] > 0 and used["cost_usd"] > 0
    assert said["earlier_runs"] == 1 and said["calls"] == used["calls"]
    assert abs(said["cost_usd"] - used["cost_usd"]) <= 0.10 * used["cost_usd"]


# -- the estimate is of the run's protocol ------------------------------------------
@pytest.mark.parametrize("protocol", ["aloe", "mt-bench", "personasteer"])
def test_the_estimate_counts_the_modes_the_runs_protocol_asks(
    judged, judge_server, tmp_path, protocol
):
    """ALOE and MT-Bench ask no binary verdict: one request per item, not
    two. The calls shown before the run and checked against the limit are
    the calls the run makes (none re-asked), and the prompt characters are
    within 5% of what the judge was sent."""
    import json

    from tests.web.views.test_api import wait_final

    app, client = judged()
    fields = {"suites": "alignment", "protocol": protocol}
    checked = validate(client, **fields)
    said = checked["judge_calls"]["estimate"]
    chars = checked["estimate"]["alignment"]["prompt_chars"]
    before = judge_server.state.calls
    with (tmp_path / "bodies").open("wb") as bodies:
        judge_server.state.record_to = bodies
        try:
            created = upload(client, sample_bytes(), **fields).get_json()
            final = wait_final(client, created["token"])
        finally:
            judge_server.state.record_to = None
    assert final["status"] == "done"
    assert final["results"]["run"]["judge"]["protocol"]["name"] == protocol
    used = final["results"]["judge_usage"]["scripted"]
    assert used["reasks"] == 0
    assert said == judge_server.state.calls - before == used["calls"]
    requests = (tmp_path / "bodies").read_bytes().splitlines()
    sent = [m for body in requests for m in json.loads(body)["messages"]]
    sent_chars = sum(len(message["content"]) for message in sent)
    assert abs(chars - sent_chars) <= 0.05 * sent_chars
    # the limit is checked against the same figure
    app.config["MAX_JUDGE_CALLS_PER_RUN"] = said - 1
    refused = upload(client, sample_bytes(), **fields)
    assert refused.status_code == 400
    assert refused.get_json()["errors"][0]["params"]["estimate"] == said


# -- the expected cost reads earlier runs of the same protocol, sent the same way ----
BATCH_PRICE = {
    "input": 2.5,
    "output": 10.0,
    "cached_input": 1.25,
    "batch_input": 1.25,
    "batch_output": 5.0,
    "batch_cached_input": 0.625,
}


@pytest.fixture
def priced_workspace(app_factory, judge_server, tmp_path):
    """An app with online and batch prices, a workspace, and files of 16
    rounds (a method's later prompts share their first 1,024 tokens: the
    scripted judge serves them from its prompt cache, as OpenAI does)."""
    from testing import datagen
    from tests.store.test_workspaces import upload as upload_into
    from tests.web.views.test_api import wait_final

    app = app_factory(
        JUDGE_API_URL=judge_server.url,
        JUDGE_MODEL="scripted",
        JUDGE_PRICES={"scripted": BATCH_PRICE},
        JUDGE_BATCH_FIRST_POLL_S=0.2,
    )
    client = app.test_client()
    space = client.post("/api/v1/workspaces", json={"name": "lab"}).get_json()
    files = [
        datagen.write_file(tmp_path / f"{seed}.jsonl", 30_000, 16, seed=seed)
        for seed in (1, 2, 3)
    ]
    base = {"suites": "alignment", "workspace": space["manage_token"]}

    def said(data: bytes, **fields) -> dict:
        body = {"file": (io.BytesIO(data), "s.jsonl"), **base, **fields}
        found = client.post("/api/v1/validate", data=body).get_json()
        return found["judge_calls"]["judges"]["scripted"]

    def run(data: bytes, **fields) -> dict:
        created = upload_into(client, data, **base, **fields).get_json()
        final = wait_final(client, created["token"])
        assert final["status"] == "done"
        return final["results"]["judge_usage"]["scripted"]

    return [path.read_bytes() for path in files], said, run


def test_the_expected_cost_ignores_earlier_runs_of_another_protocol(priced_workspace):
    files, said, run = priced_workspace
    run(files[0], protocol="aloe")
    other = said(files[1])  # the default protocol: two modes, other prompts
    assert other["earlier_runs"] == 0 and other["cost_note"] == "no_earlier_run"
    assert other["cost_usd"] is None and other["batch_cost_usd"] is None
    same = said(files[1], protocol="aloe")
    assert same["earlier_runs"] == 1 and same["cost_usd"] is not None


def test_a_batch_forecast_counts_no_cache_savings_until_a_batch_run_measured_them(
    priced_workspace,
):
    """An online run's prompt-cache share says nothing of a batch's: with no
    earlier batch run the batch forecast counts none (an upper bound); after
    one, the share its batch files got."""
    from core import usage

    files, said, run = priced_workspace
    online = run(files[0])
    assert online["cached_share"] > 0.3  # the online cache served a good part
    first = said(files[1], batch="1")
    assert first["earlier_runs"] == 1 and first["cached_runs"] == 1
    assert first["cached_share"] == pytest.approx(online["cached_share"])
    assert first["batch_runs"] == 0 and first["batch_cached_share"] == 0
    tokens = ("prompt_tokens", "completion_tokens")
    uncached = {name: first[name] for name in tokens}
    assert first["batch_cost_usd"] == usage.batch_cost(uncached, BATCH_PRICE)
    batched = run(files[1], batch="1")
    assert batched["batch_calls"] == batched["calls"]
    second = said(files[2], batch="1")
    assert second["batch_runs"] == 1 and second["cached_runs"] == 1
    share = batched["batch_cached_tokens"] / batched["batch_prompt_tokens"]
    assert second["batch_cached_share"] == pytest.approx(share)
    assert second["cached_share"] == pytest.approx(online["cached_share"])
