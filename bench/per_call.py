"""Per-call cost of the whole CLI against an earlier commit (issue 61 item 8).

2,000 alignment calls (50 sessions x 10 rounds x 2 methods x 2 calls) at
50 ms on the scripted judge (its own process), ``JUDGE_CONCURRENCY`` 16:
``flask --app app evaluate FILE --suite alignment --no-cache --concurrency
16`` in the embedded default (SQLite, the command starts its worker
process), fork to exit. The same command runs from two checkouts with this
virtual environment, alternating ROUNDS times (ABAB...), each checkout with
its own instance (database, uploads, queue) kept across its runs as a
user's is, its schema made by an untimed first run:

* **baseline**: BASELINE_COMMIT, checked out detached in a temporary git
  worktree (or ``--baseline-dir DIR``, a checkout made beforehand);
* **now**: this checkout.

Each run must make exactly CALLS calls on the judge (the judge counts them).
The figures are the medians of the wall times, their spread, each against
the ideal (calls x latency / concurrency), their ratio, and the CPU of the
command and its worker per 1,000 calls. The machine's load (``/proc/loadavg``)
is read before and after.

    python -m bench.per_call [--rounds N] [--baseline-dir DIR] [--commit C]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench import floor
from bench import judge_orchestration as orchestration

ROOT = Path(__file__).resolve().parents[1]
BASELINE_COMMIT = "e590f68"  # the start of the fourth round (issue 61's finding)
LATENCY = 0.05
CONCURRENCY = 16
SESSIONS, ROUNDS_PER_SESSION = 50, 10  # x 2 methods x 2 calls: 2,000 calls
CALLS = SESSIONS * ROUNDS_PER_SESSION * 2 * 2
ROUNDS = 5
TARGET = 1.10  # within 10% of the baseline


@contextlib.contextmanager
def checkout(commit: str):
    """A detached worktree of ``commit`` with its catalogs compiled."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(path), commit],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            compile_catalogs(path)
            yield path
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(path)],
                cwd=ROOT,
                capture_output=True,
            )


def compile_catalogs(path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "babel.messages.frontend", "compile", "-d", "locales"],
        cwd=path,
        check=True,
        capture_output=True,
    )


def _env(workdir: Path) -> dict:
    env = floor._embedded_env(workdir)
    env["NLTK_DATA"] = str(ROOT / "nltk_data")
    return env


def one_run(
    code: Path, workdir: Path, data: Path, url: str, judge
) -> tuple[float, float]:
    """(wall, CPU) of one CLI run from the checkout ``code`` with its
    instance in ``workdir``; checks the judge answered exactly CALLS calls
    (none reused, none paid twice)."""
    before = orchestration.judge_server_calls(judge)
    command = floor._evaluate(data, url, workdir / "out.json", CONCURRENCY)
    cpu, start = floor._children_cpu(), time.perf_counter()
    done = subprocess.run(
        command, cwd=code, env=_env(workdir), capture_output=True, text=True
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise RuntimeError(f"{code}: exit {done.returncode}: {done.stderr[-2000:]}")
    floor._reap_orphans({judge.pid})
    cpu = floor._children_cpu() - cpu
    calls = orchestration.judge_server_calls(judge) - before
    if calls != CALLS:
        raise RuntimeError(f"{code}: {calls} judge calls, expected {CALLS}")
    return wall, cpu


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def measure(baseline: Path, rounds: int, commit: str) -> dict:
    ideal = CALLS * LATENCY / CONCURRENCY
    found: dict[str, list[tuple[float, float]]] = {"baseline": [], "now": []}
    result: dict = {
        "name": f"per-call cost, whole CLI, {CALLS} calls, c = {CONCURRENCY}",
        "baseline_commit": commit,
        "now_commit": subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
        ).stdout.strip(),
        "ideal_s": ideal,
        "load_before": _load(),
    }
    checkouts = {"baseline": baseline, "now": ROOT}
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "per_call.jsonl"
        instances = {name: Path(tmp) / name for name in checkouts}
        for folder in instances.values():
            folder.mkdir()
        orchestration.write_sessions(
            data, SESSIONS, ROUNDS_PER_SESSION, ("Base", "Ours")
        )
        judge, url = orchestration.start_judge(LATENCY)
        try:
            # one untimed run each: the schema made, the page cache and
            # the .pyc files warm
            for name, code in checkouts.items():
                one_run(code, instances[name], data, url, judge)
            for _ in range(rounds):
                for name, code in checkouts.items():
                    found[name].append(one_run(code, instances[name], data, url, judge))
        finally:
            judge.terminate()
            judge.wait()
    result["load_after"] = _load()
    for name, runs in found.items():
        walls = [wall for wall, _ in runs]
        result[f"{name}_s"] = round(statistics.median(walls), 2)
        result[f"{name}_all_s"] = [round(w, 2) for w in walls]
        result[f"{name}_to_ideal"] = round(statistics.median(walls) / ideal, 3)
        cpu = statistics.median(cpu for _, cpu in runs) * 1000 / CALLS
        result[f"{name}_cpu_s_per_1000"] = round(cpu, 2)
    ratio = result["now_s"] / result["baseline_s"]
    result["now_to_baseline"] = round(ratio, 3)
    pairs = [n[0] / b[0] for b, n in zip(found["baseline"], found["now"], strict=True)]
    result["now_to_baseline_per_round"] = [round(p, 3) for p in pairs]
    result["met"] = ratio <= TARGET
    return result


def run(
    rounds: int = ROUNDS, baseline_dir: str | None = None, commit: str = BASELINE_COMMIT
) -> dict:
    floor._adopt_orphans()
    if baseline_dir:
        return measure(Path(baseline_dir), rounds, commit)
    if shutil.which("git") is None:
        raise RuntimeError("git is needed to check out the baseline")
    with checkout(commit) as path:
        return measure(path, rounds, commit)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--baseline-dir")
    parser.add_argument("--commit", default=BASELINE_COMMIT)
    options = parser.parse_args()
    print(
        json.dumps(run(options.rounds, options.baseline_dir, options.commit), indent=2)
    )
