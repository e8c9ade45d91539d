"""Dashboard server time and page weight for large finished runs (4 methods,
every alignment row scored, with its response length: 100, 1,000 and 10,000
sessions x 10 rounds = 32k, 320k and 3.2M rows, and 1,000 sessions x 100
rounds = 3.2M rows), against the upload page rendered by the same app.
``python -m bench.dashboard 1000 1000x100`` measures chosen sizes.

Each size runs in fresh processes, so no size inherits another's memory: one
process stores the synthetic rows through ``storage.rows.upsert_rows`` in 20k
batches (``build_s``); a second one, a worker that has just started (the
libraries aggregation uses already imported, as after its first run), runs
the real ``pipeline.worker.execution.finalize``, each suite over its own rows
(``finalize_s``). ``finalize_peak_rss_mb`` is that process's peak RSS
(VmHWM) from the start of finalize, so it counts the app and libraries it
holds (``rss_before_finalize_mb``) plus what finalizing adds. The same
process then times the pages. Page weight is split into the markup
(``html_kb``, without the figures block) and the embedded figures JSON
(``json_kb``). Targets: < 1 s server time and < 2 MB HTML + JSON; finalize
at most 400 MB peak, the same whatever the rows: only per-session values
(paired comparisons) grow, with sessions, not with rounds."""

from __future__ import annotations

import json
import random
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.judge_orchestration import make_app
from pipeline.worker import execution

METHODS = ["Base", "RAG", "Ours", "Oracle"]
# sessions x rounds: 10x the rows by sessions, then by rounds at 1,000 sessions
SIZES = ((100, 10), (1000, 10), (10000, 10), (1000, 100))
FIGURES_BLOCK = re.compile(
    rb'<script type="application/json" id="figures">(.*?)</script>', re.S
)
FINALIZE_RSS_TARGET_MB = 400
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
                # the fact stored beside every judged response: length checks
                chars = float(rng.randint(40, 1200))
                yield {**key, "metric": "response_chars", "value": chars}


def build_run(app, sessions: int, rounds: int = 10):
    """Store the synthetic rows of a finished run; (run, seconds)."""
    storage = app.extensions["storage"]
    start = time.perf_counter()
    run = storage.runs.create_run(
        file_name=f"bench-{sessions}.jsonl",
        file_sha256="0" * 64,
        upload_id="none",
        sessions=sessions,
        rounds=sessions * rounds,
        methods=METHODS,
        suites=["alignment"],
        judge={
            "model": "scripted",
            "temperature": 0.0,
            "samples": 1,
            "prompts": {"alignment": "alignment_v1"},
        },
    )
    batch = []
    for row in synthetic_rows(sessions, rounds):
        batch.append({**row, "run_id": run.id})
        if len(batch) == 20_000:
            storage.rows.upsert_rows(batch)
            batch = []
    storage.rows.upsert_rows(batch)
    storage.chunks.record_sessions(
        run.id, ((i, f"s{i:05d}", 0, 0) for i in range(sessions))
    )
    return run, time.perf_counter() - start


def _status_kb(field: str) -> float:
    with open("/proc/self/status") as status:
        return int(next(i for i in status if i.startswith(field)).split()[1])


def warm_up() -> None:
    """What a worker that has finalized before holds: the libraries
    aggregation imports on first use."""
    import krippendorff  # noqa: F401
    import numpy  # noqa: F401
    from scipy import stats  # noqa: F401
    from sklearn import metrics  # noqa: F401


def finalize(app, run, units: int) -> tuple[float, float, float]:
    """``pipeline.worker.execution.finalize`` as the ``finalize_run`` task calls it;
    (seconds, peak RSS in MB while doing it, RSS in MB before it). Writing 5
    to clear_refs resets VmHWM, so the peak is this step's."""

    storage = app.extensions["storage"]
    storage.runs.update_run(run.id, total=units, done=units, status="running")
    with open("/proc/self/clear_refs", "w") as clear:
        clear.write("5")
    before_mb = _status_kb("VmRSS") / 1024
    start = time.perf_counter()
    execution.finalize(storage, run.id, app.config)  # the worker's own finalize, timed
    finalize_s = time.perf_counter() - start
    assert storage.runs.get_run(run.id).status == "done"
    return finalize_s, _status_kb("VmHWM") / 1024, before_mb


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


def _app(workdir: Path):
    app = make_app(workdir, 8)
    app.extensions["watchdog"].stop()  # no sweep may touch the run meanwhile
    return app


def build_size(workdir: Path, sessions: int, rounds: int) -> dict:
    """Child process 1: store the run's rows."""
    app = _app(workdir)
    run_record, build_s = build_run(app, sessions, rounds)
    return {"run_id": run_record.id, "build_s": build_s}


def measure_size(workdir: Path, sessions: int, rounds: int, run_id: str) -> dict:
    """Child process 2: finalize the stored run, then time its page."""
    app = _app(workdir)
    client = app.test_client()
    client.get("/r/warm-up")  # templates compiled before timing
    warm_up()
    units = sessions * rounds * len(METHODS)
    run_record = app.extensions["storage"].runs.get_run(run_id)
    finalize_s, finalize_mb, before_mb = finalize(app, run_record, units)
    baseline_s, _ = median_get(client, "/")
    page_s, body = median_get(client, f"/r/{run_record.token}")
    html_bytes, json_bytes = page_weight(body)
    return {
        "rows": units * (len(METRICS) + 1),  # + response_chars
        "finalize_s": round(finalize_s, 2),
        "finalize_peak_rss_mb": round(finalize_mb),
        "rss_before_finalize_mb": round(before_mb),
        "baseline_upload_page_ms": round(baseline_s * 1000, 1),
        "page_ms": round(page_s * 1000, 1),
        "ratio_to_baseline": round(page_s / baseline_s, 1),
        "html_kb": round(html_bytes / 1024, 1),
        "json_kb": round(json_bytes / 1024, 1),
        "html_plus_json_kb": round(len(body) / 1024, 1),
    }


def _child(*args: str) -> dict:
    """Run ``python -m bench.dashboard <args>`` in a fresh interpreter."""
    command = [sys.executable, "-m", "bench.dashboard", *args]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def one_size(sessions: int, rounds: int) -> dict:
    size = (str(sessions), str(rounds))
    with tempfile.TemporaryDirectory() as tmp:
        built = _child("--build", tmp, *size)
        figures = {"build_s": round(built["build_s"], 1)}
        figures.update(_child("--measure", tmp, *size, built["run_id"]))
    if figures["finalize_peak_rss_mb"] > FINALIZE_RSS_TARGET_MB:
        figures["finalize_note"] = (
            f"finalize peaked at {figures['finalize_peak_rss_mb']} MB "
            f"(> {FINALIZE_RSS_TARGET_MB} MB)"
        )
    prefix = f"{sessions}_sessions" + ("" if rounds == 10 else f"_{rounds}_rounds")
    return {f"{prefix}_{key}": value for key, value in figures.items()}


def parse_size(text: str) -> tuple[int, int]:
    """``1000`` (10 rounds) or ``1000x100`` (sessions x rounds)."""
    sessions, _, rounds = text.partition("x")
    return int(sessions), int(rounds or 10)


def run(sizes: tuple[tuple[int, int], ...] = SIZES) -> dict:
    figures: dict = {"name": "dashboard (sessions x rounds x 4 methods)"}
    for sessions, rounds in sizes:
        print(f"  dashboard: {sessions} x {rounds}", file=sys.stderr, flush=True)
        figures.update(one_size(sessions, rounds))
    figures["target_page_ms"] = 1000
    figures["target_html_plus_json_kb"] = 2048
    figures["target_finalize_peak_rss_mb"] = FINALIZE_RSS_TARGET_MB
    return figures


def main(argv: list[str]) -> None:
    if argv[:1] == ["--build"]:
        print(json.dumps(build_size(Path(argv[1]), int(argv[2]), int(argv[3]))))
    elif argv[:1] == ["--measure"]:
        size = int(argv[2]), int(argv[3])
        print(json.dumps(measure_size(Path(argv[1]), *size, argv[4])))
    else:
        sizes = tuple(parse_size(arg) for arg in argv) or SIZES
        print(json.dumps(run(sizes), indent=2))


if __name__ == "__main__":
    main(sys.argv[1:])
