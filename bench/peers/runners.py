"""How each peer is started against the judge at ``url``, and what it says
it gave up on. Each returns ``{"failed_calls": n, ...}`` from the peer's own
output; the judge's counts are taken by the caller.

Every peer gets the same requests (the messages of ``bench/pacing.py``'s
1,000 alignment items, ``max_tokens`` as our client sends it) and
concurrency 64, the way its documentation says to set them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

from bench.peers import env

HERE = Path(__file__).resolve().parent


class Unfinished(Exception):
    """The peer was still running at the deadline, or exited without results."""


def _run(command: list, timeout: float, extra_env: dict, cwd: Path) -> str:
    """The peer's stdout; killed (its whole process group) at the deadline."""
    process = subprocess.Popen(
        [str(part) for part in command],
        cwd=cwd,
        env={**os.environ, **extra_env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # node and Inspect start children of their own
    )
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, 9)
        process.communicate()
        raise Unfinished(f"still running after {timeout:.0f} s (killed)") from None
    if process.returncode != 0:
        (cwd / "stderr.txt").write_text(err)  # kept for a look afterwards
        raise Unfinished(f"exit {process.returncode}: {err.strip()[-300:]}")
    return out


def openai_loop(url, work, messages, max_tokens, timeout, retries=2) -> dict:
    script = HERE / "openai_loop.py"
    command = [env.PYTHON, script, url, messages, 64, max_tokens, retries]
    return json.loads(_run(command, timeout, {}, work).strip().splitlines()[-1])


def inspect_ai(url, work, messages, max_tokens, timeout) -> dict:
    """``openai-api/scripted/scripted``: Inspect's OpenAI-compatible provider
    named ``scripted``, whose URL and key come from ``SCRIPTED_BASE_URL`` and
    ``SCRIPTED_API_KEY``; its retries are left at their default (unlimited)."""
    logs = work / "logs"
    # Inspect reads the task's path as a glob, which must be relative
    shutil.copy(HERE / "inspect_task.py", work)
    command = [
        env.VENV / "bin" / "inspect",
        "eval",
        "inspect_task.py",
        "--model",
        "openai-api/scripted/scripted",
        "-M",
        "responses_api=false",
        "--max-connections",
        64,
        "--max-tokens",
        max_tokens,
        "--no-fail-on-error",
        "--display",
        "none",
        "--log-dir",
        logs,
        "--log-format",
        "json",
    ]
    variables = {
        "SCRIPTED_BASE_URL": url,
        "SCRIPTED_API_KEY": "scripted",
        "PACING_MESSAGES": str(messages),
    }
    _run(command, timeout, variables, work)
    found = sorted(logs.glob("*.json"))
    if not found:
        raise Unfinished("Inspect wrote no log")
    log = json.loads(found[-1].read_text())
    samples = log.get("samples") or []
    failed = [s for s in samples if s.get("error")]
    return {
        "calls": len(samples),
        "failed_calls": len(failed),
        "status": log.get("status"),
        "errors": sorted({s["error"]["message"][:120] for s in failed}),
    }


def promptfoo(url, work, messages, max_tokens, timeout) -> dict:
    """``openai:chat:scripted`` with ``apiBaseUrl``; one test case per
    request, its messages given as a chat prompt; no cache (every call
    reaches the judge), no database write, no telemetry."""
    config = work / "promptfooconfig.yaml"
    config.write_text(json.dumps(_promptfoo_config(url, messages, max_tokens)))
    output = work / "results.json"
    command = [
        env.PROMPTFOO,
        "eval",
        "-c",
        config,
        "--max-concurrency",
        64,
        "--no-cache",
        "--no-write",
        "--no-table",
        "--no-progress-bar",
        "-o",
        output,
    ]
    variables = {
        "OPENAI_API_KEY": "scripted",
        "PROMPTFOO_CONFIG_DIR": str(work / "home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
    }
    try:
        _run(command, timeout, variables, work)
    except Unfinished:
        # promptfoo exits 100 when a test "fails"; an error is one: read on
        if not output.exists():
            raise
    results = json.loads(output.read_text())["results"]
    rows = results["results"]
    failed = [r for r in rows if r.get("error")]
    return {
        "calls": len(rows),
        "failed_calls": len(failed),
        "errors": sorted({str(r["error"])[:120] for r in failed}),
    }


def _promptfoo_config(url: str, messages: Path, max_tokens: int) -> dict:
    """JSON is YAML: the config as one document. ``dump`` writes each
    message's text as a JSON string, so the prompt renders to the exact
    messages (promptfoo sends a prompt that is a JSON list as chat)."""
    with open(messages) as lines:
        conversations = [json.loads(line) for line in lines]
    roles = [m["role"] for m in conversations[0]]
    parts = [
        f'{{"role": "{role}", "content": {{{{ m{n} | dump }}}}}}'
        for n, role in enumerate(roles)
    ]
    tests = [
        {"vars": {f"m{n}": m["content"] for n, m in enumerate(conversation)}}
        for conversation in conversations
    ]
    provider = {
        "id": "openai:chat:scripted",
        "config": {"apiBaseUrl": url, "max_tokens": max_tokens},
    }
    return {
        "prompts": ["[" + ", ".join(parts) + "]"],
        "providers": [provider],
        "tests": tests,
    }
