"""What real judges do beyond the verdict, end to end over HTTP: token usage
and cost per judge model, structured output honoured or refused, replies cut
off by max_tokens, and the one re-ask that quotes the format."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest

from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate

PRICE = {"input": 2.5, "output": 10.0}


@pytest.fixture
def server():
    with ScriptedJudge() as judge:
        yield judge


def run_with(app_factory, server, tmp_path, model, sessions=None, **config):
    app = app_factory(
        JUDGE_API_URL=server.url, JUDGE_MODEL=model, **FAST_JUDGE, **config
    )
    path = crafted.write(
        tmp_path / f"{model}.jsonl", sessions or crafted.alignment_sessions()
    )
    return evaluate(app, path, None, suites=["alignment"])


def scripted_totals(document) -> dict:
    """The totals ``crafted.alignment_sessions`` scripts, by row key."""
    found = {}
    for session in crafted.alignment_sessions():
        for turn in session["rounds"]:
            for method, text in turn["responses"].items():
                total = float(re.search(r"\[\[al=(\d+)\]\]", text).group(1))
                found[(session["session_id"], turn["round"], method)] = total
    return found


def rows(document, metric="al"):
    return [row for row in document["rows"] if row["metric"] == metric]


def test_judge_usage_equals_what_the_server_reported_and_cost_is_tokens_times_price(
    app_factory, server, tmp_path
):
    model = "scripted-reasoning"
    document = run_with(
        app_factory, server, tmp_path, model, JUDGE_PRICES={model: PRICE}
    )
    assert document["run"]["status"] == "done"
    used = document["judge_usage"][model]
    reported = server.state.reported.by_model[model]
    for field in ("calls", "prompt_tokens", "completion_tokens", "reasoning_tokens"):
        assert used[field] == reported[field], field
    assert used["reasoning_tokens"] > 0 and used["cached"] == 0
    expected = (
        Decimal("2.5") * used["prompt_tokens"] + Decimal(10) * used["completion_tokens"]
    ) / 1_000_000
    assert used["cost_usd"] == float(expected)
    counts = document["run"]["counts"]
    assert counts["judge_calls"] == used["calls"]
    assert counts["prompt_tokens"] == used["prompt_tokens"]


def test_calls_count_every_request_sent_retries_included(app_factory, server, tmp_path):
    """A 500 retried is a request the provider served and the budget
    counted: judge_usage.calls was 157 where the judge received 234."""
    faulty = [
        crafted.session(
            "f",
            {
                "A": [
                    "x [[al=50]] [[binary=1]] [[fault=500x2]]",
                    "y [[al=60]] [[binary=0]]",
                ]
            },
        )
    ]
    document = run_with(app_factory, server, tmp_path, "scripted", sessions=faulty)
    assert document["run"]["status"] == "done"
    assert document["judge_usage"]["scripted"]["calls"] == server.state.calls
    assert server.state.calls == 4 + 2 * 2  # 4 items, two of them retried twice


def test_without_a_price_cost_is_null_and_a_rerun_counts_cached_verdicts(
    app_factory, server, tmp_path
):
    app = app_factory(JUDGE_API_URL=server.url, JUDGE_MODEL="scripted", **FAST_JUDGE)
    path = crafted.write(tmp_path / "f.jsonl", crafted.alignment_sessions())
    first = evaluate(app, path, None, suites=["alignment"])
    assert first["judge_usage"]["scripted"]["cost_usd"] is None
    again = evaluate(app, path, None, suites=["alignment"], use_cache=True)
    used = again["judge_usage"].get("scripted", {})
    assert used.get("calls", 0) == 0 or again["run"]["reused"]


def test_requests_sent_and_verdicts_from_the_cache_are_said_apart(
    app_factory, server, tmp_path, monkeypatch
):
    """Issue 56: "294 calls, 294 from the cache" read as every call cached,
    and a run served from the cache showed a bare "0" in its workspace.
    ``calls`` are requests sent (paid); ``cached`` verdicts were taken from
    the cache without one (docs/results-format.md)."""
    from pipeline.service import reuse

    app = app_factory(
        JUDGE_API_URL=server.url,
        JUDGE_MODEL="scripted",
        JUDGE_PRICES={"scripted": PRICE},
        **FAST_JUDGE,
    )
    space = app.extensions["storage"].workspaces.create_workspace("lab")
    path = crafted.write(tmp_path / "f.jsonl", crafted.alignment_sessions())
    first = evaluate(app, path, None, suites=["alignment"], workspace_id=space.id)
    monkeypatch.setattr(reuse, "code_fingerprint", lambda: "another release")
    again = evaluate(app, path, None, suites=["alignment"], workspace_id=space.id)
    assert again["run"]["reused"] is False
    assert again["judge_usage"]["scripted"]["calls"] == 0
    assert again["judge_usage"]["scripted"]["cached"] == 40 == server.state.calls

    client, runs = app.test_client(), app.extensions["storage"].runs
    first_run, again_run = (runs.get_run(doc["run"]["id"]) for doc in (first, again))
    page = client.get(f"/r/{first_run.token}?lang=en").get_data(as_text=True)
    assert (
        'data-testid="judge-requests">40 requests sent · 0 verdicts from the '
        "cache (no request, no cost)<"
    ) in page
    page = client.get(f"/r/{again_run.token}?lang=en").get_data(as_text=True)
    assert (
        'data-testid="judge-requests">0 requests sent · 40 verdicts from the '
        "cache (no request, no cost)<"
    ) in page
    spent = page.split('data-testid="judge-spent-1">')[1].split("·")[:2]
    assert "0 requests sent" in spent[0] and "40 verdicts from the cache" in spent[1]
    assert (
        "The judge scripted was sent no request: all 40 verdicts were taken "
        "from the cache."
    ) in page
    assert " calls" not in page.split('class="facts"')[1].split("</dl>")[0]
    listed = client.get(f"/w/{space.token}?lang=en").get_data(as_text=True)
    cells = re.findall(r'data-testid="run-spent">(.*?)</td>', listed, re.S)
    newest, oldest = (" ".join(re.sub(r"<[^>]+>", " ", cell).split()) for cell in cells)
    assert newest.startswith(
        "served from the cache 40 verdicts from the cache · 0 requests sent"
    )
    assert oldest.startswith("40 requests sent")


@pytest.mark.parametrize(
    ("model", "output"),
    [
        ("scripted-json-ok", "json_schema"),
        ("scripted-json-reject", "text"),
        ("scripted", "ignored"),
    ],
)
def test_structured_output_honoured_refused_or_ignored_gives_a_complete_run(
    app_factory, server, tmp_path, model, output
):
    document = run_with(app_factory, server, tmp_path, model)
    assert document["run"]["status"] == "done"
    assert {row["status"] for row in rows(document)} == {"ok"}
    assert scripted_totals(document) == {
        (r["session_id"], r["round"], r["method"]): r["value"] for r in rows(document)
    }  # the verdicts the server decided, whatever the wire format
    assert document["judge_usage"][model]["output"] == output


def test_a_refused_response_format_is_asked_for_once_per_chunk_at_most(
    app_factory, server, tmp_path
):
    model = "scripted-json-reject"
    document = run_with(app_factory, server, tmp_path, model)
    used = document["judge_usage"][model]
    assert 1 <= used["calls"] - server.state.calls <= 4  # the 400s, one per chunk


def test_a_reply_cut_by_max_tokens_is_asked_again_with_more_tokens(
    app_factory, server, tmp_path
):
    sessions = [
        crafted.session("cut", {"Ours": ["[[al=64]] [[binary=1]] [[fault=truncate]]"]})
    ]
    document = run_with(app_factory, server, tmp_path, "scripted", sessions)
    [al] = rows(document)
    assert (al["status"], al["value"]) == ("ok", 64.0)
    assert document["judge_usage"]["scripted"]["reasks"] == 2  # al and binary


def test_a_reply_still_cut_stays_unscored_with_note_truncated(
    app_factory, server, tmp_path
):
    sessions = [crafted.session("cut", {"Ours": ["[[al=64]] [[fault=truncate]]"]})]
    document = run_with(
        app_factory, server, tmp_path, "scripted", sessions, JUDGE_MAX_TOKENS_RETRY=1024
    )
    [al] = rows(document)
    assert (al["status"], al["value"], al["note_code"]) == (
        "unscored",
        None,
        "truncated",
    )


def test_a_reply_without_a_verdict_is_reasked_quoting_the_format(
    app_factory, server, tmp_path
):
    sessions = [
        crafted.session(
            "once", {"Ours": ["[[al=55]] [[binary=0]] [[fault=garbage_once]]"]}
        )
    ]
    document = run_with(app_factory, server, tmp_path, "scripted", sessions)
    [al] = rows(document)
    assert (al["status"], al["value"]) == ("ok", 55.0)
    assert document["judge_usage"]["scripted"]["reasks"] >= 1


def test_a_model_that_refuses_max_tokens_is_asked_with_max_completion_tokens(
    app_factory, server, tmp_path
):
    document = run_with(app_factory, server, tmp_path, "scripted-max-completion")
    assert document["run"]["status"] == "done"
    assert {row["status"] for row in rows(document)} == {"ok"}


def test_cached_prompt_tokens_the_server_reported_reach_judge_usage_and_the_cost(
    app_factory, server, tmp_path
):
    """Long sessions: a method's later prompts begin with more than 1,024
    tokens of its earlier ones (static-first prompts), which the scripted
    judge reports as cached, like OpenAI's prompt cache."""
    import json

    from reports.paper_spent import spent_sentence
    from testing import datagen

    model = "scripted"
    price = {
        "input": 2.5,
        "output": 10.0,
        "cached_input": 1.25,
        "batch_input": 1.25,
        "batch_output": 5.0,
    }
    sessions = [
        json.loads(line)
        for line in datagen.write_file(tmp_path / "long.jsonl", 8_000, 16)
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    document = run_with(
        app_factory, server, tmp_path, model, sessions, JUDGE_PRICES={model: price}
    )
    used = document["judge_usage"][model]
    reported = server.state.reported.by_model[model]
    assert used["cached_tokens"] == reported["cached_tokens"] > 0
    assert used["cached_share"] == used["cached_tokens"] / used["prompt_tokens"]
    uncached = used["prompt_tokens"] - used["cached_tokens"]
    expected = (
        Decimal("2.5") * uncached
        + Decimal("1.25") * used["cached_tokens"]
        + Decimal(10) * used["completion_tokens"]
    ) / 1_000_000
    assert used["cost_usd"] == float(expected)
    batch = (
        Decimal("1.25") * used["prompt_tokens"] + Decimal(5) * used["completion_tokens"]
    ) / 1_000_000
    assert used["batch_cost_usd"] == float(batch)
    said = spent_sentence(document["judge_usage"])
    assert "served from the provider's prompt cache" in said
    assert "in batch it would have cost" in said
