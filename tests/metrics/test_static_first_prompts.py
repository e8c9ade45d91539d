"""Static-first prompt files (issue 49, prompt caching): the prompts the
suites ask with put their fixed text (instructions, questionnaire, rubric,
output format) before every per-request field and the text under
evaluation last, so a provider's prompt cache can serve the prefix that the
requests share. A ``_v2`` file holds the lines of its ``_v1`` file, reordered
(its version number, and "above" made "below" where a line now precedes
what it points to); ``_v1`` stays for the runs that name it."""

from __future__ import annotations

import json
import re

import pytest

from metrics import registry
from metrics.judging import mode_prompt, prompt_file
from testing import judge_forms, prompt_cache_count
from testing.judge_server import ScriptedJudge
from tests import crafted
from tests.pipeline_support import FAST_JUDGE, evaluate

FIELD = re.compile(r"\$(?:\{(\w+)\}|(\w+))")
REORDERED = ("jera", "almp_extract", "almp_infer", "slot_judge")


def suite_modes():
    return {m.name: m for suite in registry.suites() for m in suite.modes}


@pytest.mark.parametrize("name", REORDERED)
def test_the_suites_ask_with_version_2_the_lines_of_version_1_reordered(name):
    mode = suite_modes()[name]
    assert mode.prompt == f"{name}_v2"
    old = prompt_file(f"{name}_v1").read_text(encoding="utf-8")
    new = prompt_file(f"{name}_v2").read_text(encoding="utf-8")
    moved = old.replace("version 1", "version 2").replace("slot above", "slot below")
    assert sorted(moved.splitlines()) == sorted(new.splitlines())


@pytest.mark.parametrize("name", REORDERED)
def test_fixed_text_first_and_the_evaluated_field_last(name):
    user = mode_prompt(suite_modes()[name]).user.template
    fields = list(FIELD.finditer(user))
    evaluated = [f for f in fields if (f[1] or f[2]) in judge_forms.EVALUATED]
    assert evaluated == fields[-1:]  # one evaluated field, the last one
    after = user[fields[-1].end() :]
    assert re.fullmatch(r"\s*\w+>>>\s*", after)  # only its closing marker
    fixed = user[: fields[0].start()]
    assert "Reply with exactly one JSON" in fixed  # the output format is fixed text


def test_a_run_through_the_scripted_judge_caches_what_the_bench_counts(
    app_factory, tmp_path
):
    """bench/prompt_cache_count.py counts without a server: a run reports the same
    cached tokens. Sample dialogues five times as long as sample_data's
    bring a session's JERA prefix past 1,024 tokens with v2 only."""
    sessions = [
        json.loads(line) for line in prompt_cache_count.SAMPLE.read_text().splitlines()
    ]
    for session in sessions:
        session["sample_dialogues"] *= 5
    path = crafted.write(tmp_path / "long_cards.jsonl", sessions)
    counted = {
        v: prompt_cache_count.cached_share(
            prompt_cache_count.suite_requests(sessions, "roleplay"), v
        )
        for v in ("v1", "v2")
    }
    assert counted["v1"]["cached_tokens"] == 0 < counted["v2"]["cached_tokens"]
    with ScriptedJudge() as server:
        app = app_factory(
            JUDGE_API_URL=server.url,
            JUDGE_MODEL="scripted",
            **{**FAST_JUDGE, "JUDGE_CONCURRENCY": 1},
        )
        document = evaluate(app, path, server, suites=["roleplay"])
    used = document["judge_usage"]["scripted"]
    assert used["prompt_tokens"] == counted["v2"]["prompt_tokens"]
    assert used["cached_tokens"] == counted["v2"]["cached_tokens"]
