"""Start-up of the light CLI commands, whole-process wall time as a farm
would measure it (fork, interpreter, imports, the work, exit): ``flask --app
app validate sample_data.jsonl`` and ``flask --app app --help``, beside the
baselines ``python -c "import flask"``, a bare ``python -c pass`` and what
every ``flask`` command loads before it finds the app: Flask's CLI and the
installed ``flask.commands`` plugins (Flask-Limiter's, with ``rich`` and
``limits``), which Flask imports for any command, ours or not. Each
command runs ROUNDS times, the commands alternating so load on a shared
machine falls on all of them alike; medians are reported (target: validate
<= 0.5 s, issue 32)."""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROUNDS = 10
FLASK = str(Path(sys.executable).with_name("flask"))
# what `flask` imports before it loads the app (flask/cli.py, FlaskGroup)
PLUGINS = (
    "import flask.cli; from importlib.metadata import entry_points; "
    "[plugin.load() for plugin in entry_points(group='flask.commands')]"
)
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "python -c 'import flask'": [sys.executable, "-c", "import flask"],
    "flask's CLI and its plugins": [sys.executable, "-c", PLUGINS],
    "flask --app app --help": [FLASK, "--app", "app", "--help"],
    "flask --app app validate sample_data.jsonl": [
        FLASK,
        "--app",
        "app",
        "validate",
        "sample_data.jsonl",
    ],
}


def _environment() -> dict:
    """No judge, no queue, a throwaway database: the command as a user
    would type it, with Python's bytecode cache (this machine's shells set
    PYTHONDONTWRITEBYTECODE, which would compile every module on every start:
    ~0.2 s that no installation pays after its first run)."""
    unset = ("REDIS_URL", "DATABASE_URL", "JUDGE_API_URL", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return {**env, "DATABASE_URL": "sqlite:////tmp/bench_startup.sqlite3"}


def _once(command: list[str], env: dict) -> float:
    start = time.perf_counter()
    subprocess.run(
        command,
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    return time.perf_counter() - start


def run() -> dict:
    env = _environment()
    for command in COMMANDS.values():  # warm the file cache and .pyc files
        _once(command, env)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(ROUNDS):
        for name, command in COMMANDS.items():
            times[name].append(_once(command, env))
    medians = {name: statistics.median(found) for name, found in times.items()}
    flask_alone = medians["python -c 'import flask'"]
    figures: dict[str, object] = {"name": f"CLI start-up (median of {ROUNDS})"}
    for name, median in medians.items():
        figures[f"{name} (s)"] = round(median, 3)
    validate = medians["flask --app app validate sample_data.jsonl"]
    figures["validate / import flask"] = round(validate / flask_alone, 2)
    figures["validate - flask's CLI and its plugins (s)"] = round(
        validate - medians["flask's CLI and its plugins"], 3
    )
    figures["validate <= 0.5 s"] = validate <= 0.5
    return figures


if __name__ == "__main__":
    for key, value in run().items():
        print(f"{key:45} {value}")
