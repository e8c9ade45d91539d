"""Dashboard server time and page weight for large finished runs (10 rounds,
4 methods, every alignment row scored: 100, 1,000 and 10,000 sessions = 28k,
280k and 2.8M rows), against the upload page rendered by the same app in the
same run. Every size is a run in the same app and database.

Rows are synthetic, stored through ``storage.upsert_rows`` in 20k batches
(``build_s``); aggregation is the real ``pipeline.execution.finalize``,
each suite over its own rows, as the finalizing worker does (``finalize_s``, with the
process's peak RSS during it). Page weight is split into the markup
(``html_kb``, without the figures block) and the embedded figures JSON
(``json_kb``). Targets: < 1 s server time and < 2 MB HTML + JSON."""

from __future__ import annotations

import json
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.judge_orchestration import make_app
from pipeline import execution

METHODS = ["Base", "RAG", "Ours", "Oracle"]
SIZES = (100, 1000, 10000)
FIGURES_BLOCK = re.compile(
    rb'<script type="application/json" id="figures">(.*?)</script>', re.S
)
FINALIZE_RSS_NOTE_MB = 6144
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
    """Store the synthetic rows of a finished run; (run, seconds)."""
    storage = app.extensions["storage"]
    start = time.perf_counter()
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
    return run, time.perf_counter() - start


def _status_kb(field: str) -> float:
    with open("/proc/self/status") as status:
        return int(next(i for i in status if i.startswith(field)).split()[1])


def finalize(app, run, units: int) -> tuple[float, float]:
    """``pipeline.execution.finalize`` as the ``finalize_run`` task calls it;
    (seconds, peak RSS in MB while doing it). Writing 5 to clear_refs
    resets VmHWM, so the peak is this step's, not an earlier size's."""

    storage = app.extensions["storage"]
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    storage.update_run(run.id, total=units, done=units, status="running")
    start = time.perf_counter()
    execution.finalize(storage, run.id, app.config)  # the worker's own finalize, timed
    finalize_s = time.perf_counter() - start
    assert storage.get_run(run.id).status == "done"
    return finalize_s, _status_kb("VmHWM") / 1024


def median_get(client, url: str, repeats: int = 5) -> tuple[float, bytes]:
    times, body = [], b""
    for _ in range(repeats):
        start = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - start)
        body = response.data
        assert response.status_code == 200, response.status_code
    return statistics.median(times), body


def page_weight(body: bytes) -> tuple[int, int]:
    """(markup bytes without the figures block, figures JSON bytes)."""
    match = FIGURES_BLOCK.search(body)
    json_bytes = len(match.group(1)) if match else 0
    return len(body) - json_bytes, json_bytes


def measure_size(app, client, sessions: int, baseline_s: float) -> dict:
    run_record, build_s = build_run(app, sessions)
    units = sessions * 10 * len(METHODS)
    finalize_s, finalize_mb = finalize(app, run_record, units)
    page_s, body = median_get(client, f"/r/{run_record.token}")
    html_bytes, json_bytes = page_weight(body)
    figures = {
        "rows": units * len(METRICS),
        "build_s": round(build_s, 1),
        "finalize_s": round(finalize_s, 2),
        "finalize_peak_rss_mb": round(finalize_mb),
        "page_ms": round(page_s * 1000, 1),
        "ratio_to_baseline": round(page_s / baseline_s, 1),
        "html_kb": round(html_bytes / 1024, 1),
        "json_kb": round(json_bytes / 1024, 1),
        "html_plus_json_kb": round(len(body) / 1024, 1),
    }
    if finalize_mb > FINALIZE_RSS_NOTE_MB:
        figures["finalize_note"] = (
            f"aggregating all rows in one process peaked at {finalize_mb:.0f} MB "
            f"(> {FINALIZE_RSS_NOTE_MB} MB)"
        )
    return {f"{sessions}_sessions_{key}": value for key, value in figures.items()}


def run(sizes: tuple[int, ...] = SIZES) -> dict:
    figures = {"name": "dashboard (10 rounds x 4 methods)"}
    with tempfile.TemporaryDirectory() as tmp:
        app = make_app(Path(tmp), 8)
        client = app.test_client()
        client.get("/r/warm-up")  # templates compiled before timing
        baseline_s, _ = median_get(client, "/")
        figures["baseline_upload_page_ms"] = round(baseline_s * 1000, 1)
        for sessions in sizes:
            print(f"  dashboard: {sessions} sessions", file=sys.stderr, flush=True)
            figures.update(measure_size(app, client, sessions, baseline_s))
        figures["target_page_ms"] = 1000
        figures["target_html_plus_json_kb"] = 2048
    return figures


if __name__ == "__main__":
    sizes = tuple(int(arg) for arg in sys.argv[1:]) or SIZES
    print(json.dumps(run(sizes), indent=2))
