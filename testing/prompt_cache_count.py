"""Prompt cache by prompt version (issue 49): what share of the prompt tokens
of the roleplay and slot-judge requests a provider's prompt cache serves,
with the ``_v1`` prompt files (instructions after the scene or slots) and
with the static-first ``_v2`` files the suites ask with.

The requests are the ones the suites build for a file, in run order (session,
method, mode), counted by the scripted judge's cache model
(``testing/judge_prompt_cache.py``: OpenAI's rule, a prefix of >= 1,024
tokens seen before, in 128-token steps, 4 characters a token). The v1
request of an item carries the fields of its v2 request (read back the way
the scripted judge reads them, ``judge_forms.form_of``). No app, no server:
``tests/metrics/test_static_first_prompts.py`` checks that a run through the
scripted judge reports the same cached tokens; ``bench/prompt_cache.py``
reports the figures.

Also reported per prompt: its fixed prefix (the system message and the user
text before the first field), the part every request of the mode shares.
"""

from __future__ import annotations

import json
from pathlib import Path

from config import PROJECT_ROOT
from metrics.judging import PROMPT_FILES, read_prompt
from metrics.suites import roleplay
from metrics.suites.slots import judge as slot_judge
from metrics.suites.slots.matching import merge_writes
from testing import judge_forms
from testing.judge_prompt_cache import CHARS_PER_TOKEN, PromptCache

SAMPLE = PROJECT_ROOT / "sample_data.jsonl"
MODES = ("jera", "almp_extract", "almp_infer", "slot_judge")


def suite_requests(sessions: list[dict], suite: str) -> list[tuple]:
    """(mode name, messages) of every request of ``suite``, in run order."""
    found = []
    for session in sessions:
        methods = list(session["rounds"][0]["responses"])
        if suite == "roleplay":
            for method in methods:
                items = roleplay.request_items(session, method, samples=1)
                found += [(mode, item[0].messages) for mode, item in items.items()]
            continue
        truth = merge_writes([session.get("ground_truth_slots")])
        for method in methods:
            predicted = slot_judge.predicted_slots(session, method)
            if truth and predicted:
                item = slot_judge.judge_item(truth, predicted)
                found.append(("slot_judge", item.messages))
    return found


def as_version(mode: str, messages: tuple, version: str) -> list[dict]:
    """The same request with the prompt file ``<mode>_<version>``."""
    form = judge_forms.form_of(messages[0]["content"], messages[1]["content"])
    assert form is not None and form.mode.name == mode, mode
    return read_prompt(PROMPT_FILES[f"{mode}_{version}"]).render(**form.fields)


def cached_share(requests: list[tuple], version: str) -> dict:
    cache, prompt, cached = PromptCache(), 0, 0
    for mode, messages in requests:
        body = {"model": "judge", "messages": as_version(mode, messages, version)}
        prompt += sum(len(m["content"]) for m in body["messages"]) // CHARS_PER_TOKEN
        cached += cache.served(body)
    share = round(cached / prompt, 3) if prompt else None
    return {
        "requests": len(requests),
        "prompt_tokens": prompt,
        "cached_tokens": cached,
        "cached_share": share,
    }


def fixed_prefix_tokens(name: str) -> int:
    """The system message and the user text before the first field."""
    prompt = read_prompt(PROMPT_FILES[name])
    user = prompt.user.template
    return (len(prompt.system.template) + user.index("$")) // CHARS_PER_TOKEN


def count(path: Path = SAMPLE) -> dict:
    sessions = [json.loads(line) for line in path.read_text().splitlines() if line]
    result: dict = {"file": str(path)}
    for suite in ("roleplay", "slots"):
        requests = suite_requests(sessions, suite)
        result[suite] = {v: cached_share(requests, v) for v in ("v1", "v2")}
    result["fixed_prefix_tokens"] = {
        f"{mode}_{v}": fixed_prefix_tokens(f"{mode}_{v}")
        for mode in MODES
        for v in ("v1", "v2")
    }
    return result
