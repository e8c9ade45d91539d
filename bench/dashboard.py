"""Dashboard server time and page weight for large finished runs (10 rounds,
4 methods, every alignment row scored), against the upload page rendered by
the same app in the same run. Rows are synthetic; aggregation is the real
``metrics.engine.aggregate`` (its time is reported as ``finalize_s``)."""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.judge_orchestration import make_app

METHODS = ["Base", "RAG", "Ours", "Oracle"]
METRICS = [
    "al",
    "al_style",
    "al_content",
    "al_naturalness",
    "al_personalization",
    "al_conversation",
    "binary",
]


def synthetic_rows(sessions: int, rounds: int, seed: int = 5):
    rng = random.Random(seed)
    for s in range(sessions):
        for k in range(1, rounds + 1):
            for offset, method in enumerate(METHODS):
                dims = [
                    min(20, max(0, rng.gauss(10 + 2 * offset + 0.3 * k, 3)))
                    for _ in range(5)
                ]
                key = {
                    "session_id": f"s{s:05d}",
                    "round": k,
                    "method": method,
                    "status": "ok",
                    "note": None,
                }
                yield {
                    **key,
                    "metric": "al",
                    "value": float(sum(dims)),
                    "detail": {"reasoning": "synthetic"},
                }
                for name, value in zip(METRICS[1:6], dims, strict=True):
                    yield {**key, "metric": name, "value": float(value)}
                yield {
                    **key,
                    "metric": "binary",
                    "value": float(rng.random() < 0.2 * offset),
                }


def build_run(app, sessions: int, rounds: int = 10):
    from metrics import engine

    storage = app.extensions["storage"]
    run = storage.create_run(
        file_name=f"bench-{sessions}.jsonl", file_sha256="0" * 64, upload_id="none",
        sessions=sessions, rounds=sessions * rounds, methods=METHODS, suites=["alignment"],
        judge={"model": "scripted", "temperature": 0.0, "samples": 1, "prompts": {"alignment": "alignment_v1"}},
    )  # fmt: skip
    batch = []
    for row in synthetic_rows(sessions, rounds):
        batch.append({**row, "run_id": run.id})
        if len(batch) == 20_000:
            storage.upsert_rows(batch)
            batch = []
    storage.upsert_rows(batch)
    storage.record_sessions(run.id, ((i, f"s{i:05d}", 0, 0) for i in range(sessions)))
    start = time.perf_counter()
    aggregates = engine.aggregate(storage.row_dicts(run.id), ["alignment"], METHODS)
    finalize_s = time.perf_counter() - start
    storage.update_run(
        run.id,
        aggregates=aggregates,
        total=sessions * rounds * 4,
        done=sessions * rounds * 4,
    )
    storage.set_status(run.id, "done")
    return run, finalize_s


def median_get(client, url: str, repeats: int = 5) -> tuple[float, int]:
    times, size = [], 0
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        size = len(response.data)
        assert response.status_code == 200, response.status_code
    return statistics.median(times), size


def run(sizes: tuple[int, ...] = (100, 1000)) -> dict:
    figures = {"name": "dashboard (10 rounds x 4 methods)"}
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp), 8)
        client = app.test_client()
        client.get("/r/warm-up")  # templates compiled before timing
        baseline_s, _ = median_get(client, "/")
        figures["baseline_upload_page_ms"] = round(baseline_s * 1000, 1)
        for sessions in sizes:
            run_record, finalize_s = build_run(app, sessions)
            page_s, size = median_get(client, f"/r/{run_record.token}")
            figures[f"{sessions}_sessions_rows"] = sessions * 10 * 4 * len(METRICS)
            figures[f"{sessions}_sessions_page_ms"] = round(page_s * 1000, 1)
            figures[f"{sessions}_sessions_ratio_to_baseline"] = round(
                page_s / baseline_s, 1
            )
            figures[f"{sessions}_sessions_html_kb"] = round(size / 1024, 1)
            figures[f"{sessions}_sessions_finalize_s"] = round(finalize_s, 2)
        figures["target_page_ms"] = 1000
    return figures


if __name__ == "__main__":
    sizes = tuple(int(arg) for arg in sys.argv[1:]) or (100, 1000)
    print(json.dumps(run(sizes), indent=2))
