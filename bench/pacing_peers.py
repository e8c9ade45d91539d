"""Issue 49's pacing drill for peers of our judge client: Inspect AI,
promptfoo and an AsyncOpenAI loop (default 2 retries, and 10) each send the
1,000 requests of ``bench/pacing.py`` at concurrency 64 to the same
rate-limited scripted judge, in the same three scenarios (``requests``,
``tokens``, ``requests_rejected_counted``), each run ``REPEATS`` times.

Per run: wall time on the judge (first request received to last answer
sent), its ratio to the scenario's floor, requests answered 429, and failed
calls (requests the peer gave up on, from its own output). The peers run in
their own environment (``bench/peers/env.py``), made here if missing.

``python -m bench pacing_peers`` runs them all; ``python -m
bench.pacing_peers [PEER ...] [SCENARIO ...]`` a part (printed as JSON).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from bench import pacing
from bench.peers import env, runners
from bench.peers.judge import LimitedJudge

REPEATS = 2
DEADLINE_S = 180  # per run: 4.5-9x the floor, past any figure worth a row
PEERS = {
    "inspect_ai": runners.inspect_ai,
    "promptfoo": runners.promptfoo,
    "openai_retries_2": partial(runners.openai_loop, retries=2),
    "openai_retries_10": partial(runners.openai_loop, retries=10),
}


def scenarios() -> tuple[dict, dict]:
    """The three scenarios as ``bench/pacing.py`` sets them (same TPM, same
    floors), and the figures they were derived from."""
    from judge_client.config import JudgeConfig

    items = pacing._items()
    max_tokens = JudgeConfig(base_url="", model="").max_tokens
    tokens = pacing._tokens(items, max_tokens)
    per_request = tokens / len(items)
    tpm = int(round(60 * pacing.REQUESTS_PER_SECOND_BY_TOKENS * per_request, -4))
    by_requests = pacing.CALLS / (pacing.RPM / 60)
    table = {  # name: (tpm, count_rejected, floor in seconds)
        "requests": (None, False, by_requests),
        "tokens": (tpm, False, tokens / (tpm / 60)),
        "requests_rejected_counted": (None, True, by_requests),
    }
    setup = {
        "items": items,
        "max_tokens": max_tokens,
        "tpm": tpm,
        "tokens_per_request": round(per_request),
    }
    return table, setup


def _write_messages(items: list, folder: Path) -> Path:
    path = folder / "messages.jsonl"
    with path.open("w") as out:
        for item in items:
            out.write(json.dumps(list(item.messages)) + "\n")
    return path


def _one(peer: str, scenario: tuple, messages: Path, max_tokens: int, work: Path):
    """One run of one peer in one scenario."""
    tpm, count_rejected, floor_s = scenario
    work.mkdir(parents=True)
    with LimitedJudge(pacing.RPM, tpm, count_rejected) as judge:
        try:
            said = PEERS[peer](judge.url, work, messages, max_tokens, DEADLINE_S)
        except runners.Unfinished as why:
            said = {"unfinished": str(why)}
        counts = judge.counts()
    sent = counts["admitted"] + counts["rate_limited"]
    return {
        "wall_s": round(counts["span_s"], 2),
        "ratio": round(counts["span_s"] / floor_s, 2),
        "requests_sent": sent,
        "answered_200": counts["admitted"],
        "answered_429": counts["rate_limited"],
        "share_429": round(counts["rate_limited"] / sent, 3) if sent else None,
        "tokens_per_request": round(counts["tokens_per_request"]),
        "load_1min": os.getloadavg()[0],
        **said,
    }


def run(peers: list | None = None, names: list | None = None) -> dict:
    env.ensure()
    table, setup = scenarios()
    results = {
        "calls": pacing.CALLS,
        "concurrency": pacing.CONCURRENCY,
        "rpm": pacing.RPM,
        "tpm": setup["tpm"],
        "tokens_per_request": setup["tokens_per_request"],
        "versions": _versions(),
    }
    with tempfile.TemporaryDirectory(prefix="pacing-peers-") as folder:
        messages = _write_messages(setup["items"], Path(folder))
        for name in names or list(table):
            results[name] = {"floor_s": round(table[name][2], 2)}
            for peer in peers or list(PEERS):
                runs = []
                for repeat in range(REPEATS):
                    work = Path(folder) / f"{name}-{peer}-{repeat}"
                    one = _one(peer, table[name], messages, setup["max_tokens"], work)
                    # as it comes: a full run takes most of an hour
                    print(
                        f"  {name} {peer} #{repeat + 1}: {json.dumps(one)}",
                        file=sys.stderr,
                        flush=True,
                    )
                    runs.append(one)
                results[name][peer] = runs
    return results


def _versions() -> dict:
    probe = (
        "import inspect_ai, openai; print(inspect_ai.__version__, openai.__version__)"
    )
    python = subprocess.run([env.PYTHON, "-c", probe], capture_output=True, text=True)
    node = subprocess.run([env.PROMPTFOO, "--version"], capture_output=True, text=True)
    inspect_version, openai_version = python.stdout.split()
    return {
        "inspect_ai": inspect_version,
        "openai": openai_version,
        "promptfoo": node.stdout.strip().splitlines()[-1],
    }


if __name__ == "__main__":
    chosen = sys.argv[1:]
    print(
        json.dumps(
            run(
                [a for a in chosen if a in PEERS] or None,
                [a for a in chosen if a not in PEERS] or None,
            ),
            indent=1,
        )
    )
