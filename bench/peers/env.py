"""The peers' own environment, made on demand and kept out of the product's:
``.venv-peers/`` (Inspect AI and the openai SDK) and ``bench/peers/node/``
(promptfoo). ``python -m bench.peers.env`` makes both; the pacing drill
makes them itself when they are missing.

Versions are pinned to those issue 49's notes measured, so a re-run compares
with the recorded figures.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv-peers"
PYTHON = VENV / "bin" / "python"
NODE_PREFIX = Path(__file__).resolve().parent / "node"
PROMPTFOO = NODE_PREFIX / "node_modules" / ".bin" / "promptfoo"
PYTHON_PACKAGES = ("inspect-ai==0.3.285", "openai==3.57.0")
NPM_PACKAGES = ("promptfoo@~0.121",)


def python_ready() -> bool:
    check = "import inspect_ai, openai"
    return PYTHON.exists() and subprocess.run([PYTHON, "-c", check]).returncode == 0


def ensure() -> None:
    """Make whatever part of the peers' environment is missing."""
    if not python_ready():
        # the interpreter running the bench: the same Python as .venv
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        pip = [PYTHON, "-m", "pip", "install", "-q", *PYTHON_PACKAGES]
        subprocess.run(pip, check=True)
    if not PROMPTFOO.exists():
        NODE_PREFIX.mkdir(exist_ok=True)
        npm = ["npm", "install", "--prefix", NODE_PREFIX, "--no-save", *NPM_PACKAGES]
        subprocess.run(npm, check=True)


if __name__ == "__main__":
    ensure()
    print(f"peers ready: {PYTHON}, {PROMPTFOO}")
