"""Fixed costs of a small run in the embedded default, the worker process
warm (``python app.py`` starts it at launch): from the upload stored to the
first judge call, and from the last judge reply to the run's ``done``
(issue 32: <= 0.3 s and <= 0.5 s). A 2,000-call run (100 sessions x 5
rounds x 2 methods, alignment: two calls per unit), the scripted judge at 50 ms in this
process, judge concurrency 16; ROUNDS runs, medians. The whole-run wall
time against the ideal (calls x latency / concurrency) is beside them."""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from bench.judge_orchestration import warm_worker
from testing.judge_server import ScriptedJudge
from tests import crafted

ROUNDS = 3
LATENCY = 0.05
CONCURRENCY = 16


def _sessions(count: int) -> list[dict]:
    values = [50, 60, 70, 80, 90]
    return [
        crafted.session(
            f"h{index:03d}",
            {
                "Base": [f"{index} b{k}" for k in range(5)],
                "Ours": [f"{index} {t}" for t in crafted.scores(values, [1] * 5)],
            },
        )
        for index in range(count)
    ]


def _app(workdir: Path, judge_url: str):
    from app import create_app

    return create_app(
        {
            "SECRET_KEY": "bench",
            "INSTANCE_PATH": str(workdir / "instance"),
            "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
            "UPLOAD_FOLDER": str(workdir / "uploads"),
            "RESULTS_FOLDER": str(workdir / "results"),
            "REDIS_URL": None,
            "JUDGE_API_URL": judge_url,
            "JUDGE_MODEL": "scripted",
            "JUDGE_CONCURRENCY": CONCURRENCY,
        }
    )


def _one(app, path: Path, judge: ScriptedJudge) -> dict:
    from pipeline.service.runs import RunRequest

    storage, service = app.extensions["storage"], app.extensions["runs"]
    judge.state.first_call_at = judge.state.last_call_at = None
    request = RunRequest(suites=["alignment"], use_cache=False)
    # from before the upload is stored: a worker finishing another run's
    # chunk may claim this run's first chunks before create() returns
    stored = time.time()
    with path.open("rb") as stream:
        run = service.create(stream, path.name, request)
    service.enqueue(run.id)
    while (run := storage.runs.get_run(run.id)).status in ("queued", "running"):
        time.sleep(0.05)  # the run's own timestamps say when it ended
    final = run.finished_at.timestamp()
    calls, last_call = run.judge_calls, judge.state.last_call_at
    return {
        "first_call_s": judge.state.first_call_at - stored,
        "last_call_to_done_s": final - last_call,
        # where that goes: to the finalize claim, then the aggregation
        "last_call_to_claim_s": run.finalizing_at.timestamp() - last_call,
        "claim_to_done_s": run.finished_at.timestamp() - run.finalizing_at.timestamp(),
        "ratio_to_ideal": (final - stored) / (calls * LATENCY / CONCURRENCY),
        "calls": calls,
        "status": run.status,
    }


def run() -> dict:
    with tempfile.TemporaryDirectory() as tmp, ScriptedJudge(LATENCY) as judge:
        workdir = Path(tmp)
        path = crafted.write(workdir / "handoff.jsonl", _sessions(100))
        app = _app(workdir, judge.url)
        try:
            warm_worker(app)
            _one(app, path, judge)  # the worker's first run: imports, pools
            found = [_one(app, path, judge) for _ in range(ROUNDS)]
        finally:
            app.extensions["worker"].stop()
            app.extensions["storage"].engine.dispose()
    result: dict[str, object] = {"name": f"hand-off, warm worker (median of {ROUNDS})"}
    keys = (
        "first_call_s",
        "last_call_to_done_s",
        "last_call_to_claim_s",
        "claim_to_done_s",
        "ratio_to_ideal",
    )
    for key in keys:
        result[key] = round(statistics.median(r[key] for r in found), 3)
        result[f"{key}_all"] = [round(r[key], 3) for r in found]
    result["calls"] = found[0]["calls"]
    result["statuses"] = sorted({r["status"] for r in found})
    return result


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
