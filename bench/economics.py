"""Judge economics (issue 49): what one run costs online and in batch, and
what the provider's prompt cache takes off, on the app served in its own
process (embedded worker, SQLite) and the scripted judge (50 ms a reply;
OpenAI's prompt cache: a prefix of >= 1,024 tokens seen before, in 128-token
steps; batches done in ``BATCH_S``).

The same file is evaluated twice, each on a fresh app and a fresh judge (no
verdict or prompt cache carried over): online, then ``batch=1``. Reported
per mode: the wall time, the requests made online and in batch files, the
prompt tokens and their cached share, and the cost at the prices below (an
OpenAI-like small model's: input, cached input, output; batch half of
each), which the app computes from the usage the judge reported.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

import requests

from bench.load import start_server, stop, wait_until
from testing.datagen import write_file
from testing.judge_server import ScriptedJudge

BATCH_S = 5.0
PRICES = "judge=0.15/0.60 cached=0.075 batch=0.075/0.30 batch_cached=0.0375"
SESSIONS_BYTES = 60_000  # ~12 sessions of 16 rounds, 2 methods: ~770 calls


def _run(workdir: Path, data: Path, batch: bool) -> dict:
    workdir.mkdir(parents=True)
    with ScriptedJudge(latency=0.05, batch_seconds=BATCH_S) as judge:
        server, base = start_server(
            workdir,
            {
                "JUDGE_API_URL": judge.url,
                "JUDGE_MODEL": "judge",
                "JUDGE_PRICES": PRICES,
                "JUDGE_CONCURRENCY": "16",
                "JUDGE_BATCH_FIRST_POLL_S": "1",
            },
        )
        try:
            started = time.monotonic()
            form = {"suites": "alignment", **({"batch": "1"} if batch else {})}
            with data.open("rb") as stream:
                made = requests.post(
                    f"{base}/api/v1/runs",
                    data=form,
                    files={"file": ("runs.jsonl", stream)},
                    timeout=120,
                )
            token = made.json()["token"]
            done = wait_until(
                base, token, lambda s: s in ("done", "partial", "failed"), timeout=1800
            )
            elapsed = time.monotonic() - started
        finally:
            stop(server)
        used = done["results"]["judge_usage"]["judge"]
        return {
            "status": done["status"],
            "seconds": round(elapsed, 1),
            "online_requests": judge.state.online_requests,
            "batch_lines": judge.state.batch_lines,
            "prompt_tokens": used["prompt_tokens"],
            "cached_share": used["cached_share"],
            "completion_tokens": used["completion_tokens"],
            "cost_usd": used["cost_usd"],
            "batch_cost_usd": used["batch_cost_usd"],
        }


def run() -> dict:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        data = write_file(
            root / "runs.jsonl", SESSIONS_BYTES, rounds=16, methods=("Base", "Ours")
        )
        online = _run(root / "online", data, batch=False)
        batch = _run(root / "batch", data, batch=True)
    # what the online run would have cost had no prompt token been cached
    no_cache = (
        online["prompt_tokens"] * 0.15 + online["completion_tokens"] * 0.60
    ) / 1e6
    return {
        "online": online,
        "batch": batch,
        "online_without_cache_usd": round(no_cache, 6),
        "batch_over_online_cost": round(batch["cost_usd"] / online["cost_usd"], 3),
    }


if __name__ == "__main__":
    print(json.dumps(run(), indent=2))
