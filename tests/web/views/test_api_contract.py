"""The served API against its own OpenAPI document: Schemathesis (issue 60
item 7) generates requests from ``/api/v1/openapi.json`` in its coverage,
fuzzing and stateful phases (the stateful one follows the document's
``links`` from a created run or workspace to the operations on its tokens)
and checks every answer (no 5xx, documented statuses and bodies, valid
requests accepted, invalid ones refused, ``Allow`` on a 405). The
exceptions it allows are in ``schemathesis.toml``, each with its reason."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import pytest
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[3]
SCHEMATHESIS = Path(sys.executable).with_name("schemathesis")

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@pytest.fixture
def served(app_factory):
    app = app_factory()
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=30)


def test_schemathesis_finds_no_failure(served, tmp_path):
    command = [
        str(SCHEMATHESIS),
        "--config-file",  # the exceptions allowed, each with its reason
        str(ROOT / "schemathesis.toml"),
        "run",
        f"{served}/api/v1/openapi.json",
        "--checks",
        "all",
        "--phases",
        "examples,coverage,fuzzing,stateful",
        "--max-examples",
        "25",
        "--seed",
        "60",
        "--generation-deterministic",  # and no database of earlier examples
        "--workers",
        "1",
        "--request-timeout",
        "60",
        "--no-color",
        "--report-dir",
        str(tmp_path / "report"),
    ]
    done = subprocess.run(
        command,
        cwd=tmp_path,  # its cache of earlier failures: this test's own
        capture_output=True,
        text=True,
        timeout=840,
        check=False,
    )
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-8000:]
    assert "0 failures" in said or " passed" in said, said[-2000:]
